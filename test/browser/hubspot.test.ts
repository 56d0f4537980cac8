/**
 * The HubSpot inbox page (CONTRACT §18) in Chromium, against a fake HubSpot's authorize page and
 * APIs (test/fixtures/fake-hubspot.ts): an owner presses Connect HubSpot, grants access on
 * HubSpot's page, chooses the inbox (`Inbox`, `Connect`) and sees "Connected" with the inbox; a new
 * message is then published and counted; the callback's state is refused when replayed or wrong;
 * `Disconnect HubSpot` turns the channel account off in HubSpot and the page says so. In English on
 * a desktop and in Japanese on a 390 px phone, with no CSP violation.
 * Set CHATLOG_SCREENSHOTS=<dir> to keep what the browser showed, as PNG files.
 */
// sqlite-only: what the browser sees does not depend on the store; the connection's storage and
// publishing run on both stores in test/contract/hubspot-publish.test.ts and hubspot-reply.test.ts.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CHANNEL_ID, CLIENT, type FakeHubspot, startFakeHubspot } from '../fixtures/fake-hubspot.js';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';
import { fitsWidth, newPage, screenshot, signIn } from './session.js';

const PASSWORD = 'hubspot browser password';
const EMAIL = 'hubspot@example.com';
const HUB = '7791801';
const JA_HUB = '7791802';
let server: TestServer;
let hubspot: FakeHubspot;
let browser: Browser;
const cspViolations: string[] = [];

before(async () => {
  hubspot = await startFakeHubspot();
  server = await startTestServer({
    hubspotApiBaseUrl: hubspot.base,
    hubspotAppBaseUrl: hubspot.base,
    hubspotClientId: CLIENT.clientId,
    hubspotClientSecret: CLIENT.clientSecret,
  });
  await server.store.hubspot.setChannelId(CHANNEL_ID);
  for (const hubId of [HUB, JA_HUB]) {
    await server.hubs.add(hubId, { timeZone: 'Asia/Tokyo' });
    await storeMessages(server.store, hubId, [
      message({
        lineId: 'U7791801aaaaaaaaaaaaaaaaaaaaaaaaa',
        name: '山田花子',
        msg: 'こんにちは',
        createdAt: Date.now() - 60_000,
      }),
    ]);
  }
  await server.accounts.add(EMAIL, [HUB, JA_HUB], PASSWORD);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await hubspot?.close();
});

const hubspotPage = (hubId: string) => `${server.url}/account/hubs/${hubId}/hubspot`;

/** Connect HubSpot, HubSpot's page, back with the inbox choice: the callback URL HubSpot sent to. */
async function connect(
  page: Page,
  words: { connect: string; inbox: string; connectButton: string },
  inbox: string,
) {
  await page.getByRole('button', { name: words.connect, exact: true }).click();
  await page.waitForURL(`${hubspot.base}/oauth/authorize?**`);
  await screenshot(page, 'hubspot-authorize');
  await page.getByRole('link', { name: 'Grant access' }).click();
  await page.waitForURL('**/account/hubspot/callback?**');
  const callback = page.url();
  await page.getByLabel(words.inbox, { exact: true }).selectOption({ label: inbox });
  return callback;
}

test('en-US, 1280 px: connect, choose the inbox, see it connected and publishing; a replayed or wrong state is refused; disconnect', async () => {
  const page = await newPage(browser, 'en-US', { width: 1280, height: 900 }, cspViolations);
  await signIn(page, server.url, EMAIL, PASSWORD);
  await page.getByRole('link', { name: 'HubSpot inbox' }).first().click();
  await page.getByText('Not connected.').waitFor();
  await screenshot(page, 'hubspot-en-not-connected');
  const callback = await connect(
    page,
    { connect: 'Connect HubSpot', inbox: 'Inbox', connectButton: 'Connect' },
    'Support',
  );
  await screenshot(page, 'hubspot-en-choose-inbox');
  await page.getByRole('button', { name: 'Connect', exact: true }).click();
  await page.getByText('Connected. New messages now appear in the inbox.').waitFor();
  const details = await page.locator('dl.api').innerText();
  assert.match(details, /Inbox\s+Support/);
  assert.match(details, /HubSpot account\s+62515/);
  assert.deepEqual(
    hubspot.accountsMade.map((a) => [a.inboxId, a.authorized]),
    [['147959634', true]],
    'a channel account in the chosen inbox',
  );
  // A message stored now is published, and the page counts it.
  await storeMessages(server.store, HUB, [
    message({ lineId: 'U7791801aaaaaaaaaaaaaaaaaaaaaaaaa', msg: '予約できますか', createdAt: Date.now() }),
  ]);
  const deadline = Date.now() + 15_000;
  while (!hubspot.published.some((p) => p.text === '予約できますか')) {
    assert.ok(Date.now() < deadline, 'published');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await page.reload();
  assert.match(await page.locator('dl.api').innerText(), /Messages published\s+1\b/);
  assert.match(await page.locator('dl.api').innerText(), /Messages waiting\s+0\b/);
  await screenshot(page, 'hubspot-en-connected');
  // The callback again (a replayed state), and one with a state chatlog never gave: refused.
  const replayed = await page.goto(callback);
  assert.equal(replayed?.status(), 400);
  assert.match(await page.locator('p.error').innerText(), /used already/);
  const forged = await page.goto(`${server.url}/account/hubspot/callback?code=x&state=${'A'.repeat(43)}`);
  assert.equal(forged?.status(), 400);
  await page.goto(hubspotPage(HUB));
  await page.getByRole('button', { name: 'Disconnect HubSpot' }).click();
  await page.getByText('Disconnected: nothing more is published.').waitFor();
  assert.equal(hubspot.accountsMade[0]?.authorized, false, 'the channel account is turned off in HubSpot');
  await screenshot(page, 'hubspot-en-disconnected');
  assert.deepEqual(hubspot.violations, []);
  assert.deepEqual(cspViolations, []);
  const html = await page.content();
  assert.ok(
    !/fake-access|fake-refresh|fake-hubspot-client-secret/.test(html),
    'no token or secret on the page',
  );
});

test('ja-JP, 390 px: the page and the inbox choice in Japanese, no sideways scroll; declining on HubSpot changes nothing', async () => {
  const page = await newPage(browser, 'ja-JP', { width: 390, height: 844 }, cspViolations);
  await signIn(page, server.url, EMAIL, PASSWORD);
  await page.goto(hubspotPage(JA_HUB));
  await page.getByText('つながっていません。').waitFor();
  assert.ok(await fitsWidth(page, 390), 'no sideways scroll');
  await page.getByRole('button', { name: 'HubSpotにつなぐ' }).click();
  await page.getByRole('link', { name: 'Cancel' }).click();
  await page.getByText('HubSpotによると許可されませんでした。何も変わっていません。').waitFor();
  await page.goto(hubspotPage(JA_HUB));
  await connect(
    page,
    { connect: 'HubSpotにつなぐ', inbox: '受信トレイ', connectButton: 'つなぐ' },
    'LINE 窓口 (ヘルプデスク)',
  );
  assert.ok(await fitsWidth(page, 390), 'no sideways scroll');
  await screenshot(page, 'hubspot-ja-choose-inbox');
  await page.getByRole('button', { name: 'つなぐ', exact: true }).click();
  await page.getByText('つながりました。新しいメッセージは受信トレイに表示されます。').waitFor();
  assert.match(await page.locator('dl.api').innerText(), /受信トレイ\s+LINE 窓口/);
  assert.ok(await fitsWidth(page, 390), 'no sideways scroll');
  await screenshot(page, 'hubspot-ja-connected');
  assert.deepEqual(cspViolations, []);
});
