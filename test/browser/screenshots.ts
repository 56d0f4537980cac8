/**
 * `npm run screenshots`: the signed-in account screen in English and Japanese, on a desktop
 * (docs/account-en.png, docs/account-ja.png, shown in the README) and on a 390 px phone
 * (docs/account-en-phone.png, docs/account-ja-phone.png, the copy icon's tooltip showing). Same
 * Chromium as the tests. The hub (Asia/Tokyo) holds messages, so the example curl names their week.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { message, startTestServer, storeMessages } from '../helpers.js';
import { launchChromium } from './chromium.js';

const DOCS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs');
const PASSWORD = 'screenshot password';
const HUB = '6662225';

const server = await startTestServer({ publicUrl: 'https://chatlog.example.com' });
const browser = await launchChromium();
try {
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.accounts.add('owner@example.com', [HUB], PASSWORD);
  await storeMessages(server.store, HUB, [
    message({ createdAt: Date.parse('2026-11-18T02:15:00Z'), msg: 'こんにちは' }),
    message({ createdAt: Date.parse('2026-11-20T23:40:00Z'), msg: '予約の変更をお願いします' }),
  ]);
  const old = await server.keys.issue(HUB, 'read', 'Old integration');
  await server.keys.revoke(old.summary.id);
  const used = await server.keys.issue(HUB, 'read', 'HubSpot sync');
  await server.keys.verify(used.key);
  await server.keys.flushLastUsed();
  await server.keys.issue(HUB, 'ingest', 'Sender component');
  const shots = [
    { locale: 'en-US', name: 'account-en', width: 1100, height: 760 },
    { locale: 'ja-JP', name: 'account-ja', width: 1100, height: 760 },
    { locale: 'en-US', name: 'account-en-phone', width: 390, height: 844 },
    { locale: 'ja-JP', name: 'account-ja-phone', width: 390, height: 844 },
  ];
  for (const { locale, name, width, height } of shots) {
    const context = await browser.newContext({ locale, viewport: { width, height } });
    const page = await context.newPage();
    await page.goto(`${server.url}/account`);
    await page.locator('#email').fill('owner@example.com');
    await page.locator('#password').fill(PASSWORD);
    await page.locator('form[action="/account/sign-in"] button').click();
    await page.locator('table').waitFor();
    if (width < 600) {
      // The tooltip as a keyboard user sees it: Tab onto the first copy icon.
      const copy = page.locator('button[data-action="copy"]').first();
      for (let i = 0; i < 40 && !(await copy.evaluate((el) => el === document.activeElement)); i++) {
        await page.keyboard.press('Tab');
      }
    }
    const file = path.join(DOCS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
