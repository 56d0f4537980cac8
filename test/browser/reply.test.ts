/**
 * The conversation's reply box (CONTRACT §16) in Chromium: an owner writes a Japanese reply with a
 * line break and an emoji, presses Send, and sees it in the conversation as You once the fake LINE
 * took it (the page updates itself while it is on its way); a send LINE refuses shows LINE's reason;
 * the box is absent for a hub without a channel access token, and a signed-out visitor gets the
 * sign-in page. In English on a desktop and in Japanese on a 390 px phone, with no CSP violation.
 * Set CHATLOG_SCREENSHOTS=<dir> to keep what the browser showed, as PNG files.
 */
// sqlite-only: what the browser sees does not depend on the store; the send API's rules and answers
// run on both stores in test/contract/sends.test.ts.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type FakeLinePush, startFakeLinePush } from '../fixtures/fake-line-push.js';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const PASSWORD = 'reply browser password';
const EMAIL = 'reply@example.com';
const HUB = '7791601';
const NO_TOKEN_HUB = '7791602';
const FRIEND = 'U7791601aaaaaaaaaaaaaaaaaaaaaaaaa';
const SCREENSHOTS = process.env.CHATLOG_SCREENSHOTS;

let server: TestServer;
let line: FakeLinePush;
let browser: Browser;
const cspViolations: string[] = [];

before(async () => {
  line = await startFakeLinePush();
  server = await startTestServer({ lineApiBaseUrl: line.base });
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo', lineChannelAccessToken: line.token });
  await server.hubs.add(NO_TOKEN_HUB, { timeZone: 'Asia/Tokyo' });
  for (const hubId of [HUB, NO_TOKEN_HUB]) {
    await storeMessages(server.store, hubId, [
      message({
        lineId: FRIEND,
        name: '山田花子',
        msg: '明日の予約はできますか?',
        createdAt: Date.now() - 3_600_000,
      }),
    ]);
  }
  await server.accounts.add(EMAIL, [HUB, NO_TOKEN_HUB], PASSWORD);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await line?.close();
});

async function newPage(locale: string, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ locale, viewport });
  const page = await context.newPage();
  page.on('console', (entry) => {
    if (/Content Security Policy/i.test(entry.text())) cspViolations.push(entry.text());
  });
  return page;
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${server.url}/account`);
  await page.getByLabel('Email').or(page.getByLabel('メールアドレス')).fill(EMAIL);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('form[action="/account/sign-in"] button').click();
  await page.locator('form[action="/account/sign-out"]').waitFor();
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

const conversation = (hubId: string) => `${server.url}/account/hubs/${hubId}/conversations/${FRIEND}`;

for (const [locale, viewport, words] of [
  ['en-US', { width: 1280, height: 900 }, { reply: 'Reply', send: 'Send', you: 'You', failed: 'Not sent' }],
  [
    'ja-JP',
    { width: 390, height: 844 },
    { reply: '返信', send: '送信', you: 'あなた', failed: '送信できませんでした' },
  ],
] as const) {
  test(`${locale}, ${viewport.width} px: a reply with a line break and an emoji is sent, and shows as You; LINE's refusal shows its reason`, async () => {
    const page = await newPage(locale, viewport);
    await signIn(page);
    await page.goto(conversation(HUB));
    const text = `ご来店ありがとうございます(${locale})\nまたのお越しをお待ちしています 🌸`;
    await page.getByLabel(words.reply, { exact: true }).fill(text);
    await page.getByRole('button', { name: words.send, exact: true }).click();
    // On its way, then sent: the page updates itself until LINE took it.
    // This locale's reply (the other locale's test replies in the same conversation).
    const mine = page
      .locator('li.message.you')
      .filter({ hasText: `ご来店ありがとうございます(${locale})` })
      .filter({ hasText: 'またのお越しをお待ちしています 🌸' });
    await mine.waitFor({ timeout: 15_000 });
    assert.equal(await mine.count(), 1);
    assert.equal((await mine.locator('.sender').textContent())?.trim(), words.you);
    assert.equal(
      line.delivered.get(FRIEND)?.filter((m) => m.text === text).length,
      1,
      'LINE got it once, with its line break',
    );
    assert.equal(
      (await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0)) <= viewport.width,
      true,
      'no sideways scroll',
    );
    await screenshot(page, `reply-${locale}-sent`);

    line.misbehave.push({
      status: 400,
      message: 'The request body has 1 error(s)',
      details: [{ message: 'Invalid text', property: 'messages[0].text' }],
    });
    await page.getByLabel(words.reply, { exact: true }).fill('断られる返信');
    await page.getByRole('button', { name: words.send, exact: true }).click();
    const refusal = page.getByRole('alert').filter({ hasText: words.failed });
    await refusal.waitFor({ timeout: 15_000 });
    assert.match(
      (await refusal.textContent()) ?? '',
      /LINE answered 400: The request body has 1 error\(s\); messages\[0\]\.text: Invalid text/,
    );
    assert.equal(await page.locator('li.message.you').filter({ hasText: '断られる返信' }).count(), 0);
    await screenshot(page, `reply-${locale}-refused`);
    assert.deepEqual(line.violations, []);
    await page.context().close();
  });
}

test('no reply box for a hub without a channel access token; a signed-out visitor gets the sign-in page', async () => {
  const page = await newPage('en-US', { width: 1280, height: 900 });
  await signIn(page);
  await page.goto(conversation(NO_TOKEN_HUB));
  await page.locator('h1').waitFor();
  assert.equal(await page.locator('section.reply').count(), 0);
  assert.equal(await page.getByLabel('Reply', { exact: true }).count(), 0);
  await page.goto(conversation(HUB));
  assert.equal(await page.locator('section.reply').count(), 1);
  await page.context().close();

  const visitor = await newPage('en-US', { width: 1280, height: 900 });
  await visitor.goto(conversation(HUB));
  assert.equal(await visitor.locator('section.reply').count(), 0);
  assert.equal(await visitor.locator('form[action="/account/sign-in"]').count(), 1);
  // A post without a session and its CSRF token sends nothing.
  const before = line.pushes.length;
  const res = await fetch(`${conversation(HUB)}/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: 'text=hello&csrf=forged',
    redirect: 'manual',
  });
  // Refused (to the sign-in page, or as forbidden), never taken as a send.
  assert.ok([303, 403].includes(res.status), `answered ${res.status}`);
  assert.doesNotMatch(res.headers.get('location') ?? '', /send=/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(line.pushes.length, before);
  await visitor.context().close();
  assert.deepEqual(cspViolations, []);
});
