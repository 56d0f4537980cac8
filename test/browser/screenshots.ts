/**
 * `npm run screenshots`: the signed-in account screen in English and Japanese, written to
 * docs/account-en.png and docs/account-ja.png (shown in the README). Same Chromium as the tests.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const DOCS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs');
const PASSWORD = 'screenshot password';

const server = await startTestServer({ publicUrl: 'https://chatlog.example.com' });
const browser = await launchChromium();
try {
  await server.hubs.add('6662225', { timeZone: 'Asia/Tokyo' });
  await server.accounts.add('owner@example.com', ['6662225'], PASSWORD);
  const old = await server.keys.issue('6662225', 'read', 'Old integration');
  await server.keys.revoke(old.summary.id);
  const used = await server.keys.issue('6662225', 'read', 'HubSpot sync');
  await server.keys.verify(used.key);
  await server.keys.flushLastUsed();
  await server.keys.issue('6662225', 'ingest', 'Sender component');
  for (const [locale, language] of [
    ['en-US', 'en'],
    ['ja-JP', 'ja'],
  ] as const) {
    const context = await browser.newContext({ locale, viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/account`);
    await page.locator('#email').fill('owner@example.com');
    await page.locator('#password').fill(PASSWORD);
    await page.locator('form[action="/account/sign-in"] button').click();
    await page.locator('table').waitFor();
    const file = path.join(DOCS, `account-${language}.png`);
    await page.screenshot({ path: file, fullPage: true });
    process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
