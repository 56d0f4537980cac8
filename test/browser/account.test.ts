/**
 * The account screen in a real browser: Debian's Chromium driven by playwright-core. Sign in, issue
 * a key, copy it with the icon and read it back from the clipboard, call the API with it, show and
 * hide it, revoke it; the same with the keyboard only; the Japanese page; times in the hub's zone,
 * words in the page's language, an example curl that answers with messages, the icons' tooltips,
 * and every action of every key within reach on a 390 px phone. No page breaks its strict CSP.
 *
 * Over 400 lines because one browser session walks the whole screen; split, each file would sign in
 * and start Chromium again.
 */
// sqlite-only: what the browser sees does not depend on the store, and the account API it calls runs on
// both stores in test/contract/account.test.ts; on PostgreSQL too it would add 20 s of Chromium.
/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';
import { launchChromium } from './chromium.js';

const PASSWORD = 'browser test password';
const EMAIL = 'owner@example.com';
const HUB = '6662225';

/** The hub's newest message: 2024-03-11 01:30 in Tokyo, still 2024-03-10 in UTC. */
const NEWEST = Date.parse('2024-03-10T16:30:00.000Z');
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

let server: TestServer;
let browser: Browser;
/** Every Content-Security-Policy complaint Chromium made on any page of these tests. */
const cspViolations: string[] = [];

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.hubs.add('42', {});
  await server.accounts.add(EMAIL, [HUB, '42'], PASSWORD);
  await storeMessages(server.store, HUB, [
    message({ createdAt: Date.parse('2024-01-15T00:00:00.000Z'), msg: 'long before' }),
    message({ createdAt: NEWEST - 2 * 86_400_000, msg: 'two days before' }),
    message({ createdAt: NEWEST, msg: 'the newest' }),
  ]);
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
  context.on('page', (page) =>
    page.on('console', (entry) => {
      if (/Content Security Policy/i.test(entry.text())) cspViolations.push(entry.text());
    }),
  );
  return context;
}

/** Signs in through the form, in whatever language the page is in. */
async function signInAnyLanguage(page: Page): Promise<void> {
  await page.goto(`${server.url}/account`);
  await page.locator('#email').fill(EMAIL);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('form[action="/account/sign-in"] button').click();
  await page.locator('form[action="/account/sign-out"]').waitFor();
}

/** The Tokyo wall clock of an instant, by plain arithmetic (Japan has kept +09:00 since 1951). */
const tokyoMinute = (epochMs: number) =>
  new Date(epochMs + 9 * 3_600_000).toISOString().slice(0, 16).replace('T', ' ');

/** The words each language uses, as a user reads them (CONTRACT §8 names for English). */
const PAGES = [
  {
    locale: 'en-US',
    hub: (id: string) => `Hub ${id}`,
    created: /^Created \(Asia\/Tokyo\)$/,
    lastUsed: /^Last used \(Asia\/Tokyo\)$/,
    createdUtc: /^Created \(UTC\)$/,
    scopes: { read: 'read', ingest: 'ingest' },
    active: 'Active',
    revoked: /^Revoked on (\d{4}-\d\d-\d\d \d\d:\d\d)$/,
    revoke: 'Revoke',
    revokeKey: 'Revoke key',
    cancel: 'Cancel',
    copy: 'Copy key',
    show: 'Show key',
    hide: 'Hide key',
    copied: 'Copied',
  },
  {
    locale: 'ja-JP',
    hub: (id: string) => `ハブ ${id}`,
    created: /^作成日時 ?\(Asia\/Tokyo\)$/,
    lastUsed: /^最終使用 ?\(Asia\/Tokyo\)$/,
    createdUtc: /^作成日時 ?\(UTC\)$/,
    scopes: { read: '読み取り', ingest: '取り込み' },
    active: '有効',
    revoked: /^失効済み (\d{4}-\d\d-\d\d \d\d:\d\d)$/,
    revoke: '無効化',
    revokeKey: 'キーを無効化',
    cancel: 'キャンセル',
    copy: 'キーをコピー',
    show: 'キーを表示',
    hide: 'キーを隠す',
    copied: 'コピーしました',
  },
] as const;

/** The tooltip of an icon button as drawn: its ::after box, shown or not, and its text. */
const tooltipOf = (button: Locator) =>
  button.evaluate((el) => {
    const style = getComputedStyle(el, '::after');
    const box = el.getBoundingClientRect();
    // Chromium resolves an absolutely positioned box's left to pixels, from the button's padding box.
    const left = box.left + el.clientLeft + Number.parseFloat(style.left);
    const top = box.top + el.clientTop + Number.parseFloat(style.top);
    const width =
      Number.parseFloat(style.width) +
      Number.parseFloat(style.paddingLeft) +
      Number.parseFloat(style.paddingRight);
    return {
      shown: style.display !== 'none' && style.visibility === 'visible' && Number(style.opacity) === 1,
      text: style.content.replace(/^"|"$/g, ''),
      name: el.getAttribute('aria-label'),
      left,
      right: left + width,
      /** A point on the tooltip's drawn text (under its transparent top border). */
      middle: { x: left + width / 2, y: top + Number.parseFloat(style.borderTopWidth) + 4 },
    };
  });

/** True when a click at the middle of this element lands on it (nothing covers it, it is on screen). */
const reachable = (element: Locator) =>
  element.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    if (box.left < 0 || box.right > window.innerWidth || y < 0 || y > window.innerHeight) return false;
    const hit = document.elementFromPoint(x, y);
    return hit !== null && (hit === el || el.contains(hit));
  });

/** Whatever would scroll sideways: the page itself, or any box (a table wrapper, a code block) in it. */
const sidewaysScrolling = (page: Page) =>
  page.evaluate(() => {
    const found: string[] = [];
    const root = document.scrollingElement;
    if (root && root.scrollWidth > window.innerWidth) found.push(`the page (${root.scrollWidth} px)`);
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      const overflow = getComputedStyle(el).overflowX;
      if ((overflow === 'auto' || overflow === 'scroll') && el.scrollWidth > el.clientWidth) {
        found.push(`${el.tagName.toLowerCase()}.${el.className} (${el.scrollWidth} > ${el.clientWidth} px)`);
      }
    }
    return found;
  });

const pageWidth = (page: Page) => page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);

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

    // The Claude Code command, with the key in it: ready to paste, and it reaches /mcp.
    const mcpUrl = `${server.url}/mcp`;
    assert.ok((await hub.locator('dl.api').textContent())?.includes(mcpUrl), 'the MCP URL is shown');
    await row.getByRole('button', { name: 'Copy the Claude Code command with this key' }).click();
    // The key was copied a moment ago: wait for the clipboard to hold the command instead.
    let command = await clipboard(page);
    for (let i = 0; i < 100 && command === key; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      command = await clipboard(page);
    }
    assert.equal(
      command,
      `claude mcp add --transport http chatlog ${mcpUrl} --header "Authorization: Bearer ${key}"`,
    );
    const initialize = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'pasted', version: '1' },
        },
      }),
    });
    assert.equal(initialize.status, 200, await initialize.clone().text());
    assert.ok(!(await page.content()).includes(key), 'nor after copying the command');

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

  test('times in the hub zone, the zone named; scopes and states in the page language, a revoked key not called by the button’s word', async () => {
    const reader = await server.keys.issue(HUB, 'read', 'Zone reader');
    await server.keys.verify(reader.key);
    await server.keys.flushLastUsed();
    const sender = await server.keys.issue(HUB, 'ingest', 'Zone sender');
    await server.keys.revoke(sender.summary.id);
    await server.keys.issue('42', 'read', 'A key of a hub in UTC');
    const revokedAt = (await server.keys.list(HUB)).find((k) => k.label === 'Zone sender')?.revokedAt ?? 0;

    for (const words of PAGES) {
      const context = await newContext(words.locale);
      const page = await context.newPage();
      await signInAnyLanguage(page);
      const hub = page.getByRole('region', { name: words.hub(HUB) });

      // The zone is named where the times are: both time columns, for a reader and a screen reader.
      for (const header of [words.created, words.lastUsed]) {
        const cell = hub.getByRole('columnheader', { name: header });
        assert.equal(await cell.count(), 1, `a column header ${header}`);
        assert.match((await cell.innerText()).replace(/\s+/g, ' '), header);
      }
      const utcHub = page.getByRole('region', { name: words.hub('42') });
      assert.equal(await utcHub.getByRole('columnheader', { name: words.createdUtc }).count(), 1);

      // Every time shown is the Tokyo wall clock of the exact instant its datetime gives.
      const times = await hub
        .locator('time')
        .evaluateAll((els) =>
          els.map((el) => [el.getAttribute('datetime') ?? '', (el as HTMLElement).innerText]),
        );
      assert.ok(times.length >= 4);
      for (const [datetime = '', shown = ''] of times) {
        assert.equal(shown.replace(/\s+/g, ' '), tokyoMinute(Date.parse(datetime)), datetime);
      }

      const readerRow = hub.getByRole('row', { name: /Zone reader/ });
      const senderRow = hub.getByRole('row', { name: /Zone sender/ });
      const cellText = async (row: Locator, selector: string) =>
        (await row.locator(selector).innerText()).replace(/\s+/g, ' ').trim();
      assert.equal(await cellText(readerRow, 'td.scope > span:not(.cell-label)'), words.scopes.read);
      assert.equal(await cellText(senderRow, 'td.scope > span:not(.cell-label)'), words.scopes.ingest);
      assert.equal(await cellText(readerRow, '.state'), words.active);
      assert.ok(
        (await cellText(readerRow, 'time >> nth=0')) === tokyoMinute(reader.summary.createdAt),
        'created, in Tokyo',
      );
      const revokedState = await cellText(senderRow, '.state');
      assert.equal(words.revoked.exec(revokedState)?.[1], tokyoMinute(revokedAt), revokedState);

      // The state of a revoked key is not the word of the button that revokes.
      const buttonNames = await page
        .getByRole('button')
        .evaluateAll((els) =>
          els.map((el) => (el.getAttribute('aria-label') ?? el.textContent ?? '').trim()),
        );
      assert.ok(buttonNames.includes(words.revoke));
      assert.ok(!buttonNames.includes(revokedState));
      assert.ok(
        !revokedState.split(' ').includes(words.revoke),
        `"${revokedState}" is not "${words.revoke}"`,
      );
      if (words.locale === 'ja-JP') assert.ok(!revokedState.includes(words.revoke));
      assert.equal(await readerRow.getByRole('button', { name: words.revoke, exact: true }).count(), 1);
      assert.equal(await senderRow.getByRole('button').count(), 0, 'a revoked key has no action');
      await context.close();
    }
  });

  test('the example curl names days that hold the hub’s messages, and answers with them', async () => {
    const { key } = await server.keys.issue(HUB, 'read', 'Example caller');
    const today = new Date().toISOString().slice(0, 10);
    const weekAgo = new Date(Date.parse(today) - 6 * 86_400_000).toISOString().slice(0, 10);
    for (const words of PAGES) {
      const context = await newContext(words.locale);
      const page = await context.newPage();
      await signInAnyLanguage(page);
      const example = async (hubId: string) =>
        (
          await page
            .getByRole('region', { name: words.hub(hubId) })
            .locator('code.example')
            .innerText()
        ).trim();

      // The week up to the newest message's day in the hub's zone (2024-03-11 in Tokyo).
      const curl = await example(HUB);
      assert.match(curl, /&from=2024-03-05&to=2024-03-11'$/);
      const url = /^curl '([^']+)'$/.exec(curl)?.[1] ?? '';
      const answer = await rawRequest(server.url, 'GET', url.replace(server.url, '').replace(/chl_•+/, key));
      assert.equal(answer.status, 200);
      const contacts = JSON.parse(answer.body.toString('utf8')) as Array<{
        messages: Array<{ msg: string }>;
      }>;
      assert.deepEqual(
        contacts.flatMap((c) => c.messages.map((m) => m.msg)),
        ['two days before', 'the newest'],
        'the copied example answers with the hub’s latest messages',
      );

      // A hub with no message yet: the week ending today (in its zone, UTC).
      assert.match(await example('42'), new RegExp(`&from=${weekAgo}&to=${today}'$`));
      await context.close();
    }
  });

  test('the icons have tooltips a user sees: on hover and on keyboard focus; Escape hides them', async () => {
    await server.keys.issue(HUB, 'read', 'Tooltip key');
    for (const words of PAGES) {
      for (const viewport of [
        { width: 1280, height: 900 },
        { width: 390, height: 844 },
      ]) {
        const context = await newContext(words.locale, viewport);
        const page = await context.newPage();
        await signInAnyLanguage(page);
        const row = page.getByRole('row', { name: /Tooltip key/ });
        for (const icon of [
          row.getByRole('button', { name: words.show }),
          row.getByRole('button', { name: words.copy }),
        ]) {
          await icon.scrollIntoViewIfNeeded();
          await page.mouse.move(0, 0);
          assert.equal((await tooltipOf(icon)).shown, false, 'hidden until wanted');
          await icon.hover();
          const tip = await tooltipOf(icon);
          assert.ok(tip.shown, `${tip.name}: shown on hover`);
          assert.equal(tip.text, tip.name, 'the tooltip says the accessible name');
          assert.ok(tip.left >= 0 && tip.right <= viewport.width, `on screen: ${tip.left}..${tip.right}`);
          assert.deepEqual(await sidewaysScrolling(page), [], 'no sideways scrolling while it shows');
          await page.mouse.move(tip.middle.x, tip.middle.y, { steps: 4 });
          assert.ok((await tooltipOf(icon)).shown, 'the pointer can rest on the tooltip (WCAG 1.4.13)');
        }
        await page.mouse.move(0, 0);

        // Keyboard only: Tab onto an eye icon, Escape, Tab to the copy icon, back, Enter.
        await tabTo(page, words.show);
        const focused = page.locator(':focus');
        assert.deepEqual(
          [(await tooltipOf(focused)).shown, (await tooltipOf(focused)).text],
          [true, words.show],
          'shown on keyboard focus',
        );
        await page.keyboard.press('Escape');
        assert.equal((await tooltipOf(focused)).shown, false, 'Escape hides it');
        await page.keyboard.press('Tab');
        assert.deepEqual(
          [(await tooltipOf(focused)).shown, (await tooltipOf(focused)).text],
          [true, words.copy],
        );
        await page.keyboard.press('Shift+Tab');
        assert.equal((await tooltipOf(focused)).shown, true, 'shown again once focus came back');
        await page.keyboard.press('Enter');
        await page.waitForFunction(() => document.activeElement?.getAttribute('aria-pressed') === 'true');
        assert.equal((await tooltipOf(focused)).text, words.hide, 'the tooltip follows the button’s state');
        await context.close();
      }
    }
  });

  test('on a 390 px phone every action of every key is on screen and clickable, with no sideways scrolling', async () => {
    await server.keys.issue(
      HUB,
      'read',
      'A label long enough to need two lines on a phone, and then more words',
    );
    const gone = await server.keys.issue(HUB, 'ingest', 'Revoked from the phone');
    await server.keys.revoke(gone.summary.id);
    for (const words of PAGES) {
      const context = await newContext(words.locale, { width: 390, height: 844 });
      const page = await context.newPage();
      await signInAnyLanguage(page);
      assert.ok((await pageWidth(page)) <= 390, `the page is ${await pageWidth(page)} px wide`);
      assert.deepEqual(await sidewaysScrolling(page), [], 'nothing scrolls sideways');

      const rows = page.locator('table.keys tbody tr');
      const count = await rows.count();
      assert.ok(count >= 6, `${count} keys`);
      let live = 0;
      for (let i = 0; i < count; i++) {
        const row = rows.nth(i);
        const label = await row.locator('th').innerText();
        if ((await row.locator('.state.live').count()) === 0) {
          assert.equal(await row.getByRole('button').count(), 0, `${label}: revoked, no action`);
          continue;
        }
        live += 1;
        for (const button of [
          row.getByRole('button', { name: words.show }),
          row.getByRole('button', { name: words.copy }),
          row.getByRole('button', { name: words.revoke, exact: true }),
        ]) {
          await button.scrollIntoViewIfNeeded();
          assert.ok(
            await reachable(button),
            `${label}: ${(await button.getAttribute('aria-label')) ?? words.revoke}`,
          );
        }
        // The card names its values, the hub's zone with the times.
        const hubId = await row.evaluate((el) => el.closest('section')?.getAttribute('aria-labelledby'));
        const zone = hubId === `hub-${HUB}` ? 'Asia/Tokyo' : 'UTC';
        assert.ok((await row.innerText()).replace(/\s+/g, '').includes(`(${zone})`), `${label}: ${zone}`);
      }
      assert.ok(live >= 3, `${live} live keys`);

      // The actions work from the phone: show in place (the full key wraps in its card), copy, revoke.
      const row = page.getByRole('row', { name: /A label long enough/ });
      await row.getByRole('button', { name: words.show }).click();
      await row.getByRole('button', { name: words.hide }).waitFor();
      assert.match(await row.locator('.key').innerText(), /^chl_[0-9A-Za-z]{28}$/);
      assert.ok((await pageWidth(page)) <= 390, 'the shown key fits the phone');
      assert.deepEqual(await sidewaysScrolling(page), []);
      assert.ok(await reachable(row.getByRole('button', { name: words.hide })));
      await row.getByRole('button', { name: words.copy }).click();
      await row.getByText(words.copied).waitFor();
      assert.equal(await apiStatus(await clipboard(page)), 200);
      await row.getByRole('button', { name: words.revoke, exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      assert.ok(await reachable(dialog.getByRole('button', { name: words.revokeKey })));
      assert.ok(await reachable(dialog.getByRole('button', { name: words.cancel })));
      await dialog.getByRole('button', { name: words.cancel }).click();
      assert.ok((await pageWidth(page)) <= 390);
      await context.close();
    }
  });

  test('every page keeps its strict CSP, and nothing on them breaks it (styles, tooltips, script)', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const signInPage = await page.goto(`${server.url}/account`);
    assert.equal(signInPage?.headers()['content-security-policy'], CSP);
    await signInAnyLanguage(page);
    const keysPage = await page.reload();
    assert.equal(keysPage?.headers()['content-security-policy'], CSP);
    await page.getByRole('button', { name: 'Copy key' }).first().hover();
    await context.close();
    assert.deepEqual(cspViolations, [], 'no page of these tests broke the policy');
  });
});
