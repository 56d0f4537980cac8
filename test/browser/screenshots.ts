/**
 * `npm run screenshots`: the signed-in account screen in English and Japanese, on a desktop
 * (docs/account-en.png, docs/account-ja.png, shown in the README) and on a 390 px phone
 * (docs/account-en-phone.png, docs/account-ja-phone.png, the copy icon's tooltip showing), and a
 * conversation opened from a search for 予約 (docs/conversation-en.png on a desktop,
 * docs/conversation-ja-phone.png on a phone). Same Chromium as the tests. The hub (Asia/Tokyo)
 * holds the conversations of test/fixtures/conversations.ts, so the example curl names their week.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONVERSATION_TOKEN, seedConversations, startFakeLine } from '../fixtures/conversations.js';
import { startTestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const DOCS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs');
const PASSWORD = 'screenshot password';
const HUB = '6662225';

const line = await startFakeLine({ token: CONVERSATION_TOKEN });
const server = await startTestServer({
  publicUrl: 'https://chatlog.example.com',
  lineApiDataBaseUrl: line.base,
});
const browser = await launchChromium();
try {
  await seedConversations(server, HUB, line);
  await server.accounts.add('owner@example.com', [HUB], PASSWORD);
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
    if (name === 'account-en' || name === 'account-ja-phone') {
      // Conversations, a search for 予約, its oldest result: the conversation around it.
      await page.goto(`${server.url}/account/hubs/${HUB}/conversations?q=${encodeURIComponent('予約')}`);
      await page.locator('li.result a').last().click();
      await page.locator('li.message[aria-current="true"]').waitFor();
      await page.evaluate(() => window.scrollTo(0, 0));
      const conversation = path.join(DOCS, `${name.replace('account', 'conversation')}.png`);
      await page.screenshot({ path: conversation, fullPage: true });
      process.stderr.write(`wrote ${path.relative(process.cwd(), conversation)}\n`);
    }
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
  await line.close();
}
