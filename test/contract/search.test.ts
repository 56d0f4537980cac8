/** CONTRACT §12: search against a listening server, on either store. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { body, messageEvent, OTHER_USER, signed, USER } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
let server: TestServer;
let hub = 1800;

interface Result {
  id: string;
  lineId: string;
  vid: string;
  name: string;
  message: { sender: string; msg: string; contentType: string; createdAt: string };
}

interface Page {
  results: Result[];
  cursor: string;
  hasMore: boolean;
}

async function newHub() {
  hub += 1;
  const hubId = String(hub);
  await server.hubs.add(hubId, { timeZone: 'Asia/Tokyo', lineChannelSecret: SECRET });
  const read = (await server.keys.issue(hubId, 'read', '')).key;
  const ingest = (await server.keys.issue(hubId, 'ingest', '')).key;
  return { hubId, read, ingest };
}

async function ingest(hubId: string, key: string, messages: unknown[]) {
  const res = await server.request(`/ingest/line/${hubId}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(messages),
  });
  assert.equal(res.status, 200, await res.clone().text());
}

function webhook(hubId: string, events: unknown[]) {
  const raw = body(events as never[]);
  return rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, signed(SECRET, raw), raw);
}

async function search(hubId: string, key: string, params: Record<string, string>): Promise<Page> {
  const res = await server.request(`/api/line/${hubId}/search?${new URLSearchParams(params)}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'private, no-store');
  return JSON.parse(text) as Page;
}

const msgs = (page: Page) => page.results.map((r) => r.message.msg);

async function errorOf(path: string, init?: RequestInit): Promise<[number, string]> {
  const res = await server.request(path, init);
  const parsed = (await res.json()) as { error: { code: string } };
  return [res.status, parsed.error.code];
}

before(async () => {
  server = await startTestServer();
});
after(() => server?.close());

test('a two-character Japanese word, half-width kana and full-width Latin are found; the answer is rendered as §3', async () => {
  const { hubId, read, ingest: key } = await newHub();
  await ingest(hubId, key, [
    { lineId: USER, msg: 'ご予約ありがとうございます', id: 'a1', createdAt: '2024-05-01T01:00:00Z' },
    { lineId: USER, msg: 'アイフォンを買いました', id: 'a2', createdAt: '2024-05-01T02:00:00Z' },
    { lineId: USER, msg: 'ＡＢＣ予約センター', id: 'a3', createdAt: '2024-05-01T03:00:00Z' },
    { lineId: USER, msg: '予定は未定', id: 'a4', createdAt: '2024-05-01T04:00:00Z' },
  ]);
  const found = await search(hubId, read, { q: '予約' });
  assert.deepEqual(msgs(found), ['ＡＢＣ予約センター', 'ご予約ありがとうございます']);
  assert.equal(found.hasMore, false);
  assert.deepEqual(Object.keys(found), ['results', 'cursor', 'hasMore']);
  const first = found.results[0]!;
  assert.deepEqual(Object.keys(first), ['id', 'lineId', 'vid', 'name', 'message']);
  assert.deepEqual(first, {
    id: 'a3',
    lineId: USER,
    vid: '',
    name: '',
    message: {
      sender: 'You',
      msg: 'ＡＢＣ予約センター',
      contentType: 'text',
      createdAt: '2024-05-01T03:00:00.000Z',
    },
  });
  assert.deepEqual(msgs(await search(hubId, read, { q: 'ｱｲﾌｫﾝ' })), ['アイフォンを買いました']);
  assert.deepEqual(msgs(await search(hubId, read, { q: 'abc' })), ['ＡＢＣ予約センター']);
  // One character; every word must be there; a word no message holds.
  assert.deepEqual(msgs(await search(hubId, read, { q: '定' })), ['予定は未定']);
  assert.deepEqual(msgs(await search(hubId, read, { q: '予約　センター' })), ['ＡＢＣ予約センター']);
  assert.deepEqual(msgs(await search(hubId, read, { q: '予約 未定' })), []);
  // The key in apikey works as in Bearer.
  const res = await server.request(
    `/api/line/${hubId}/search?q=${encodeURIComponent('予約')}&apikey=${read}`,
  );
  assert.equal(res.status, 200);
});

test('pages follow the cursor, newest first, ties in the order received; from, to, tz and lineId filter', async () => {
  const { hubId, read, ingest: key } = await newHub();
  await ingest(hubId, key, [
    { lineId: USER, msg: '予約 1', id: 'p1', createdAt: '2024-05-01T00:00:00Z' },
    { lineId: OTHER_USER, msg: '予約 2', id: 'p2', createdAt: '2024-05-02T00:00:00Z' },
    { lineId: USER, msg: '予約 3', id: 'p3', createdAt: '2024-05-02T00:00:00Z' },
    { lineId: USER, msg: 'ほか', id: 'p4', createdAt: '2024-05-03T00:00:00Z' },
    { lineId: OTHER_USER, msg: '予約 5', id: 'p5', createdAt: '2024-05-04T16:00:00Z' },
  ]);
  const seen: string[] = [];
  let page = await search(hubId, read, { q: '予約', limit: '2' });
  seen.push(...page.results.map((r) => r.id));
  while (page.hasMore) {
    page = await search(hubId, read, { q: '予約', limit: '2', cursor: page.cursor });
    seen.push(...page.results.map((r) => r.id));
  }
  assert.deepEqual(seen, ['p5', 'p3', 'p2', 'p1']);
  // The days are the hub's (Asia/Tokyo): 2024-05-04T16:00Z is the 5th there, the 4th in UTC.
  const day = (params: Record<string, string>) => search(hubId, read, { q: '予約', ...params });
  assert.deepEqual(
    (await day({ from: '2024-05-05' })).results.map((r) => r.id),
    ['p5'],
  );
  assert.deepEqual(
    (await day({ from: '2024-05-05', tz: 'UTC' })).results.map((r) => r.id),
    [],
  );
  assert.deepEqual(
    (await day({ from: '2024-05-02', to: '2024-05-02' })).results.map((r) => r.id),
    ['p3', 'p2'],
  );
  assert.deepEqual(
    (await day({ lineId: OTHER_USER })).results.map((r) => r.id),
    ['p5', 'p2'],
  );
  assert.deepEqual((await day({ lineId: 'Unobody' })).results, []);
});

test('a message taken back is no longer found', async () => {
  const { hubId, read } = await newHub();
  const sent = { id: '500000000000000001', type: 'text', quoteToken: 'q', text: 'ご予約の変更' };
  assert.equal((await webhook(hubId, [messageEvent(sent, { timestamp: 1_714_521_600_000 })])).status, 200);
  assert.deepEqual(
    (await search(hubId, read, { q: '予約' })).results.map((r) => r.id),
    ['500000000000000001'],
  );
  await webhook(hubId, [
    {
      type: 'unsend',
      timestamp: 1_714_521_700_000,
      source: { type: 'user', userId: USER },
      unsend: { messageId: sent.id },
    },
  ]);
  assert.deepEqual((await search(hubId, read, { q: '予約' })).results, []);
});

test('the errors of §12, in their order', async () => {
  const { hubId, read, ingest: key } = await newHub();
  const other = await newHub();
  const path = (query: string) => `/api/line/${hubId}/search?${query}`;
  const bearer = { headers: { authorization: `Bearer ${read}` } };
  assert.deepEqual(await errorOf(path(`q=a&apikey=${read}`), bearer), [400, 'ambiguous_credentials']);
  assert.deepEqual(await errorOf(path('q=a')), [401, 'missing_api_key']);
  assert.deepEqual(await errorOf(path('q=a&apikey=nope')), [401, 'invalid_api_key']);
  assert.deepEqual(await errorOf(path(`q=a&apikey=${key}`)), [403, 'insufficient_scope']);
  assert.deepEqual(await errorOf(`/api/line/12x/search?q=a&apikey=${read}`), [400, 'invalid_hub_id']);
  assert.deepEqual(await errorOf(path(`q=a&apikey=${other.read}`)), [403, 'forbidden']);
  assert.deepEqual(await errorOf(path('q=a&q=b'), bearer), [400, 'duplicate_parameter']);
  // invalid_query comes before the days: both wrong, q answers.
  assert.deepEqual(await errorOf(path('from=2023-02-29'), bearer), [400, 'invalid_query']);
  for (const q of ['', '%20%E3%80%80', 'x'.repeat(65), Array(17).fill('a').join('+')]) {
    assert.deepEqual(await errorOf(path(`q=${q}`), bearer), [400, 'invalid_query'], q);
  }
  // 64 characters is the most a word may have; a half-width kana word is counted once normalised.
  assert.deepEqual((await search(hubId, read, { q: 'x'.repeat(64) })).results, []);
  assert.deepEqual(await errorOf(path('q=a&from=2023-02-29&limit=0'), bearer), [400, 'invalid_date']);
  assert.deepEqual(await errorOf(path('q=a&from=2024-05-02&to=2024-05-01&tz=Mars/Base'), bearer), [
    400,
    'invalid_range',
  ]);
  assert.deepEqual(await errorOf(path('q=a&tz=Mars/Base&limit=0'), bearer), [400, 'invalid_time_zone']);
  for (const limit of ['0', '101', 'ten', '-1']) {
    assert.deepEqual(
      await errorOf(path(`q=a&limit=${limit}&cursor=bad`), bearer),
      [400, 'invalid_limit'],
      limit,
    );
  }
  assert.deepEqual(await errorOf(path('q=a&cursor=bad'), bearer), [400, 'invalid_cursor']);
  // A cursor of another query, or of another hub, is not this one's.
  await ingest(hubId, key, [
    { lineId: USER, msg: 'a', id: 'e1', createdAt: '2024-05-01T00:00:00Z' },
    { lineId: USER, msg: 'a', id: 'e2', createdAt: '2024-05-02T00:00:00Z' },
  ]);
  const page = await search(hubId, read, { q: 'a', limit: '1' });
  assert.equal(page.hasMore, true);
  assert.deepEqual(await errorOf(path(`q=b&cursor=${page.cursor}`), bearer), [400, 'invalid_cursor']);
  assert.deepEqual(
    await errorOf(`/api/line/${other.hubId}/search?q=a&cursor=${page.cursor}`, {
      headers: { authorization: `Bearer ${other.read}` },
    }),
    [400, 'invalid_cursor'],
  );
  assert.deepEqual(await errorOf(path('q=a'), { method: 'POST', ...bearer }), [405, 'method_not_allowed']);
});
