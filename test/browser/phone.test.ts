/**
 * The account screen and /docs on a 390 px phone, in English and Japanese (issue 42, item 9):
 * nothing is cut off at a card's edge or pushed off the screen. A long endpoint URL and a delivery
 * error wrap inside the endpoint's card, a conversation headed by a LINE user id wraps it, the key-scope selector shows its whole choice, /docs tables
 * become cards with every column on screen. Set CHATLOG_SCREENSHOTS=<dir> to keep what was shown.
 */
// sqlite-only: what the browser lays out does not depend on the store; the pages' rules run on both
// stores in webhooks-access.test.ts and conversations-access.test.ts.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const HUB = '7770301';
const EMAIL = 'phone@example.com';
const PASSWORD = 'phone layout password';
const SCREENSHOTS = process.env.CHATLOG_SCREENSHOTS;
/** A friend LINE gave no name for: the conversation's heading is its user id. */
const UNNAMED = 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3';
const LONG_URL = `http://127.0.0.1:9/${'a-long-path-segment-without-any-slash-'.repeat(4)}?token=${'x'.repeat(80)}`;

let server: TestServer;
let browser: Browser;

before(async () => {
  // Nothing listens on port 9: the delivery fails and says why, in words, on the card.
  server = await startTestServer({ webhookAllowPrivate: true, webhookTimeoutMs: 1000 });
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.accounts.add(EMAIL, [HUB], PASSWORD);
  const admin = (await server.keys.issue(HUB, 'admin', '')).key;
  const added = await rawRequest(
    server.url,
    'POST',
    `/api/line/${HUB}/webhooks`,
    { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    JSON.stringify({ url: LONG_URL }),
  );
  assert.equal(added.status, 201, added.body.toString());
  const { id } = JSON.parse(added.body.toString()) as { id: string };
  const ingest = (await server.keys.issue(HUB, 'ingest', '')).key;
  await rawRequest(
    server.url,
    'POST',
    `/ingest/line/${HUB}/messages`,
    { authorization: `Bearer ${ingest}`, 'content-type': 'application/json' },
    JSON.stringify([{ lineId: 'U1', msg: 'to a receiver that is not there' }]),
  );
  const deadline = Date.now() + 30_000;
  while (!(await server.store.webhooks.recent(id, 1))[0]?.lastError) {
    assert.ok(Date.now() < deadline, 'the delivery failed once');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await storeMessages(server.store, HUB, [message({ lineId: UNNAMED, createdAt: Date.now() })]);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** What sticks out: an element past the window's right edge, or text wider than its own box. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    for (const element of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      const box = element.getBoundingClientRect();
      // Visually hidden (a table's header on a phone, read by screen readers only).
      if (box.width <= 1 || element.closest('thead')) continue;
      const text = (element.textContent ?? '').trim().slice(0, 40);
      if (box.right > window.innerWidth + 0.5) found.push(`${element.tagName} past the edge: ${text}`);
      else if (element.scrollWidth > element.clientWidth + 1 && element.clientWidth > 0) {
        found.push(`${element.tagName} cut off (${element.scrollWidth} > ${element.clientWidth}): ${text}`);
      }
    }
    return found;
  });
}

/**
 * Japanese words the page's lines cut in two: a line that ends inside a run of katakana
 * (「ダウンロー|ド」). Lines are told apart by the tops of the characters' boxes.
 */
function splitWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const katakana = /[\u30a0-\u30ff]/;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      let previousTop: number | undefined;
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getBoundingClientRect();
        if (box.width === 0) {
          previousTop = undefined;
          continue;
        }
        const newLine = previousTop !== undefined && box.top > previousTop + box.height / 2;
        if (newLine && katakana.test(text[i] ?? '') && katakana.test(text[i - 1] ?? '')) {
          found.push(`${text.slice(Math.max(0, i - 6), i)}|${text.slice(i, i + 4)}`);
        }
        previousTop = box.top;
      }
    }
    return found;
  });
}

for (const locale of ['en-US', 'ja-JP'] as const) {
  test(`${locale}, 390 px: keys, webhooks and /docs fit the screen, nothing cut off`, async () => {
    const context = await browser.newContext({ locale, viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/account`);
    await page.locator('#email').fill(EMAIL);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('form[action="/account/sign-in"] button').click();
    await page.locator('form[action="/account/sign-out"]').waitFor();

    // The key form: the scope selector shows the whole of its longest choice.
    await page.getByRole('button', { name: locale === 'ja-JP' ? 'キーを発行' : 'Issue key' }).click();
    const select = page.locator('select[name="scope"]');
    for (const value of ['read', 'ingest']) {
      await select.selectOption(value);
      const fits = await select.evaluate((element: HTMLSelectElement) => {
        const probe = document.createElement('span');
        probe.style.font = getComputedStyle(element).font;
        probe.style.whiteSpace = 'nowrap';
        probe.textContent = element.selectedOptions[0]?.textContent ?? '';
        document.body.append(probe);
        const width = probe.getBoundingClientRect().width;
        probe.remove();
        // Its padding and the arrow take about 40 px.
        return { width, room: element.clientWidth - 40 };
      });
      assert.ok(fits.width <= fits.room, `the ${value} choice is cut off: ${JSON.stringify(fits)}`);
    }
    for (const [name, where] of [
      ['keys', '/account'],
      ['webhooks', `/account/hubs/${HUB}/webhooks`],
      ['conversation', `/account/hubs/${HUB}/conversations/${UNNAMED}`],
      ['docs', '/docs'],
    ] as const) {
      if (where !== '/account') await page.goto(`${server.url}${where}`);
      if (name === 'webhooks') await page.getByRole('heading', { name: LONG_URL, level: 2 }).waitFor();
      assert.deepEqual(await overflowing(page), [], `${name}: nothing sticks out`);
      // Lines break between phrases, never inside a word (issue 42, item 8).
      if (locale === 'ja-JP') assert.deepEqual(await splitWords(page), [], `${name}: no word cut in two`);
      assert.equal(await page.evaluate(() => document.scrollingElement?.scrollWidth), 390, name);
      if (SCREENSHOTS) {
        fs.mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({
          path: path.join(SCREENSHOTS, `phone-${locale.slice(0, 2)}-${name}.png`),
          fullPage: name !== 'docs',
        });
      }
    }
    // Words of the page's language only: a delivery's error, the audit page's keeping time.
    await page.goto(`${server.url}/account/hubs/${HUB}/webhooks`);
    const webhooksText = await page.locator('main').innerText();
    if (locale === 'ja-JP') {
      assert.match(webhooksText, /接続できませんでした\(ECONNREFUSED\)/);
      assert.doesNotMatch(webhooksText, /could not connect/);
    } else {
      assert.match(webhooksText, /could not connect \(ECONNREFUSED\)/);
    }
    await page.goto(`${server.url}/account/hubs/${HUB}/audit`);
    const auditText = await page.locator('main').innerText();
    assert.doesNotMatch(auditText, /CHATLOG_/, 'no variable name on the audit page');
    assert.match(auditText, locale === 'ja-JP' ? /400 日間/ : /400 days/);
    await page.goto(`${server.url}/docs`);
    // /docs: each field a card, its meaning on screen under the column's name.
    const meaning = page
      .locator(`table.fields td[data-label="${locale === 'ja-JP' ? '説明' : 'meaning'}"]`)
      .first();
    const box = await meaning.boundingBox();
    assert.ok(
      box && box.x >= 0 && box.x + box.width <= 390,
      `the meaning is on screen: ${JSON.stringify(box)}`,
    );
    await context.close();
  });
}
