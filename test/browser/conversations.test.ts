/**
 * The account screen's conversations (CONTRACT §14) in Chromium: sign in, open Conversations,
 * search 予約, open a result and see the message marked and in view, the friend and `You` on two
 * sides with day separators in Tokyo, the kept image loaded, sticker and location cards, Download
 * CSV (its BOM and rows), in English on a desktop and in Japanese on a 390 px phone; the same walk
 * with the keyboard only; Erase contact confirmed in the dialog. No CSP violation on any page.
 * Set CHATLOG_SCREENSHOTS=<dir> to keep what the browser showed, as PNG files.
 */
// sqlite-only: what the browser sees does not depend on the store; the same pages' rules and answers
// run on both stores in test/browser/conversations-access.test.ts.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  CONVERSATION_TOKEN,
  FRIEND_NAME,
  IMAGE_ID,
  seedConversations,
  startFakeLine,
} from '../fixtures/conversations.js';
import { readCsv } from '../fixtures/csv.js';
import type { FakeLine } from '../fixtures/fake-line.js';
import { OTHER_USER, USER } from '../fixtures/line.js';
import { startTestServer, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const PASSWORD = 'conversations browser password';
const EMAIL = 'talks@example.com';
const HUB = '7790101';
const ERASED_HUB = '7790102';
const SCREENSHOTS = process.env.CHATLOG_SCREENSHOTS;

let server: TestServer;
let line: FakeLine;
let browser: Browser;
const cspViolations: string[] = [];

before(async () => {
  line = await startFakeLine({ token: CONVERSATION_TOKEN });
  server = await startTestServer({ lineApiDataBaseUrl: line.base });
  await seedConversations(server, HUB, line);
  await seedConversations(server, ERASED_HUB, line);
  await server.accounts.add(EMAIL, [HUB, ERASED_HUB], PASSWORD);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await line?.close();
});

async function newPage(locale: string, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ locale, viewport, acceptDownloads: true });
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

const pageWidth = (page: Page) => page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);

/** Whether the element is inside the window (scrolled to). */
const inView = (page: Page, selector: string) =>
  page.locator(selector).evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  });

const WORDS = [
  {
    locale: 'en-US',
    viewport: { width: 1280, height: 900 },
    hub: `Hub ${HUB}`,
    conversations: 'Conversations',
    heading: `Conversations of hub ${HUB}`,
    searchMessages: 'Search messages',
    search: 'Search',
    results: 'Messages with “予約”',
    you: 'You',
    days: ['Friday, 20 November 2026', 'Saturday, 21 November 2026'],
    sticker: 'Sticker',
    location: 'Location',
    downloadCsv: 'Download CSV',
    more: 'More contacts',
  },
  {
    locale: 'ja-JP',
    viewport: { width: 390, height: 844 },
    hub: `ハブ ${HUB}`,
    conversations: '会話',
    heading: `ハブ ${HUB} の会話`,
    searchMessages: 'メッセージを検索',
    search: '検索',
    results: '「予約」を含むメッセージ',
    you: 'あなた',
    days: ['2026年11月20日(金)', '2026年11月21日(土)'],
    sticker: 'スタンプ',
    location: '位置情報',
    downloadCsv: 'CSV をダウンロード',
    more: 'さらに表示',
  },
] as const;

describe('the conversations of the account screen in Chromium', () => {
  for (const words of WORDS) {
    test(`${words.locale}, ${words.viewport.width} px: search 予約, open the result, read the conversation, download its CSV`, async () => {
      const shot = `conversations-${words.locale.slice(0, 2)}-${words.viewport.width < 600 ? 'phone' : 'desktop'}`;
      const page = await newPage(words.locale, words.viewport);
      await signIn(page);
      await page
        .getByRole('region', { name: words.hub })
        .getByRole('link', { name: words.conversations, exact: true })
        .click();
      await page.getByRole('heading', { name: words.heading, level: 1 }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), words.locale.slice(0, 2));

      // The contacts: newest activity first, each a link named by its name or its LINE user id.
      const contacts = page.getByRole('table').getByRole('rowheader');
      assert.equal(await contacts.first().innerText(), FRIEND_NAME);
      assert.equal(await contacts.nth(1).innerText(), OTHER_USER);
      assert.equal(await contacts.count(), 50, 'a page of 50');
      assert.ok(
        (await pageWidth(page)) <= words.viewport.width,
        `the page is ${await pageWidth(page)} px wide`,
      );
      await screenshot(page, `${shot}-list`);
      await page.getByRole('link', { name: words.more }).click();
      await page.getByRole('link', { name: 'Customer 1', exact: true }).waitFor();

      // Search 予約: three results, each with the term marked.
      await page.getByLabel(words.searchMessages).fill('予約');
      await page.getByRole('button', { name: words.search, exact: true }).click();
      await page.getByRole('heading', { name: words.results }).waitFor();
      const results = page.locator('li.result');
      assert.equal(await results.count(), 3);
      assert.deepEqual(await page.locator('li.result mark').allInnerTexts(), ['予約', '予約', '予約']);
      await screenshot(page, `${shot}-search`);

      // The oldest result (the friend's question) opens its conversation around it, marked and in view.
      await results.last().getByRole('link', { name: FRIEND_NAME }).click();
      const target = page.locator('li.message[aria-current="true"]');
      await target.waitFor();
      assert.match(await target.innerText(), /来週の予約をお願いできますか/);
      assert.equal(await target.locator('mark').innerText(), '予約');
      assert.ok(
        await inView(page, 'li.message[aria-current="true"]'),
        `the message is scrolled into view: ${JSON.stringify(await target.boundingBox())} ${await page.evaluate(() => [window.scrollY, window.innerHeight, location.hash])}`,
      );

      // Two sides, day separators in Tokyo, the image loaded, the sticker and location cards.
      assert.deepEqual(await page.locator('h2.day').allInnerTexts(), [...words.days]);
      const you = page.locator('li.message.you');
      assert.equal(await you.count(), 2);
      assert.equal(await you.first().locator('.sender').innerText(), words.you);
      const sides = await page.locator('li.message').evaluateAll((items) =>
        items.map((item) => {
          const box = item.getBoundingClientRect();
          return {
            mine: item.classList.contains('you'),
            left: Math.round(box.left),
            right: Math.round(box.right),
          };
        }),
      );
      const mainBox = await page.locator('section.conversation').boundingBox();
      assert.ok(mainBox);
      for (const side of sides) {
        if (side.mine) assert.ok(Math.abs(side.right - (mainBox.x + mainBox.width)) < 2, 'You on the right');
        else assert.ok(Math.abs(side.left - mainBox.x) < 2, 'the friend on the left');
      }
      const image = page.locator(`img[src$="/content/${IMAGE_ID}"]`);
      await image.scrollIntoViewIfNeeded();
      await page.waitForFunction(
        (id) =>
          (document.querySelector(`img[src$="/content/${id}"]`) as HTMLImageElement | null)?.naturalWidth ===
          320,
        IMAGE_ID,
      );
      await page.locator('.card.sticker').getByText(words.sticker).waitFor();
      await page.locator('.card.location').getByText('渋谷店').waitFor();
      assert.equal(
        await page.locator('.card.location a').getAttribute('href'),
        'https://www.openstreetmap.org/?mlat=35.65858&mlon=139.70164#map=17/35.65858/139.70164',
      );
      assert.ok(
        (await pageWidth(page)) <= words.viewport.width,
        `the page is ${await pageWidth(page)} px wide`,
      );
      await screenshot(page, `${shot}-conversation`);

      // Download CSV: UTF-8 with a BOM, one row per message of the conversation.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: words.downloadCsv }).click(),
      ]);
      const bytes = fs.readFileSync((await download.path()) ?? '');
      assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
      assert.equal(download.suggestedFilename(), `chatlog-${HUB}-${USER}.csv`);
      const [header, ...rows] = readCsv(bytes.toString('utf8').slice(1));
      assert.equal(header?.[0], 'createdAt (hub time zone)');
      assert.equal(rows.length, 7);
      assert.deepEqual(rows[0]?.slice(0, 2), ['2026-11-20 10:05:00', '2026-11-20T01:05:00.000Z']);
      assert.equal(rows[0]?.[7], 'こんにちは。来週の予約をお願いできますか?');
      assert.equal(rows[5]?.[5], 'You');
      await page.context().close();
    });
  }

  test('keyboard only: Conversations, search, a result, the conversation', async () => {
    const page = await newPage('en-US', { width: 1280, height: 900 });
    await signIn(page);
    await page.goto(`${server.url}/account/hubs/${HUB}/conversations`);
    /** Tab until the focused element satisfies `is` (at most 60 presses). */
    const tabTo = async (is: (element: Element) => boolean) => {
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(`(${is.toString()})(document.activeElement)`)) return;
      }
      assert.fail('never reached with Tab');
    };
    await tabTo((element) => element.id === 'q');
    await page.keyboard.type('予約 承り');
    await page.keyboard.press('Enter');
    await page.locator('li.result').first().waitFor();
    assert.equal(await page.locator('li.result').count(), 1, 'both words in one message');
    await tabTo((element) => element.closest('li.result') !== null && element.tagName === 'A');
    await page.keyboard.press('Enter');
    const target = page.locator('li.message[aria-current="true"]');
    await target.waitFor();
    assert.deepEqual(await target.locator('mark').allInnerTexts(), ['予約', '承り']);
    await page.context().close();
  });

  test('Erase contact asks in a dialog, then the contact and its messages are gone', async () => {
    const page = await newPage('en-US', { width: 1280, height: 900 });
    await signIn(page);
    await page.goto(`${server.url}/account/hubs/${ERASED_HUB}/conversations/${USER}`);
    await page.getByRole('button', { name: 'Erase contact' }).click();
    const dialog = page.getByRole('dialog', { name: `Erase ${FRIEND_NAME}?` });
    await dialog.waitFor();
    await screenshot(page, 'conversations-erase-dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.ok(await server.store.contacts.get(ERASED_HUB, USER), 'Cancel erases nothing');
    await page.getByRole('button', { name: 'Erase contact' }).click();
    await dialog.getByRole('button', { name: 'Erase', exact: true }).click();
    await page.getByText('The contact was erased, with 7 messages.').waitFor();
    assert.equal(await page.getByRole('link', { name: FRIEND_NAME }).count(), 0);
    assert.equal(await server.store.contacts.get(ERASED_HUB, USER), undefined);
    await page.context().close();
  });

  test('no page broke the Content Security Policy', () => {
    assert.deepEqual(cspViolations, []);
  });
});
