/** CONTRACT §9: the change feed against a listening server, on either store. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { body, messageEvent, SAMPLE_MESSAGES, signed, USER } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
let server: TestServer;
let hub = 900;

interface Page {
  changes: Array<Record<string, unknown> & { seq: string; type: string }>;
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

function webhook(hubId: string, events: unknown[]) {
  const raw = body(events as never[]);
  return rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, signed(SECRET, raw), raw);
}

async function ingest(hubId: string, key: string, messages: unknown[]) {
  const res = await server.request(`/ingest/line/${hubId}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(messages),
  });
  assert.equal(res.status, 200, await res.clone().text());
}

async function feed(hubId: string, key: string, query = '', init?: RequestInit): Promise<Page> {
  const res = await server.request(`/api/line/${hubId}/changes${query}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...init?.headers },
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'private, no-store');
  return JSON.parse(text) as Page;
}

async function errorOf(path: string, init?: RequestInit): Promise<[number, string]> {
  const res = await server.request(path, init);
  const parsed = (await res.json()) as { error: { code: string } };
  return [res.status, parsed.error.code];
}

before(async () => {
  server = await startTestServer();
});
after(() => server?.close());

test('a webhook message, an ingest message and an unsend, read through the feed', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  const text = SAMPLE_MESSAGES.text!;
  assert.equal(
    (await webhook(hubId, [messageEvent(text.message, { timestamp: 1_572_742_931_120 })])).status,
    200,
  );
  await ingest(hubId, ingestKey, [
    { lineId: USER, msg: 'こんにちは', id: 'crm-1', createdAt: '2019-11-03T01:05:00Z' },
  ]);

  const first = await feed(hubId, read);
  assert.equal(first.hasMore, false);
  assert.deepEqual(
    first.changes.map((c) => [c.type, c.id]),
    [
      ['message.created', text.message.id],
      ['message.created', 'crm-1'],
    ],
  );
  const created = first.changes[0]!;
  assert.deepEqual(Object.keys(created), [
    'seq',
    'type',
    'at',
    'id',
    'lineId',
    'vid',
    'name',
    'message',
    'line',
  ]);
  assert.match(created.seq, /^[0-9]+$/);
  assert.match(String(created.at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(created.message, {
    sender: 'User',
    msg: text.msg,
    contentType: 'text',
    createdAt: '2019-11-03T01:02:11.120Z',
  });
  // LINE's own objects, as LINE sent them.
  assert.deepEqual(created.line, { source: { type: 'user', userId: USER }, message: text.message });
  // An ingested message has no `line`.
  assert.deepEqual(Object.keys(first.changes[1]!), [
    'seq',
    'type',
    'at',
    'id',
    'lineId',
    'vid',
    'name',
    'message',
  ]);
  assert.ok(Number(first.changes[1]!.seq) > Number(created.seq));

  // Caught up: the same cursor comes back with nothing.
  const empty = await feed(hubId, read, `?cursor=${first.cursor}`);
  assert.deepEqual(empty, { changes: [], cursor: first.cursor, hasMore: false });

  // The friend takes the message back: a deletion after the cursor, and the content gone from the start.
  await webhook(hubId, [
    {
      type: 'unsend',
      timestamp: 1_572_743_000_000,
      source: { type: 'user', userId: USER },
      unsend: { messageId: text.message.id },
    },
  ]);
  const deleted = await feed(hubId, read, `?cursor=${first.cursor}`);
  assert.deepEqual(
    deleted.changes.map((c) => ({ type: c.type, id: c.id, lineId: c.lineId, reason: c.reason })),
    [{ type: 'message.deleted', id: text.message.id, lineId: USER, reason: 'unsend' }],
  );
  assert.deepEqual(Object.keys(deleted.changes[0]!), ['seq', 'type', 'at', 'id', 'lineId', 'reason']);
  const fromStart = await feed(hubId, read);
  assert.deepEqual(
    fromStart.changes.map((c) => [c.type, c.id]),
    [
      ['message.created', 'crm-1'],
      ['message.deleted', text.message.id],
    ],
  );
  assert.ok(
    !JSON.stringify(fromStart).includes(text.msg.slice(0, 10)),
    'the unsent text is never served again',
  );
});

test('pages: limit, hasMore, and following cursors gives every change once, in order', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  await ingest(
    hubId,
    ingestKey,
    Array.from({ length: 23 }, (_, i) => ({ lineId: `U${i % 3}`, msg: `m${i}`, id: `id-${i}` })),
  );
  const seen: string[] = [];
  let cursor = '';
  for (;;) {
    const page = await feed(hubId, read, `?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
    assert.ok(page.changes.length <= 5);
    seen.push(...page.changes.map((c) => String(c.id)));
    cursor = page.cursor;
    if (!page.hasMore) break;
  }
  assert.deepEqual(
    seen,
    Array.from({ length: 23 }, (_, i) => `id-${i}`),
  );
});

test('no cursor and nothing stored: the feed end, to follow from', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  const empty = await feed(hubId, read);
  assert.deepEqual(empty.changes, []);
  assert.equal(empty.hasMore, false);
  await ingest(hubId, ingestKey, [{ lineId: 'U1', msg: 'later', id: 'later' }]);
  const next = await feed(hubId, read, `?cursor=${empty.cursor}`);
  assert.deepEqual(
    next.changes.map((c) => c.id),
    ['later'],
  );
});

test('a contact linked to HubSpot and renamed is contact.updated; its messages carry the name read now', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  await ingest(hubId, ingestKey, [{ lineId: 'Ufriend', msg: 'hi', id: 'x1', sender: null }]);
  const start = await feed(hubId, read);
  const res = await server.request(`/ingest/line/${hubId}/contacts/Ufriend`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ vid: 101, name: 'shinobu' }),
  });
  assert.equal(res.status, 200);
  const updated = await feed(hubId, read, `?cursor=${start.cursor}`);
  assert.deepEqual(
    updated.changes.map(({ type, lineId, vid, name }) => ({ type, lineId, vid, name })),
    [{ type: 'contact.updated', lineId: 'Ufriend', vid: '101', name: 'shinobu' }],
  );
  assert.deepEqual(Object.keys(updated.changes[0]!), ['seq', 'type', 'at', 'lineId', 'vid', 'name']);
  // The same link again changes nothing: no change.
  await server.request(`/ingest/line/${hubId}/contacts/Ufriend`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ vid: 101, name: 'shinobu' }),
  });
  assert.deepEqual((await feed(hubId, read, `?cursor=${updated.cursor}`)).changes, []);
  const all = await feed(hubId, read);
  const message = all.changes[0]!;
  assert.equal(message.vid, '101');
  assert.equal(message.name, 'shinobu');
});

test('long polling: held until a change commits, answered at once when one does', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  const start = await feed(hubId, read);
  const began = Date.now();
  const held = feed(hubId, read, `?cursor=${start.cursor}&wait=20`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await ingest(hubId, ingestKey, [{ lineId: 'U1', msg: 'wake', id: 'wake' }]);
  const page = await held;
  assert.deepEqual(
    page.changes.map((c) => c.id),
    ['wake'],
  );
  assert.ok(Date.now() - began < 10_000, 'answered when the change came, not at the end of the wait');

  // Nothing comes: answered with nothing once the time is up.
  const quiet = Date.now();
  const none = await feed(hubId, read, `?cursor=${page.cursor}&wait=1`);
  assert.deepEqual(none, { changes: [], cursor: page.cursor, hasMore: false });
  assert.ok(Date.now() - quiet >= 900);
});

test('the key: query or Bearer, not both; scopes; every error of §9 in its order', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  const other = await newHub();
  const path = `/api/line/${hubId}/changes`;
  // The key in the query works as well as in the header.
  assert.equal((await server.request(`${path}?apikey=${read}`)).status, 200);
  assert.deepEqual(
    await errorOf(`${path}?apikey=${read}`, { headers: { authorization: `Bearer ${read}` } }),
    [400, 'ambiguous_credentials'],
  );
  assert.deepEqual(await errorOf(path), [401, 'missing_api_key']);
  assert.deepEqual(await errorOf(`${path}?apikey=nope`), [401, 'invalid_api_key']);
  assert.deepEqual(await errorOf(path, { headers: { authorization: `Bearer ${ingestKey}` } }), [
    403,
    'insufficient_scope',
  ]);
  const bearer = { headers: { authorization: `Bearer ${read}` } };
  assert.deepEqual(await errorOf(`/api/line/${other.hubId}/changes`, bearer), [403, 'forbidden']);
  assert.deepEqual(await errorOf(`${path}?limit=1&limit=2`, bearer), [400, 'duplicate_parameter']);
  assert.deepEqual(await errorOf(`${path}?cursor=garbage`, bearer), [400, 'invalid_cursor']);
  const otherCursor = (await feed(other.hubId, other.read)).cursor;
  assert.deepEqual(await errorOf(`${path}?cursor=${otherCursor}`, bearer), [400, 'invalid_cursor']);
  for (const limit of ['0', '1001', '-1', '1.5', 'ten', '']) {
    assert.deepEqual(await errorOf(`${path}?limit=${limit}`, bearer), [400, 'invalid_limit'], limit);
  }
  for (const wait of ['31', '-1', '0.5', 'x']) {
    assert.deepEqual(await errorOf(`${path}?wait=${wait}`, bearer), [400, 'invalid_wait'], wait);
  }
  assert.deepEqual(await errorOf(path, { ...bearer, method: 'POST' }), [405, 'method_not_allowed']);
});

test('a cursor from before the oldest deletion kept is 410 cursor_expired', async () => {
  const { hubId, read, ingest: ingestKey } = await newHub();
  await ingest(hubId, ingestKey, [{ lineId: 'U1', msg: 'a', id: 'a' }]);
  const early = await feed(hubId, read);
  const res = await server.request(`/ingest/line/${hubId}/contacts/U1`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'renamed' }),
  });
  assert.equal(res.status, 200);
  const late = await feed(hubId, read, `?cursor=${early.cursor}`);
  // Dropped as if CHATLOG_CHANGES_KEEP_DAYS had passed.
  assert.ok((await server.store.changes.dropBefore(Date.now() + 1000)) >= 1);
  assert.deepEqual(await errorOf(`/api/line/${hubId}/changes?cursor=${early.cursor}&apikey=${read}`), [
    410,
    'cursor_expired',
  ]);
  // A cursor at or after what was dropped still works, and so does no cursor.
  assert.deepEqual((await feed(hubId, read, `?cursor=${late.cursor}`)).changes, []);
  assert.deepEqual(
    (await feed(hubId, read)).changes.map((c) => c.type),
    ['message.created'],
  );
});
