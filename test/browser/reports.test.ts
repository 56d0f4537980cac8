/**
 * The Reports page (CONTRACT §17) in Chromium, for a seeded hub: the owner follows `Reports` from
 * the account screen and sees the three charts (each an image with a title and a description), the
 * numbers behind `Show table` equal the API's report, the CSV downloaded has the same numbers (with
 * a byte order mark), the Japanese page has no English left, nothing needs sideways scrolling at
 * 390 px, days that cannot be read are said, and no page breaks the CSP.
 * Set CHATLOG_SCREENSHOTS=<dir> to keep what the browser showed, as PNG files.
 */
// sqlite-only: what the browser sees does not depend on the store; the report's figures are checked
// on both stores against an oracle in test/contract/reports.test.ts.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { daysBefore, localDayAt } from '../../src/lib/calendar.js';
import { ReportColumns } from '../../src/modules/reports/reports.columns.js';
import { buildReport } from '../../src/modules/reports/reports.usecases.js';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';
import { fitsWidth, newPage, screenshot, signIn } from './session.js';

const PASSWORD = 'reports browser password';
const EMAIL = 'reports@example.com';
const HUB = '7791701';
const ZONE = 'Asia/Tokyo';
let server: TestServer;
let browser: Browser;
const cspViolations: string[] = [];

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { timeZone: ZONE });
  // Ten friends over the last twelve days: each asks, most are answered minutes to hours later.
  const now = Date.now();
  const messages = [];
  for (let i = 0; i < 10; i++) {
    const lineId = `U77917010000000000000000000000${String(i).padStart(3, '0')}`;
    const asked = now - (i + 1) * 26 * 3_600_000;
    messages.push(message({ lineId, name: `友だち${i}`, msg: `予約できますか ${i}`, createdAt: asked }));
    if (i % 4 !== 3) {
      messages.push(
        message({ lineId, sender: 'You', msg: `はい ${i}`, createdAt: asked + (i + 1) * 7 * 60_000 }),
      );
    }
    messages.push(
      message({ lineId, name: `友だち${i}`, msg: 'ありがとう', createdAt: asked + (i + 2) * 9 * 60_000 }),
    );
  }
  await storeMessages(server.store, HUB, messages);
  await server.accounts.add(EMAIL, [HUB], PASSWORD);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const defaultReport = () => {
  const today = localDayAt(Date.now(), ZONE);
  return buildReport(new ReportColumns(server.store), {
    hubId: HUB,
    from: daysBefore(today, 27),
    to: today,
    timeZone: ZONE,
  });
};

test('en-US, 1280 px: Reports shows the charts, Show table gives the API’s numbers, the CSV the same', async () => {
  const page = await newPage(browser, 'en-US', { width: 1280, height: 900 }, cspViolations, {
    acceptDownloads: true,
  });
  await signIn(page, server.url, EMAIL, PASSWORD);
  await page.getByRole('link', { name: 'Reports', exact: true }).click();
  await page.getByRole('heading', { name: `Reports of hub ${HUB}` }).waitFor();
  for (const name of [
    'Messages per day',
    'Median response time per day',
    'When friends write (weekday × hour)',
  ]) {
    assert.equal(
      await page.getByRole('img', { name }).count(),
      1,
      `the chart "${name}" is an image with its title`,
    );
  }
  const report = await defaultReport();
  assert.equal(report.days.length, 28);
  assert.ok(report.totals.answered > 0 && report.totals.unanswered > 0);
  // The totals, as the page says them.
  const totals = page.locator('dl.totals');
  assert.equal(
    (await totals.locator('div').filter({ hasText: 'From friends' }).locator('dd').textContent())?.trim(),
    String(report.totals.fromFriends),
  );
  // The first chart's numbers, a click away.
  const details = page.locator('details.numbers').first();
  assert.equal(await details.locator('table').isVisible(), false, 'hidden until asked');
  await details.getByText('Show table').click();
  const rows = await details
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from(tr.querySelectorAll('th, td > span:not(.cell-label)')).map(
          (cell) => cell.textContent?.trim() ?? '',
        ),
      ),
    );
  assert.deepEqual(
    rows,
    report.days.map((d) => [
      d.day,
      String(d.fromFriends),
      String(d.fromAccount),
      String(d.contacts),
      String(d.newContacts),
    ]),
  );
  assert.ok(await fitsWidth(page, 1280));
  await screenshot(page, 'reports-en');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download CSV' }).click(),
  ]);
  const csv = fs.readFileSync((await download.path()) as string, 'utf8');
  assert.ok(csv.startsWith('\uFEFFday,fromFriends,'), 'UTF-8 with a byte order mark');
  const lines = csv.trim().split('\r\n').slice(1);
  assert.deepEqual(
    lines.map((line) => line.split(',').slice(0, 8).join(',')),
    report.days.map((d) =>
      [
        d.day,
        d.fromFriends,
        d.fromAccount,
        d.contacts,
        d.newContacts,
        d.waits,
        d.answered,
        d.unanswered,
      ].join(','),
    ),
  );
  await page.context().close();
});

test('ja-JP, 390 px: no English left, no sideways scroll; days that cannot be read are said', async () => {
  const page = await newPage(browser, 'ja-JP', { width: 390, height: 844 }, cspViolations);
  await signIn(page, server.url, EMAIL, PASSWORD);
  await page.goto(`${server.url}/account/hubs/${HUB}/reports`);
  await page.getByRole('heading', { name: `ハブ ${HUB} のレポート` }).waitFor();
  assert.ok(await fitsWidth(page, 390), 'no sideways scroll at 390 px');
  await screenshot(page, 'reports-ja-phone');
  for (const details of await page.locator('details.numbers').all()) await details.locator('summary').click();
  assert.ok(await fitsWidth(page, 390), 'no sideways scroll at 390 px, tables opened');
  const text = await page.locator('main').innerText();
  for (const english of [
    'Messages per day',
    'Show table',
    'Download CSV',
    'From friends',
    'Median',
    'Waits',
    'Mon',
    'Answered',
  ]) {
    assert.ok(!text.includes(english), `no "${english}" on the Japanese page`);
  }
  assert.equal(await page.getByRole('img', { name: '日ごとのメッセージ数' }).count(), 1);
  await page.goto(`${server.url}/account/hubs/${HUB}/reports?from=2026-11-28&to=2026-11-01`);
  assert.match((await page.getByRole('alert').textContent()) ?? '', /開始日は終了日より後にできません/);
  await page.goto(`${server.url}/account/hubs/${HUB}/reports?from=2024-01-01&to=2025-12-31`);
  assert.match((await page.getByRole('alert').textContent()) ?? '', /最大 366 日/);
  await page.context().close();
});

test('keyboard only: Reports, then Show table opens with Enter', async () => {
  const page = await newPage(browser, 'en-US', { width: 1280, height: 900 }, cspViolations);
  await signIn(page, server.url, EMAIL, PASSWORD);
  await page.goto(`${server.url}/account/hubs/${HUB}/reports`);
  const summary = page.locator('details.numbers summary').first();
  for (let i = 0; i < 40 && !(await summary.evaluate((s) => s === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await page.keyboard.press('Enter');
  assert.equal(
    await page
      .locator('details.numbers')
      .first()
      .evaluate((d) => (d as HTMLDetailsElement).open),
    true,
  );
  await page.context().close();
});

test('the conversation list says who waits for an answer, the longest wait first, each a link', async () => {
  const page = await newPage(browser, 'en-US', { width: 1280, height: 900 }, cspViolations);
  await signIn(page, server.url, EMAIL, PASSWORD);
  await page.goto(`${server.url}/account/hubs/${HUB}/conversations`);
  const waiting = page.locator('section.waiting');
  await waiting.getByRole('heading', { name: 'Waiting for an answer' }).waitFor();
  // Every friend wrote last (their thanks): ten wait, the one who asked longest ago first.
  const names = await waiting.locator('ol.waiting li a').allTextContents();
  assert.deepEqual(
    names,
    Array.from({ length: 10 }, (_, i) => `友だち${9 - i}`),
  );
  assert.match((await waiting.locator('li').first().textContent()) ?? '', /waiting \d+ (h|days)/);
  await waiting.getByRole('link', { name: '友だち9' }).click();
  await page.waitForURL(/\/conversations\/U7791701/);
  await screenshot(page, 'reports-waiting-conversation');
  await page.context().close();
});

test('no page broke the Content Security Policy', () => {
  assert.deepEqual(cspViolations, []);
});
