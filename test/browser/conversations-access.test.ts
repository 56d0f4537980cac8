/**
 * The account screen's conversations over HTTP, without a browser (conversations.test.ts drives
 * them in Chromium), on both stores: an account reads only its own hubs; the downloads are what the
 * read API answers (JSON byte for byte, CSV row for row); kept media come with their own sandbox;
 * bad days and queries are a 400 page, never a 500; Erase contact asks first, needs the session's
 * token from the same site, and leaves nothing of the contact in any answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AccountClient } from '../fixtures/account-client.js';
import {
  CONVERSATION_TOKEN,
  FRIEND_NAME,
  IMAGE,
  IMAGE_ID,
  seedConversations,
  startFakeLine,
} from '../fixtures/conversations.js';
import { readCsv } from '../fixtures/csv.js';
import type { FakeLine } from '../fixtures/fake-line.js';
import { body, messageEvent, OTHER_USER, signed, USER } from '../fixtures/line.js';
import { readZip } from '../fixtures/zip.js';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';

const PASSWORD = 'conversations access password';
const MINE = '7790001';
const THEIRS = '7790002';
let server: TestServer;
let line: FakeLine;
let readKey: string;
let me: AccountClient;
let stranger: AccountClient;

before(async () => {
  line = await startFakeLine({ token: CONVERSATION_TOKEN });
  server = await startTestServer({ lineApiDataBaseUrl: line.base });
  await seedConversations(server, MINE, line);
  await server.hubs.add(THEIRS, {});
  await server.accounts.add('me@example.com', [MINE], PASSWORD);
  await server.accounts.add('stranger@example.com', [THEIRS], PASSWORD);
  readKey = (await server.keys.issue(MINE, 'read', '')).key;
  me = new AccountClient(server.url, PASSWORD);
  await me.signIn('me@example.com');
  stranger = new AccountClient(server.url, PASSWORD);
  await stranger.signIn('stranger@example.com');
});
after(async () => {
  await server?.close();
  await line?.close();
});

const base = `/account/hubs/${MINE}`;
const friend = `${base}/conversations/${USER}`;

/** The read API's answer for the days, as bytes. */
async function readApi(query: string): Promise<Buffer> {
  const res = await rawRequest(server.url, 'GET', `/api/line/${MINE}/messages?apikey=${readKey}&${query}`);
  assert.equal(res.status, 200, res.body.toString());
  return res.body;
}

describe('who can read', () => {
  test('signed out, every page and download sends to the sign-in page', async () => {
    const anonymous = new AccountClient(server.url, PASSWORD);
    for (const path of [
      `${base}/conversations`,
      friend,
      `${friend}/messages.csv`,
      `${base}/messages.json`,
      `${base}/content/${IMAGE_ID}`,
    ]) {
      const res = await anonymous.get(path);
      assert.equal(res.status, 303, path);
      assert.equal(res.headers.location, '/account');
    }
  });

  test("another account's hub is not found, and none of its messages is in the answer", async () => {
    for (const path of [
      `${base}/conversations`,
      `${base}/conversations?q=${encodeURIComponent('予約')}`,
      friend,
      `${friend}/messages.csv`,
      `${base}/messages.json`,
      `${base}/content/${IMAGE_ID}`,
    ]) {
      const res = await stranger.get(path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.text, /予約|佐藤/, path);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    }
    const csrf = await stranger.csrf();
    const erase = await stranger.post(`${friend}/erase`, { csrf, confirm: 'yes' });
    assert.equal(erase.status, 404);
    assert.equal((await server.store.contacts.get(MINE, USER))?.name, FRIEND_NAME, 'nothing was erased');
  });

  test('my hub lists its contacts, the named friend first, with a link named by the name', async () => {
    const res = await me.get(`${base}/conversations`);
    assert.equal(res.status, 200);
    assert.match(res.text, new RegExp(`<a href="${friend}">${FRIEND_NAME}</a>`));
    // The unnamed friend's link is its LINE user id.
    assert.match(res.text, new RegExp(`<a href="${base}/conversations/${OTHER_USER}">${OTHER_USER}</a>`));
    assert.ok(res.text.indexOf(FRIEND_NAME) < res.text.indexOf(OTHER_USER), 'newest activity first');
    assert.match(res.text, /rel="next"/, 'more contacts than one page');
    assert.equal(res.headers['cache-control'], 'private, no-store');
  });
});

describe('downloads', () => {
  test('JSON of a range is the read API answer, byte for byte', async () => {
    for (const query of [
      'from=2026-11-20&to=2026-11-20',
      'from=2026-11-21&to=2026-11-21',
      'from=2026-10-01&to=2026-11-30',
    ]) {
      const res = await me.get(`${base}/messages.json?${query}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="chatlog-7790001-/);
      assert.deepEqual(res.body, await readApi(query), query);
    }
  });

  test("a conversation's JSON is the read API's record of that contact, and its CSV the same rows", async () => {
    const all = JSON.parse((await readApi('from=2026-10-01&to=2026-11-30')).toString()) as Array<{
      lineId: string;
      vid: string;
      name: string;
      messages: Array<{ sender: string; msg: string; contentType: string; createdAt: string }>;
    }>;
    const record = all.find((contact) => contact.lineId === USER);
    assert.ok(record);
    const json = await me.get(`${friend}/messages.json`);
    assert.equal(json.status, 200);
    assert.deepEqual(JSON.parse(json.text), [record]);

    const csv = await me.get(`${friend}/messages.csv`);
    assert.equal(csv.status, 200);
    assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8');
    assert.deepEqual([...csv.body.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 with a byte order mark');
    const [header, ...rows] = readCsv(csv.text.slice(1));
    assert.deepEqual(header, [
      'createdAt (hub time zone)',
      'createdAt (UTC)',
      'lineId',
      'vid',
      'name',
      'sender',
      'contentType',
      'msg',
    ]);
    assert.deepEqual(
      rows,
      record.messages.map((m) => [
        // Tokyo is UTC+9 all year.
        new Date(Date.parse(m.createdAt) + 9 * 3_600_000).toISOString().slice(0, 19).replace('T', ' '),
        m.createdAt,
        record.lineId,
        record.vid,
        record.name,
        m.sender,
        m.contentType,
        m.msg,
      ]),
    );
    // A range of the conversation: the days in Tokyo.
    const day = await me.get(`${friend}/messages.json?from=2026-11-21&to=2026-11-21`);
    assert.deepEqual(
      JSON.parse(day.text)[0].messages.map((m: { createdAt: string }) => m.createdAt),
      record.messages.map((m) => m.createdAt).filter((t) => t >= '2026-11-20T15:00:00.000Z'),
    );
  });

  test('a bad day or a reversed range is the form again, with what was typed and why, in the page language', async () => {
    for (const [path, why, from, to, invalid] of [
      [
        `${base}/messages.csv?from=2026-02-30&to=`,
        /From: “2026-02-30” is not a real day/,
        '2026-02-30',
        '',
        1,
      ],
      [
        `${base}/messages.json?from=2026-11-21&to=2026-11-20`,
        /The From day is after the To day/,
        '2026-11-21',
        '2026-11-20',
        2,
      ],
      [
        `${friend}/messages.json?from=2026-11-21&to=2026-11-20`,
        /The From day is after the To day/,
        '2026-11-21',
        '2026-11-20',
        2,
      ],
      [
        `${friend}/messages.csv?from=&to=2026-13-01`,
        /To: “2026-13-01” is not a real day/,
        '',
        '2026-13-01',
        1,
      ],
      [
        `${base}/messages.csv?from=x&to=y`,
        /From: “x” is not a real day.*To: “y” is not a real day/,
        'x',
        'y',
        2,
      ],
      // A repeated day is read as its last, as every parameter of these pages (not a fault).
      [
        `${base}/messages.csv?from=2026-01-01&from=2026-13-01`,
        /From: “2026-13-01” is not a real day/,
        '2026-13-01',
        '',
        1,
      ],
      // What else the URL carried is not shown (the contacts from the first, no notice).
      [`${base}/messages.csv?from=bad&erased=99&after=1.1`, /From: “bad” is not a real day/, 'bad', '', 1],
    ] as const) {
      const res = await me.get(path);
      assert.equal(res.status, 400, path);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(
        res.text,
        new RegExp(`<p class="error" id="download-error" role="alert">${why.source}`),
        path,
      );
      assert.match(res.text, new RegExp(`id="from" name="from"[^>]* value="${from}"`), path);
      assert.match(res.text, new RegExp(`id="to" name="to"[^>]* value="${to}"`), path);
      assert.equal([...res.text.matchAll(/aria-invalid="true"/g)].length, invalid, path);
      assert.equal([...res.text.matchAll(/ autofocus/g)].length, 1, path);
      assert.doesNotMatch(res.text, /was erased/);
      // The page itself, signed in: its header and, for the hub, its contacts.
      assert.match(res.text, /Sign out/);
      if (path.startsWith(`${base}/messages`)) assert.match(res.text, new RegExp(`href="${friend}"`));
    }
    const ja = await me.send('GET', `${base}/messages.csv?from=2026-11-21&to=2026-11-20`, undefined, {
      'accept-language': 'ja',
    });
    assert.equal(ja.status, 400);
    assert.match(ja.text, /開始日が終了日より後になっています。/);
    // A search repeated in the URL is its last, not a fault.
    const twice = await me.get(`${base}/conversations?q=a&q=${encodeURIComponent('予約')}`);
    assert.equal(twice.status, 200);
    assert.equal([...twice.text.matchAll(/<li class="result">/g)].length, 3);
  });

  test('a query that is not one is a 400 page with its hint above the contacts', async () => {
    const res = await me.get(`${base}/conversations?q=${encodeURIComponent('a '.repeat(17))}`);
    assert.equal(res.status, 400);
    assert.match(res.text, /<p class="error" id="q-error" role="alert">Type 1 to 16 words/);
    assert.doesNotMatch(res.text, /No contact has written yet/);
    assert.match(res.text, new RegExp(`href="${friend}"`));
  });
});

test('kept media come through the session with their own sandbox, byte ranges included', async () => {
  const res = await me.get(`${base}/content/${IMAGE_ID}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, IMAGE);
  assert.equal(res.headers['content-type'], 'image/png');
  assert.equal(res.headers['content-security-policy'], "default-src 'none'; sandbox");
  const part = await me.send('GET', `${base}/content/${IMAGE_ID}`, undefined, { range: 'bytes=0-7' });
  assert.equal(part.status, 206);
  assert.deepEqual(part.body, IMAGE.subarray(0, 8));
  const none = await me.get(`${base}/content/470000000000000002`);
  assert.equal(none.status, 404, 'a sticker has no kept content');
});

test('search finds 予約 in three messages and marks it; each result links into its conversation', async () => {
  const res = await me.get(`${base}/conversations?q=${encodeURIComponent('予約')}`);
  assert.equal(res.status, 200);
  const results = [...res.text.matchAll(/<li class="result">([\s\S]*?)<\/li>/g)].map((m) => m[1] ?? '');
  assert.equal(results.length, 3);
  for (const result of results) {
    assert.match(result, /<mark>予約<\/mark>/);
    assert.match(result, new RegExp(`href="${friend}\\?at=[\\w-]+&#38;q=%E4%BA%88%E7%B4%84#m-`));
  }
});

test("Export personal data: a ZIP of messages.json (the read API's record, each message with its id) and the kept image", async () => {
  const res = await me.get(`${friend}/personal-data.zip`);
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'application/zip');
  assert.match(String(res.headers['content-disposition']), /^attachment; filename="chatlog-7790001-U4af/);
  const entries = await readZip(res.body);
  assert.deepEqual([...entries.keys()], ['messages.json', `content/${IMAGE_ID}`]);
  assert.deepEqual(entries.get(`content/${IMAGE_ID}`), IMAGE);
  const data = JSON.parse(entries.get('messages.json')?.toString('utf8') ?? '');
  const record = (
    JSON.parse((await readApi('from=2026-10-01&to=2026-11-30')).toString()) as Array<{ lineId: string }>
  ).find((contact) => contact.lineId === USER);
  assert.deepEqual(
    { ...data, messages: data.messages.map(({ id: _, ...rest }: Record<string, string>) => rest) },
    record,
    "the read API's record of the contact, every message",
  );
  assert.deepEqual(Object.keys(data.messages[0]), ['id', 'sender', 'msg', 'contentType', 'createdAt']);
  const ids = data.messages.map((m: { id: string }) => m.id);
  assert.equal(new Set(ids).size, ids.length, 'each message its own id');
  assert.ok(ids.includes(IMAGE_ID), "a LINE message's id is LINE's");
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{1,64}$/);
  assert.equal((await stranger.get(`${friend}/personal-data.zip`)).status, 404);
  assert.equal((await me.get(`${base}/conversations/Unobody/personal-data.zip`)).status, 404);
});

describe('Erase contact', () => {
  test('asks first, refuses another site and a missing token, then erases everything of the contact', async () => {
    const csrf = await me.csrf();
    const ask = await me.post(`${friend}/erase`, { csrf });
    assert.equal(ask.status, 200);
    assert.match(ask.text, /Erase 佐藤 花子\?/);
    assert.match(ask.text, />Erase<\/button>/);
    const crossSite = await me.post(
      `${friend}/erase`,
      { csrf, confirm: 'yes' },
      { 'sec-fetch-site': 'cross-site' },
    );
    assert.equal(crossSite.status, 403);
    const noToken = await me.post(`${friend}/erase`, { confirm: 'yes' });
    assert.equal(noToken.status, 403);
    assert.ok(await server.store.contacts.get(MINE, USER), 'not erased yet');

    const done = await me.post(`${friend}/erase`, { csrf, confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal(done.headers.location, `${base}/conversations?erased=7`);
    assert.doesNotMatch(String(done.headers.location), /佐藤|%E4/, 'the name is not kept in the URL');
    const list = await me.get(String(done.headers.location));
    assert.match(list.text, /The contact was erased, with 7 messages\./);
    assert.doesNotMatch(list.text, /佐藤/);
    assert.equal((await me.get(friend)).status, 404);
    assert.equal((await me.get(`${base}/content/${IMAGE_ID}`)).status, 404);
    assert.equal((await me.get(`${friend}/personal-data.zip`)).status, 404, 'no export after erasure');
    const answer = (await readApi('from=2026-10-01&to=2026-11-30')).toString();
    assert.doesNotMatch(answer, new RegExp(`${USER}|佐藤|予約を承り`));
    const search = await me.get(`${base}/conversations?q=${encodeURIComponent('予約')}`);
    assert.equal([...search.text.matchAll(/<li class="result">/g)].length, 0);
  });
});

test('a contact without a LINE id (an event that came without its user id) is named, not a blank link', async () => {
  await storeMessages(server.store, MINE, [
    message({
      lineId: '',
      name: '',
      msg: 'どなたか分からないメッセージ',
      createdAt: Date.parse('2026-11-22T01:00:00Z'),
    }),
  ]);
  const list = await me.get(`${base}/conversations`);
  assert.equal(list.status, 200);
  assert.match(list.text, /<span class="no-line-id">\(no LINE user id\)<\/span>/);
  assert.doesNotMatch(list.text, new RegExp(`href="${base}/conversations/"`));
  const found = await me.get(`${base}/conversations?q=${encodeURIComponent('どなたか')}`);
  assert.match(
    found.text,
    /<li class="result">\s*<p class="meta"><span class="no-line-id">\(no LINE user id\)<\/span>/,
  );
  // Its messages are in the hub's downloads.
  const json = await me.get(`${base}/messages.json?from=2026-11-22&to=2026-11-22`);
  assert.match(json.text, /"lineId":"".*どなたか分からないメッセージ/s);
});

test('an image of a hub without a LINE access token says, in the page language, what the API says and what to do; never "being downloaded"', async () => {
  const hubId = '7790003';
  const secret = 'no-token-channel-secret';
  await server.hubs.add(hubId, { lineChannelSecret: secret, timeZone: 'Asia/Tokyo' });
  await server.accounts.add('no-token@example.com', [hubId], PASSWORD);
  const owner = new AccountClient(server.url, PASSWORD);
  await owner.signIn('no-token@example.com');
  const raw = body([
    messageEvent(
      { id: '470000000000009001', type: 'image', quoteToken: 'q', contentProvider: { type: 'line' } },
      { timestamp: Date.parse('2026-11-20T01:00:00Z'), source: { type: 'user', userId: USER } },
    ),
  ]);
  const res = await rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, signed(secret, raw), raw);
  assert.equal(res.status, 200, res.body.toString());
  // What the API answers for it.
  const key = (await server.keys.issue(hubId, 'read', '')).key;
  const api = await rawRequest(
    server.url,
    'GET',
    `/api/line/${hubId}/content/470000000000009001?apikey=${key}`,
  );
  assert.equal(api.status, 404);
  assert.match(JSON.parse(api.body.toString()).error.message, /no LINE channel access token/);

  const page = `/account/hubs/${hubId}/conversations/${USER}`;
  const english = await owner.send('GET', page, undefined, { 'accept-language': 'en' });
  assert.equal(english.status, 200);
  assert.match(english.text, /no LINE channel access token/);
  assert.match(english.text, new RegExp(`chatlog hub add ${hubId} --line-channel-access-token -`));
  assert.doesNotMatch(english.text, /being downloaded/);
  const japanese = await owner.send('GET', page, undefined, { 'accept-language': 'ja' });
  assert.equal(japanese.status, 200);
  assert.match(japanese.text, /チャネルアクセストークンがありません/);
  assert.match(japanese.text, new RegExp(`chatlog hub add ${hubId} --line-channel-access-token -`));
  assert.doesNotMatch(japanese.text, /ダウンロード中/);

  // With a token, the same image is what it is: on its way.
  await server.hubs.add(hubId, { lineChannelAccessToken: 'a-channel-access-token' });
  const later = await owner.send('GET', page, undefined, { 'accept-language': 'en' });
  assert.doesNotMatch(later.text, /no LINE channel access token/);
});
