/**
 * CONTRACT §8 over HTTP (the browser tests drive the same screen in Chromium): sign-in, sessions,
 * CSRF and cross-site refusal, keys issued, copied and revoked, and no full key in any page.
 *
 * Over 400 lines because it is CONTRACT §8 whole, against one server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';

const PASSWORD = 'correct horse battery staple';
let server: TestServer;

/** A client that keeps cookies and does not follow redirects, like a browser's first hop. */
class Client {
  readonly cookies = new Map<string, string>();
  readonly seen: string[] = [];

  constructor(private readonly headers: Record<string, string> = {}) {}

  async send(
    method: string,
    path: string,
    form?: Record<string, string>,
    extra: Record<string, string> = {},
  ) {
    const headers: Record<string, string> = { ...this.headers, ...extra };
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    let body: string | undefined;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    const res = await rawRequest(server.url, method, path, headers, body);
    const setCookie = res.headers['set-cookie'] ?? [];
    for (const line of setCookie) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = res.body.toString('utf8');
    this.seen.push(JSON.stringify(res.headers), text);
    return { ...res, text, setCookie };
  }

  get(path: string, extra?: Record<string, string>) {
    return this.send('GET', path, undefined, extra);
  }

  post(path: string, form: Record<string, string>, extra?: Record<string, string>) {
    return this.send('POST', path, form, extra);
  }

  async signIn(email: string, password = PASSWORD) {
    const page = await this.get('/account');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
    return this.post('/account/sign-in', { csrf, email, password });
  }

  async csrf(): Promise<string> {
    const page = await this.get('/account');
    const token = /<meta name="csrf-token" content="([^"]+)">/.exec(page.text)?.[1];
    assert.ok(token, 'the signed-in page carries a CSRF token');
    return token;
  }
}

/** HTML without the elements hidden from assistive technology (`aria-hidden="true"`, nested spans). */
function withoutHidden(html: string): string {
  let out = html;
  for (let start = out.search(/<span[^>]*aria-hidden="true"/); start >= 0; ) {
    let depth = 0;
    const tags = /<(\/?)span\b[^>]*>/g;
    tags.lastIndex = start;
    let end = out.length;
    for (let tag = tags.exec(out); tag; tag = tags.exec(out)) {
      depth += tag[1] ? -1 : 1;
      if (depth === 0) {
        end = tags.lastIndex;
        break;
      }
    }
    out = out.slice(0, start) + out.slice(end);
    start = out.search(/<span[^>]*aria-hidden="true"/);
  }
  return out;
}

/**
 * What a reader (or a screen reader) gets of some HTML: hidden parts out, a space where a block or
 * a cell ends, inline tags out, entities of the escaper decoded, spaces collapsed.
 */
function textOf(html: string): string {
  return withoutHidden(html)
    .replace(
      /<\/?(?:table|caption|thead|tbody|tr|th|td|dl|dt|dd|p|div|section|h\d|pre|form|button|br)\b[^>]*>/g,
      ' ',
    )
    .replace(/<[^>]*>/g, '')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/\s+/g, ' ')
    .trim();
}

/** One hub's section of the keys page. */
function hubSection(html: string, hubId: string): string {
  const section = new RegExp(`<section class="hub" aria-labelledby="hub-${hubId}">[\\s\\S]*?</section>`).exec(
    html,
  )?.[0];
  assert.ok(section, `the page has a section for hub ${hubId}`);
  return section;
}

/** The Tokyo wall clock of an instant, by plain arithmetic (Japan has kept +09:00 since 1951). */
const tokyoMinute = (epochMs: number) =>
  new Date(epochMs + 9 * 3_600_000).toISOString().slice(0, 16).replace('T', ' ');

const api = (hubId: string, key: string) => `/api/line/${hubId}/messages?apikey=${encodeURIComponent(key)}`;

before(async () => {
  server = await startTestServer();
  for (const hubId of ['501', '502', '503']) await server.hubs.add(hubId, {});
  await server.accounts.add('Owner@Example.com', ['501', '502'], PASSWORD);
  await server.accounts.add('other@example.com', ['503'], PASSWORD);
});
after(() => server?.close());

describe('the account screen', () => {
  test('the sign-in page: labelled fields, strict security headers, a private sign-in cookie', async () => {
    const client = new Client();
    const page = await client.get('/account');
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'] ?? '', /^text\/html/);
    assert.match(page.text, /<html lang="en">/);
    assert.match(page.text, /<label for="email">Email<\/label>/);
    assert.match(page.text, /<label for="password">Password<\/label>/);
    assert.match(page.text, /<button type="submit" class="primary">Sign in<\/button>/);
    const csp = String(page.headers['content-security-policy']);
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "frame-ancestors 'none'",
      "form-action 'self'",
    ]) {
      assert.ok(csp.includes(directive), directive);
    }
    assert.doesNotMatch(page.text, /<script>|<style>| on[a-z]+="/, 'no inline script or style');
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['cache-control'], 'private, no-store');
    assert.match(
      page.setCookie[0] ?? '',
      /^chatlog_signin=[^;]+; Path=\/account; SameSite=Lax; Max-Age=3600; HttpOnly$/,
    );
  });

  test('a wrong password and an unknown email look the same; repeated failures are throttled', async () => {
    const wrongPassword = await new Client({ 'x-forwarded-for': '1' }).signIn(
      'owner@example.com',
      'not the password',
    );
    const unknownEmail = await new Client().signIn('nobody@example.com', PASSWORD);
    assert.equal(wrongPassword.status, 401);
    assert.equal(unknownEmail.status, 401);
    const message = (text: string) => /role="alert">([^<]*)</.exec(text)?.[1];
    assert.equal(message(wrongPassword.text), 'The email or the password is wrong.');
    assert.equal(message(unknownEmail.text), message(wrongPassword.text));
    assert.equal(wrongPassword.setCookie.filter((c) => c.startsWith('chatlog_session')).length, 0);

    // Five failures for one email: the sixth attempt is refused, even with the right password.
    await server.accounts.add('throttled@example.com', ['501'], PASSWORD);
    for (let i = 0; i < 5; i++) {
      assert.equal((await new Client().signIn('throttled@example.com', `wrong ${i}`)).status, 401);
    }
    const refused = await new Client().signIn('throttled@example.com', PASSWORD);
    assert.equal(refused.status, 429);
    assert.match(refused.text, /Too many failed attempts/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
  });

  test('sign in, issue a key, copy it, use it, revoke it; the key is never in a page', async () => {
    const client = new Client();
    const signedIn = await client.signIn('OWNER@example.com');
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.location, '/account');
    const session = signedIn.setCookie.find((c) => c.startsWith('chatlog_session='));
    assert.match(session ?? '', /; Path=\/account; SameSite=Lax; Max-Age=43200; HttpOnly$/);
    assert.doesNotMatch(session ?? '', /Secure/, 'plain http: no Secure flag');

    const page = await client.get('/account');
    assert.match(page.text, /Signed in as owner@example\.com/);
    assert.match(page.text, /Hub 501/);
    assert.match(page.text, /Hub 502/);
    assert.doesNotMatch(page.text, /Hub 503/, 'only the hubs the account was given');

    const csrf = await client.csrf();
    const issued = await client.post('/account/hubs/501/keys', {
      csrf,
      label: 'HubSpot sync',
      scope: 'read',
    });
    assert.equal(issued.status, 303);
    const keyId = /issued=([^#&]+)/.exec(issued.headers.location ?? '')?.[1] ?? '';
    const after = await client.get(`/account?issued=${keyId}`);
    assert.match(after.text, /Key “HubSpot sync” created/);
    const row =
      new RegExp(`<tr role="row" id="key-${keyId}" class="new">[\\s\\S]*?</tr>`).exec(after.text)?.[0] ?? '';
    assert.match(row, /<th role="rowheader" scope="row">HubSpot sync<\/th>/);
    assert.match(row, /chl_[0-9A-Za-z]{4}•{12}</, 'masked: first characters, then dots');
    assert.match(row, /aria-label="Copy key"/);
    assert.match(row, /aria-label="Show key"/);

    const revealed = await client.post(`/account/keys/${keyId}/reveal`, {}, { 'x-csrf-token': csrf });
    assert.equal(revealed.status, 200);
    assert.equal(revealed.headers['cache-control'], 'private, no-store');
    const key = JSON.parse(revealed.text).key as string;
    assert.match(key, /^chl_[0-9A-Za-z]{28}$/);
    assert.equal((await rawRequest(server.url, 'GET', api('501', key))).status, 200);

    const confirm = await client.post(`/account/keys/${keyId}/revoke`, { csrf });
    assert.equal(confirm.status, 200, 'without JavaScript the server asks to confirm');
    assert.match(confirm.text, /Revoke the key “HubSpot sync”\?/);
    assert.equal((await rawRequest(server.url, 'GET', api('501', key))).status, 200, 'not revoked yet');
    const revoked = await client.post(`/account/keys/${keyId}/revoke`, { csrf, confirm: 'yes' });
    assert.equal(revoked.status, 303);
    assert.equal((await rawRequest(server.url, 'GET', api('501', key))).status, 401);
    const final = await client.get(`/account?revoked=${keyId}`);
    assert.match(final.text, /Key “HubSpot sync” revoked\./);
    assert.match(textOf(final.text), /Revoked on \d{4}-\d\d-\d\d \d\d:\d\d/);

    // Every answer of the screen but the one reveal: not a byte of the key.
    const revealIndex = client.seen.indexOf(revealed.text);
    client.seen.forEach((text, i) => {
      if (i !== revealIndex) assert.ok(!text.includes(key), `answer ${i} carries the key`);
    });
    assert.ok(!server.logs.text.includes(key), 'the key is not in the log');

    const out = await client.post('/account/sign-out', { csrf });
    assert.equal(out.status, 303);
    assert.match((await client.get('/account')).text, /Sign in to chatlog/);
    // The old session cookie is dead on the server too.
    assert.equal(
      (await client.post(`/account/keys/${keyId}/reveal`, {}, { 'x-csrf-token': csrf })).status,
      403,
    );
  });

  test('cross-site posts and posts without the CSRF token are refused and change nothing', async () => {
    const client = new Client();
    await client.signIn('owner@example.com');
    const csrf = await client.csrf();
    const before = (await server.keys.list('502')).length;
    const attempts = [
      client.post('/account/hubs/502/keys', { csrf, label: 'evil' }, { origin: 'https://evil.example' }),
      client.post('/account/hubs/502/keys', { csrf, label: 'evil' }, { 'sec-fetch-site': 'cross-site' }),
      client.post('/account/hubs/502/keys', { label: 'no token' }),
      client.post('/account/hubs/502/keys', { csrf: `${csrf}x`, label: 'wrong token' }),
    ];
    for (const attempt of await Promise.all(attempts)) assert.equal(attempt.status, 403);
    assert.equal((await server.keys.list('502')).length, before);

    const { key } = await server.keys.issue('502', 'read', 'target');
    const keyId = (await server.keys.list('502')).find((k) => k.label === 'target')?.id ?? '';
    const noToken = await client.post(`/account/keys/${keyId}/reveal`, {});
    assert.equal(noToken.status, 403);
    assert.ok(!noToken.text.includes(key));
    const crossSite = await client.post(
      `/account/keys/${keyId}/reveal`,
      {},
      { 'x-csrf-token': csrf, origin: 'https://evil.example' },
    );
    assert.equal(crossSite.status, 403);
    const signIn = await new Client().post('/account/sign-in', {
      email: 'owner@example.com',
      password: PASSWORD,
    });
    assert.equal(signIn.status, 403, 'a sign-in without the form token (login CSRF)');
  });

  test("an account cannot see, copy or revoke another account's keys", async () => {
    const { key } = await server.keys.issue('503', 'read', 'not yours');
    const keyId = (await server.keys.list('503'))[0]?.id ?? '';
    const client = new Client();
    await client.signIn('owner@example.com');
    const csrf = await client.csrf();
    const reveal = await client.post(`/account/keys/${keyId}/reveal`, {}, { 'x-csrf-token': csrf });
    assert.equal(reveal.status, 404);
    assert.ok(!reveal.text.includes(key));
    assert.equal((await client.post(`/account/keys/${keyId}/revoke`, { csrf, confirm: 'yes' })).status, 404);
    assert.equal((await client.post('/account/hubs/503/keys', { csrf, label: 'x' })).status, 404);
    assert.equal((await rawRequest(server.url, 'GET', api('503', key))).status, 200, 'still live');
  });

  test('times in the hub zone with the zone named, scopes and states in the page language, an example that holds data', async () => {
    await server.hubs.add('504', { timeZone: 'Asia/Tokyo' });
    await server.hubs.add('505', {});
    await server.accounts.add('zones@example.com', ['504', '505'], PASSWORD);
    const newest = Date.parse('2024-03-10T16:30:00.000Z'); // 2024-03-11 01:30 in Tokyo
    await storeMessages(server.store, '504', [
      message({ createdAt: Date.parse('2024-02-01T00:00:00.000Z'), msg: 'older, outside the example' }),
      message({ createdAt: newest - 86_400_000, msg: 'the day before' }),
      message({ createdAt: newest, msg: 'the newest' }),
    ]);
    const reader = await server.keys.issue('504', 'read', 'Reader');
    await server.keys.verify(reader.key);
    await server.keys.flushLastUsed();
    const sender = await server.keys.issue('504', 'ingest', 'Sender');
    await server.keys.revoke(sender.summary.id);
    await server.keys.issue('505', 'read', 'In UTC');

    for (const language of ['en', 'ja'] as const) {
      const client = new Client({ 'accept-language': language });
      await client.signIn('zones@example.com');
      const page = (await client.get('/account')).text;
      const tokyo = hubSection(page, '504');
      const utc = hubSection(page, '505');

      // The zone is named: in the hub's facts and in the headers of both time columns.
      const head = textOf(/<thead[\s\S]*?<\/thead>/.exec(tokyo)?.[0] ?? '');
      const [created, lastUsed] = language === 'en' ? ['Created', 'Last used'] : ['作成日時', '最終使用'];
      const zoned = (zone: string) => (language === 'en' ? ` (${zone})` : `(${zone})`);
      assert.ok(head.includes(created + zoned('Asia/Tokyo')), head);
      assert.ok(head.includes(lastUsed + zoned('Asia/Tokyo')), head);
      assert.match(textOf(tokyo), language === 'en' ? /Time zone Asia\/Tokyo/ : /タイムゾーン Asia\/Tokyo/);
      assert.match(textOf(utc), language === 'en' ? /Created \(UTC\)/ : /作成日時\(UTC\)/);

      // Every time shown is the Tokyo wall clock of the exact instant its datetime gives.
      const times = [...tokyo.matchAll(/<time datetime="([^"]+)">([\s\S]*?)<\/time>/g)];
      assert.equal(times.length, 4, 'the reader created and last used, the sender created and revoked');
      for (const [, datetime = '', shown = ''] of times) {
        assert.equal(textOf(shown), tokyoMinute(Date.parse(datetime)), datetime);
      }
      const readerCreated = (await server.keys.list('504')).find((k) => k.label === 'Reader')?.createdAt ?? 0;
      assert.ok(textOf(tokyo).includes(tokyoMinute(readerCreated)));

      // Scopes and states in the page's language; a revoked key's state is not the button's word.
      const rowText = (label: string) =>
        textOf(
          new RegExp(
            `<tr role="row"[^>]*>\\s*<th role="rowheader" scope="row">${label}</th>[\\s\\S]*?</tr>`,
          ).exec(tokyo)?.[0] ?? '',
        );
      const stateOf = (label: string) =>
        textOf(
          new RegExp(
            `<tr role="row"[^>]*>\\s*<th role="rowheader" scope="row">${label}</th>[\\s\\S]*?<span class="state[^"]*">([\\s\\S]*?)</span></td>`,
          ).exec(tokyo)?.[1] ?? '',
        );
      const revokedAt = (await server.keys.list('504')).find((k) => k.label === 'Sender')?.revokedAt ?? 0;
      if (language === 'en') {
        assert.match(rowText('Reader'), /^Reader read /);
        assert.match(rowText('Sender'), /^Sender ingest /);
        assert.equal(stateOf('Reader'), 'Active');
        assert.equal(stateOf('Sender'), `Revoked on ${tokyoMinute(revokedAt)}`);
        assert.match(tokyo, />Revoke<\/button>/);
      } else {
        assert.match(rowText('Reader'), /^Reader 読み取り /);
        assert.match(rowText('Sender'), /^Sender 取り込み /);
        assert.equal(stateOf('Reader'), '有効');
        assert.equal(stateOf('Sender'), `失効済み ${tokyoMinute(revokedAt)}`);
        assert.match(tokyo, />無効化<\/button>/);
        assert.ok(!stateOf('Sender').includes('無効化'), 'the state is not the Revoke button’s word');
      }

      // The example curl names the week up to the newest message, in the hub's zone.
      const curl = textOf(/<code class="example">([\s\S]*?)<\/code>/.exec(tokyo)?.[1] ?? '');
      assert.match(curl, /&from=2024-03-05&to=2024-03-11'$/);
      const [, url = ''] = /^curl '([^']+)'$/.exec(curl) ?? [];
      const withKey = url.replace(/chl_•+/, reader.key).replace(server.url, '');
      const answer = await rawRequest(server.url, 'GET', withKey);
      assert.equal(answer.status, 200);
      const messages = JSON.parse(answer.body.toString('utf8'))[0].messages.map(
        (m: { msg: string }) => m.msg,
      );
      assert.deepEqual(messages, ['the day before', 'the newest'], 'the example answers with messages');

      // A hub without messages: the week ending today in its zone.
      const today = new Date().toISOString().slice(0, 10);
      const weekAgo = new Date(Date.parse(today) - 6 * 86_400_000).toISOString().slice(0, 10);
      assert.ok(
        textOf(utc).includes(`&from=${weekAgo}&to=${today}'`),
        `the example of an empty hub is the week ending today (${weekAgo} to ${today})`,
      );
      assert.match(textOf(utc), language === 'en' ? /there is no message yet/ : /メッセージはまだありません/);
    }
  });

  test('Japanese from Accept-Language, and the switch', async () => {
    const client = new Client({ 'accept-language': 'ja,en;q=0.8' });
    const page = await client.get('/account');
    assert.match(page.text, /<html lang="ja">/);
    assert.match(page.text, /サインイン/);
    assert.match(page.text, />English<\/a>/);
    const switched = await client.get('/account?lang=en');
    assert.equal(switched.status, 303);
    assert.match((await client.get('/account')).text, /<html lang="en">[\s\S]*>日本語<\/a>/);
  });

  test('Secure cookies when the screen is served over HTTPS', async () => {
    const https = await startTestServer({ publicUrl: 'https://chatlog.example.com' });
    try {
      const res = await rawRequest(https.url, 'GET', '/account');
      assert.match(res.headers['set-cookie']?.[0] ?? '', /; Secure$/);
    } finally {
      await https.close();
    }
  });
});
