/**
 * The account screen's webhooks (CONTRACT §10, §14) in Chromium: from a hub's keys to its
 * Webhooks page, Add endpoint with a local receiver's URL, the secret shown once and copied (the
 * receiver verifies a real delivery with what the clipboard holds), the delivery listed after a
 * reload, Remove confirmed in the dialog, a refused URL answered with its reason; the Japanese page
 * and a 390 px phone. Set CHATLOG_SCREENSHOTS=<dir> to keep what the browser showed, as PNG files.
 */
// sqlite-only: what the browser sees does not depend on the store; the screen's access rules run on
// both stores in test/browser/webhooks-access.test.ts, and Chromium on PostgreSQL too would add 20 s.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type Receiver, startReceiver } from '../fixtures/receiver.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const PASSWORD = 'browser test password';
const EMAIL = 'hooks@example.com';
const HUB = '7770001';
/** A hub whose endpoint fails: "Retry now" (issue 42). */
const RETRY_HUB = '7770002';
const SCREENSHOTS = process.env.CHATLOG_SCREENSHOTS;

let server: TestServer;
let receiver: Receiver;
let browser: Browser;
let ingestKey: string;
const cspViolations: string[] = [];

before(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true, webhookTimeoutMs: 5000 });
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.hubs.add(RETRY_HUB, { timeZone: 'Asia/Tokyo' });
  await server.accounts.add(EMAIL, [HUB, RETRY_HUB], PASSWORD);
  ingestKey = (await server.keys.issue(HUB, 'ingest', 'sender')).key;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
});

async function newContext(
  locale = 'en-US',
  viewport = { width: 1280, height: 900 },
): Promise<BrowserContext> {
  const context = await browser.newContext({ locale, viewport });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  context.on('page', (page) =>
    page.on('console', (entry) => {
      if (/Content Security Policy/i.test(entry.text())) cspViolations.push(entry.text());
    }),
  );
  return context;
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${server.url}/account`);
  await page.locator('#email').fill(EMAIL);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('form[action="/account/sign-in"] button').click();
  await page.locator('form[action="/account/sign-out"]').waitFor();
}

/** One message in through the ingest API: a change every endpoint of the hub is told of. */
async function ingestMessage(msg: string): Promise<void> {
  const res = await rawRequest(
    server.url,
    'POST',
    `/ingest/line/${HUB}/messages`,
    { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    JSON.stringify([{ lineId: 'U0000000000000000000000000000web', msg }]),
  );
  assert.equal(res.status, 200, res.body.toString());
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The Tokyo wall clock of an instant (Japan has kept +09:00 since 1951). */
const tokyoMinute = (epochMs: number) =>
  new Date(epochMs + 9 * 3_600_000).toISOString().slice(0, 16).replace('T', ' ');

const pageWidth = (page: Page) => page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);

const WORDS = [
  {
    locale: 'en-US',
    hub: `Hub ${HUB}`,
    webhooks: 'Webhooks',
    heading: `Webhooks of hub ${HUB}`,
    addEndpoint: 'Add endpoint',
    url: 'URL',
    add: 'Add',
    added: 'Endpoint added.',
    once: 'It will not be shown again.',
    copySecret: 'Copy secret',
    copied: 'Copied',
    delivered: 'Delivered',
    deliveredStatus: 'Delivered (HTTP 204)',
    time: /^Time \(Asia\/Tokyo\)$/,
    remove: 'Remove',
    removeEndpoint: 'Remove endpoint',
    removed: 'Endpoint removed.',
    noEndpoints: 'No endpoints yet.',
    refused: 'This URL is refused: 169.254.169.254',
  },
  {
    locale: 'ja-JP',
    hub: `ハブ ${HUB}`,
    webhooks: 'Webhook',
    heading: `ハブ ${HUB} の Webhook`,
    addEndpoint: 'エンドポイントを追加',
    url: 'URL',
    add: '追加',
    added: 'エンドポイントを追加しました。',
    once: 'このシークレットは二度と表示されません。',
    copySecret: 'シークレットをコピー',
    copied: 'コピーしました',
    delivered: '配信済み',
    deliveredStatus: '配信済み(HTTP 204)',
    time: /^日時 ?\(Asia\/Tokyo\)$/,
    remove: '削除',
    removeEndpoint: 'エンドポイントを削除',
    removed: 'エンドポイントを削除しました。',
    noEndpoints: 'エンドポイントはまだありません。',
    refused: 'この URL は使えません。169.254.169.254',
  },
] as const;

describe('the webhooks of the account screen in Chromium', () => {
  for (const words of WORDS) {
    for (const viewport of [
      { width: 1280, height: 900, name: 'desktop' },
      { width: 390, height: 844, name: 'phone' },
    ]) {
      test(`${words.locale}, ${viewport.name}: add an endpoint, its secret once, a delivery listed, remove it`, async () => {
        const shot = `webhooks-${words.locale.slice(0, 2)}-${viewport.name}`;
        const context = await newContext(words.locale, viewport);
        const page = await context.newPage();
        const answers: Array<{ url: string; body: string }> = [];
        page.on('response', async (response) =>
          answers.push({ url: response.url(), body: await response.text().catch(() => '') }),
        );
        await signIn(page);

        // From the hub's keys to its webhooks.
        await screenshot(page, `${shot}-keys`);
        const hub = page.getByRole('region', { name: words.hub });
        await hub.getByRole('link', { name: words.webhooks, exact: true }).click();
        await page.getByRole('heading', { name: words.heading, level: 1 }).waitFor();
        assert.equal(await page.getAttribute('html', 'lang'), words.locale.slice(0, 2));
        await page.getByText(words.noEndpoints).waitFor();

        // Add endpoint opens the form, the URL field has the focus.
        await page.getByRole('button', { name: words.addEndpoint }).click();
        const field = page.getByLabel(words.url, { exact: true });
        await page.waitForFunction(() => document.activeElement?.id === 'endpoint-url');
        const endpointUrl = `${receiver.url.replace(/\/$/, '')}/${words.locale}/${viewport.name}`;
        await field.fill(endpointUrl);
        await page.getByRole('button', { name: words.add, exact: true }).click();
        await page.getByText(words.added).waitFor();

        // The secret, once, with the sentence saying so; the copy button has the focus and copies it.
        const secretPanel = page.locator('section.secret');
        await secretPanel.getByText(words.once).waitFor();
        const secret = (await page.locator('#new-secret').innerText()).trim();
        assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        const copy = page.getByRole('button', { name: words.copySecret });
        await page.waitForFunction(
          () => document.activeElement?.getAttribute('data-action') === 'copy-secret',
        );
        assert.ok((await pageWidth(page)) <= viewport.width, `the page is ${await pageWidth(page)} px wide`);
        await screenshot(page, `${shot}-secret`);
        await copy.click();
        await secretPanel.getByText(words.copied).waitFor();
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        assert.equal(copied, secret);

        // A real change: the receiver verifies its signature with the secret the clipboard holds.
        receiver.secret = copied;
        receiver.received.length = 0;
        await ingestMessage(`hello ${words.locale} ${viewport.name}`);
        const [delivery] = await receiver.waitFor(1);
        assert.equal(delivery?.payload.type, 'message.created');

        // After a reload (a GET of the page): the endpoint with its delivery, and no secret anywhere.
        const region = page.getByRole('region', { name: endpointUrl });
        const row = region.getByRole('row').filter({ hasText: 'message.created' });
        for (let i = 0; i < 100; i++) {
          await page.goto(`${server.url}/account/hubs/${HUB}/webhooks`);
          if ((await row.filter({ hasText: words.delivered }).count()) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const cells = (await row.locator('th, td').allInnerTexts()).map((text) => text.replace(/\s+/g, ' '));
        assert.equal(cells.length, 4, cells.join(' | '));
        assert.ok((cells[2] ?? '').endsWith(words.deliveredStatus), cells[2]);
        assert.match(cells[3] ?? '', /1$/, 'one attempt');
        const shown = await row.locator('time').getAttribute('datetime');
        assert.equal(
          await row
            .locator('time')
            .innerText()
            .then((t) => t.replace(/\s+/g, ' ')),
          tokyoMinute(Date.parse(shown ?? '')),
          'the time is the Tokyo wall clock',
        );
        assert.ok(Date.now() - Date.parse(shown ?? '') < 10 * 60_000, 'a delivery of just now');
        const header = region.getByRole('columnheader', { name: words.time });
        assert.equal(await header.count(), 1, 'the time column names the hub’s zone');
        assert.equal(await page.locator('#new-secret').count(), 0);
        assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again');
        assert.ok((await pageWidth(page)) <= viewport.width, `the page is ${await pageWidth(page)} px wide`);
        await screenshot(page, `${shot}-list`);

        // Remove, confirmed in the dialog.
        await region.getByRole('button', { name: words.remove, exact: true }).click();
        const dialog = page.getByRole('dialog');
        await dialog.waitFor();
        assert.ok((await dialog.innerText()).replaceAll('\u200b', '').includes(`${endpointUrl}`));
        const box = await dialog.boundingBox();
        assert.ok(
          box && box.x >= 0 && box.x + box.width <= viewport.width,
          `the dialog fits: ${JSON.stringify(box)}`,
        );
        await screenshot(page, `${shot}-remove`);
        await dialog.getByRole('button', { name: words.removeEndpoint }).click();
        await page.getByText(words.removed).waitFor();
        await page.getByText(words.noEndpoints).waitFor();
        assert.equal(await page.getByRole('region', { name: endpointUrl }).count(), 0);

        // Only the answer that added the endpoint ever carried its secret.
        const carriers = answers.filter((answer) => answer.body.includes(secret));
        assert.equal(carriers.length, 1, carriers.map((answer) => answer.url).join(', '));
        assert.equal(carriers[0]?.url, `${server.url}/account/hubs/${HUB}/webhooks`);
        await context.close();
      });
    }

    test(`${words.locale}: a refused URL says why, keeps the form open and adds nothing`, async () => {
      const context = await newContext(words.locale);
      const page = await context.newPage();
      await signIn(page);
      await page.goto(`${server.url}/account/hubs/${HUB}/webhooks`);
      await page.getByRole('button', { name: words.addEndpoint }).click();
      await page.getByLabel(words.url, { exact: true }).fill('http://169.254.169.254/latest/meta-data/');
      const [answer] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST'),
        page.getByRole('button', { name: words.add, exact: true }).click(),
      ]);
      assert.equal(answer.status(), 400, 'refused, not a fault');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), new RegExp(words.refused.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.match(await alert.innerText(), /link-local, metadata or reserved address/);
      const field = page.getByLabel(words.url, { exact: true });
      assert.ok(await field.isVisible(), 'the form stays open');
      assert.equal(await field.inputValue(), 'http://169.254.169.254/latest/meta-data/');
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      assert.equal(
        await page.getByRole('button', { name: words.addEndpoint }).getAttribute('aria-expanded'),
        'true',
      );
      await page.getByText(words.noEndpoints).waitFor();
      await screenshot(page, `webhooks-${words.locale.slice(0, 2)}-refused`);
      await context.close();
    });
  }

  test('a failing endpoint has Retry now, in both languages, on a desktop and a 390 px phone; it sends the parked delivery at once', async () => {
    const failing = await startReceiver();
    try {
      failing.answer = 503;
      const admin = (await server.keys.issue(RETRY_HUB, 'admin', '')).key;
      const added = await rawRequest(
        server.url,
        'POST',
        `/api/line/${RETRY_HUB}/webhooks`,
        { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        JSON.stringify({ url: `${failing.url}/failing` }),
      );
      assert.equal(added.status, 201, added.body.toString());
      const endpoint = JSON.parse(added.body.toString()) as { id: string; url: string; secret: string };
      failing.secret = endpoint.secret;
      const ingest = (await server.keys.issue(RETRY_HUB, 'ingest', '')).key;
      const sent = await rawRequest(
        server.url,
        'POST',
        `/ingest/line/${RETRY_HUB}/messages`,
        { authorization: `Bearer ${ingest}`, 'content-type': 'application/json' },
        JSON.stringify([{ lineId: 'U0000000000000000000000000retry', msg: 'parked' }]),
      );
      assert.equal(sent.status, 200);
      // Two failed attempts (about 5 s apart): the next one is minutes away.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const [delivery] = await server.store.webhooks.recent(endpoint.id, 1);
        if (delivery && delivery.attempts >= 2 && delivery.nextAttemptAt - Date.now() > 60_000) break;
        assert.ok(Date.now() < deadline, `not parked: ${JSON.stringify(delivery)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const retry = { 'en-US': 'Retry now', 'ja-JP': '今すぐ再試行' } as const;
      const retried = {
        'en-US': '1 delivery will be tried again within seconds.',
        'ja-JP': '1 件の配信を数秒以内に再試行します。',
      };
      for (const words of WORDS) {
        for (const viewport of [
          { width: 1280, height: 900, name: 'desktop' },
          { width: 390, height: 844, name: 'phone' },
        ]) {
          const context = await newContext(words.locale, viewport);
          const page = await context.newPage();
          await signIn(page);
          await page.goto(`${server.url}/account/hubs/${RETRY_HUB}/webhooks`);
          const region = page.getByRole('region', { name: endpoint.url });
          const button = region.getByRole('button', { name: retry[words.locale], exact: true });
          await button.waitFor();
          const box = await button.boundingBox();
          assert.ok(
            box && box.x >= 0 && box.x + box.width <= viewport.width,
            `it fits: ${JSON.stringify(box)}`,
          );
          assert.ok(
            (await pageWidth(page)) <= viewport.width,
            `the page is ${await pageWidth(page)} px wide`,
          );
          await screenshot(page, `webhooks-${words.locale.slice(0, 2)}-${viewport.name}-retry`);
          if (words.locale === 'ja-JP' && viewport.name === 'phone') {
            // The receiver is back: Retry now sends the parked delivery, long before its next try.
            failing.answer = 204;
            await button.click();
            await page.getByText(retried[words.locale]).waitFor();
            const [delivery] = await failing.waitFor(1, 30_000);
            assert.equal(delivery?.payload.type, 'message.created');
          }
          await context.close();
        }
      }
    } finally {
      await failing.close();
    }
  });

  test('no page of these tests broke its strict CSP', () => {
    assert.deepEqual(cspViolations, []);
  });
});
