/**
 * What the browser tests of the account screen share: a page in a locale and a viewport that records
 * CSP violations, signing in through the form, and screenshots kept when CHATLOG_SCREENSHOTS names
 * a folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';

export async function newPage(
  browser: Browser,
  locale: string,
  viewport: { width: number; height: number },
  cspViolations: string[],
  options: { acceptDownloads?: boolean } = {},
): Promise<Page> {
  const context = await browser.newContext({
    locale,
    viewport,
    acceptDownloads: options.acceptDownloads ?? false,
  });
  const page = await context.newPage();
  page.on('console', (entry) => {
    if (/Content Security Policy/i.test(entry.text())) cspViolations.push(entry.text());
  });
  return page;
}

export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/account`);
  await page.getByLabel('Email').or(page.getByLabel('メールアドレス')).fill(email);
  await page.locator('#password').fill(password);
  await page.locator('form[action="/account/sign-in"] button').click();
  await page.locator('form[action="/account/sign-out"]').waitFor();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.CHATLOG_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** True when the page needs no sideways scrolling at its viewport's width. */
export async function fitsWidth(page: Page, width: number): Promise<boolean> {
  return (await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0)) <= width;
}
