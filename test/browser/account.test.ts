/**
 * The account screen in a real browser: Debian's Chromium driven by playwright-core. Sign in, issue
 * a key, copy it with the icon and read it back from the clipboard, call the API with it, show and
 * hide it, revoke it; the same with the keyboard only; the Japanese page; a phone-sized screen.
 */
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const PASSWORD = 'browser test password';
const EMAIL = 'owner@example.com';
const HUB = '6662225';

let server: TestServer;
let browser: Browser;

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.hubs.add('42', {});
  await server.accounts.add(EMAIL, [HUB, '42'], PASSWORD);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function newContext(
  locale = 'en-US',
  viewport = { width: 1280, height: 900 },
): Promise<BrowserContext> {
  const context = await browser.newContext({ locale, viewport });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  return context;
}

const apiStatus = async (key: string, hubId = HUB) =>
  (await rawRequest(server.url, 'GET', `/api/line/${hubId}/messages?apikey=${encodeURIComponent(key)}`))
    .status;
const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

/** Presses Tab until the focused element has this accessible name (keyboard only, no clicks). */
async function tabTo(page: Page, name: string | RegExp): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el) return '';
      const labelled = el.getAttribute('aria-label');
      if (labelled) return labelled;
      const id = el.getAttribute('id');
      const label = id ? document.querySelector(`label[for="${id}"]`)?.textContent : undefined;
      return (label ?? el.textContent ?? '').trim();
    });
    if (typeof name === 'string' ? focused === name : name.test(focused)) return;
  }
  throw new Error(`Tab never reached ${name}`);
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${server.url}/account`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
}

/**
 * Text whose contrast with its background is under 4.5:1 (WCAG AA), as "text: ratio". Plain
 * JavaScript in a string: the test loader would otherwise add helpers the page does not have.
 */
const LOW_CONTRAST_TEXT = `(() => {
  const rgb = (css) => (css.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r = 0, g = 0, b = 0]) => {
    const [R, G, B] = [r, g, b].map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const color = rgb(getComputedStyle(node).backgroundColor);
      if (color.length < 4 || color[3] > 0.9) return color;
    }
    return [255, 255, 255];
  };
  const low = [];
  for (const el of document.querySelectorAll('body *')) {
    const text = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join('');
    if (!text || el.offsetParent === null) continue;
    const a = luminance(rgb(getComputedStyle(el).color));
    const b = luminance(background(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) low.push(text.slice(0, 30) + ': ' + ratio.toFixed(2));
  }
  return low;
})()`;

describe('the account screen in Chromium', () => {
  test('sign in, issue, copy, call the API, show and hide, revoke: and the key never in the HTML', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const answers: string[] = [];
    page.on('response', async (response) => {
      if (!response.url().includes('/reveal')) answers.push(await response.text().catch(() => ''));
    });
    await signIn(page);

    const hub = page.getByRole('region', { name: `Hub ${HUB}` });
    await hub.getByRole('button', { name: 'Issue key' }).click();
    await hub.getByLabel('Label').fill('HubSpot sync');
    await hub.getByLabel('Scope').selectOption('read');
    await hub.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Key “HubSpot sync” created').waitFor();

    assert.deepEqual(
      await page.evaluate<string[]>(LOW_CONTRAST_TEXT),
      [],
      'every text has a contrast of at least 4.5:1',
    );
    const row = page.getByRole('row', { name: /HubSpot sync/ });
    const keyCell = row.locator('.key');
    assert.match((await keyCell.textContent()) ?? '', /^chl_[0-9A-Za-z]{4}•{12}$/);
    await row.getByRole('button', { name: 'Copy key' }).click();
    await row.getByText('Copied').waitFor();
    const key = await clipboard(page);
    assert.match(key, /^chl_[0-9A-Za-z]{28}$/);
    assert.equal(await apiStatus(key), 200);
    assert.ok(!(await page.content()).includes(key), 'the copied key is not in the page');

    await row.getByRole('button', { name: 'Show key' }).click();
    await row.getByRole('button', { name: 'Hide key' }).waitFor();
    assert.equal(await keyCell.textContent(), key);
    await row.getByRole('button', { name: 'Hide key' }).click();
    assert.match((await keyCell.textContent()) ?? '', /^chl_[0-9A-Za-z]{4}•{12}$/);

    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Key “HubSpot sync” revoked.').waitFor();
    assert.equal(await apiStatus(key), 401);
    assert.equal(
      await row.getByRole('button', { name: 'Copy key' }).count(),
      0,
      'a revoked key cannot be copied',
    );

    for (const answer of answers)
      assert.ok(!answer.includes(key), 'no answer but the reveal carries the key');
    await context.close();
  });

  test('the same with the keyboard only', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/account`);
    await tabTo(page, 'Email');
    await page.keyboard.type(EMAIL);
    await tabTo(page, 'Password');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    await tabTo(page, 'Issue key'); // the first hub's: 42
    await page.keyboard.press('Enter'); // opens the form and moves to Label
    await page.keyboard.type('Keyboard only');
    await tabTo(page, 'Create key');
    await page.keyboard.press('Enter');
    await page.getByText('Key “Keyboard only” created').waitFor();

    // The new key's copy icon has the focus.
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Copy key');
    await page.keyboard.press('Enter');
    const row = page.getByRole('row', { name: /Keyboard only/ });
    await row.getByText('Copied').waitFor();
    const key = await clipboard(page);
    assert.equal(await apiStatus(key, '42'), 200);

    await tabTo(page, 'Revoke');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await tabTo(page, 'Revoke key');
    await page.keyboard.press('Enter');
    await page.getByText('Key “Keyboard only” revoked.').waitFor();
    assert.equal(await apiStatus(key, '42'), 401);
    await context.close();
  });

  test('Japanese from the browser language, English by the switch, and a phone-sized screen', async () => {
    const context = await newContext('ja-JP', { width: 390, height: 844 });
    const page = await context.newPage();
    await page.goto(`${server.url}/account`);
    assert.equal(await page.getAttribute('html', 'lang'), 'ja');
    await page.getByLabel('メールアドレス').fill(EMAIL);
    await page.getByLabel('パスワード').fill(PASSWORD);
    await page.getByRole('button', { name: 'サインイン' }).click();
    await page.getByRole('heading', { name: 'API キー' }).waitFor();
    const hub = page.getByRole('region', { name: `ハブ ${HUB}` });
    await hub.getByRole('button', { name: 'キーを発行' }).click();
    await hub.getByLabel('ラベル').fill('電話から');
    await hub.getByRole('button', { name: 'キーを作成' }).click();
    await page.getByText('キー「電話から」を作成しました').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page fits a phone's width (overflows by ${overflow}px)`);

    await page.getByRole('link', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    await context.close();
  });
});
