/**
 * The audit (CONTRACT §13), on a listening server, on both stores: every request that passed the
 * key check on the read, changes, search, content and admin endpoints is one record (time, key id,
 * hub, endpoint, query without apikey, status, messages or bytes, client address), written off the
 * request path; refused keys leave none; no key is anywhere in a record, in `chatlog audit`'s output
 * or on the account screen's Audit log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { AuditRecorder } from '../../src/modules/audit/audit.recorder.js';
import type { AuditRecord } from '../../src/store/store.js';
import { AccountClient } from '../fixtures/account-client.js';
import { runChatlog } from '../fixtures/serve.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const HUB = '7830001';
const OTHER = '7830002';
const PASSWORD = 'audit screen password';
let server: TestServer;
let read: { key: string; id: string };
let admin: { key: string; id: string };
let otherRead: string;

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.hubs.add(OTHER, {});
  const r = await server.keys.issue(HUB, 'read', 'reporting');
  const a = await server.keys.issue(HUB, 'admin', 'ops');
  read = { key: r.key, id: r.summary.id };
  admin = { key: a.key, id: a.summary.id };
  otherRead = (await server.keys.issue(OTHER, 'read', '')).key;
  await server.store.messages.ingest(
    HUB,
    [1, 2, 3].map((n) => ({
      kind: 'message' as const,
      lineId: 'Uaudit',
      sender: null,
      msg: `ご予約 ${n}`,
      contentType: 'text',
      createdAt: Date.parse('2026-11-20T03:00:00Z') + n,
      sourceId: `ingest:audit-${n}`,
      id: `audit-${n}`,
      sourceKind: 'user' as const,
      sourceChatId: null,
    })),
    Date.now(),
  );
  await server.accounts.add('auditor@example.com', [HUB], PASSWORD);
});
after(() => server?.close());

async function get(path: string, headers: Record<string, string> = {}) {
  return rawRequest(server.url, 'GET', path, headers);
}

async function recordsOf(hubId: string, count: number): Promise<AuditRecord[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const records = await server.store.audit.list({ hubId, limit: 100 });
    if (records.length >= count || Date.now() > deadline) return records.reverse();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('one record per authorised request, with its counts; refused keys leave none; never a key', async () => {
  const bearer = { authorization: `Bearer ${read.key}` };
  assert.equal(
    (await get(`/api/line/${HUB}/messages?apikey=${read.key}&from=2026-11-20&to=2026-11-20`)).status,
    200,
  );
  assert.equal(
    (await get(`/api/line/${HUB}/search?q=${encodeURIComponent('予約')}&limit=2`, bearer)).status,
    200,
  );
  assert.equal((await get(`/api/line/${HUB}/changes?limit=10`, bearer)).status, 200);
  assert.equal((await get(`/api/line/${HUB}/content/audit-1?apikey=${read.key}`)).status, 404);
  const erased = await rawRequest(server.url, 'DELETE', `/api/line/${HUB}/contacts/Unobody`, {
    authorization: `Bearer ${admin.key}`,
  });
  assert.equal(erased.status, 404);
  // Refused before or at the key check: no record.
  assert.equal(
    (await get(`/api/line/${HUB}/messages?apikey=chl_wrong&from=2026-11-20&to=2026-11-20`)).status,
    401,
  );
  assert.equal(
    (await get(`/api/line/${HUB}/messages?apikey=${otherRead}&from=2026-11-20&to=2026-11-20`)).status,
    403,
  );
  assert.equal(
    (await get(`/api/line/${HUB}/search?q=x`, { authorization: `Bearer ${admin.key}` })).status,
    403,
  );

  const records = await recordsOf(HUB, 5);
  assert.deepEqual(
    records.map((r) => [r.keyId, r.endpoint, r.query, r.status, r.messages]),
    [
      // The seed's endpoint: the messages its answer held (CONTRACT §13).
      [read.id, 'GET /api/line/:hubId/messages', 'from=2026-11-20&to=2026-11-20', 200, 3],
      // Kept readable: the words as typed, not percent-encoded.
      [read.id, 'GET /api/line/:hubId/search', 'q=予約&limit=2', 200, 2],
      [read.id, 'GET /api/line/:hubId/changes', 'limit=10', 200, 3],
      [read.id, 'GET /api/line/:hubId/content/:messageId', '', 404, null],
      [admin.id, 'DELETE /api/line/:hubId/contacts/:lineId', '', 404, null],
    ],
  );
  for (const r of records) {
    assert.equal(r.hubId, HUB);
    assert.equal(r.client, '127.0.0.1');
    assert.ok((r.bytes ?? 0) > 100, `bytes sent are counted: ${r.bytes}`);
    assert.ok(Math.abs(r.at - Date.now()) < 60_000);
  }
  const text = JSON.stringify(await server.store.audit.list({ hubId: HUB, limit: 100 }));
  for (const key of [read.key, admin.key, otherRead]) assert.ok(!text.includes(key), 'no key in a record');
  assert.ok(!text.includes('chl_'), 'not even the wrong one');
  assert.equal(
    (await server.store.audit.list({ hubId: OTHER, limit: 10 })).length,
    0,
    'nothing for the other hub',
  );
});

test("the seed endpoint's records count the messages its answer held, however it was sent; none for HEAD and 304", async () => {
  const COUNTED = '7830003';
  await server.hubs.add(COUNTED, { timeZone: 'Asia/Tokyo' });
  const key = (await server.keys.issue(COUNTED, 'read', '')).key;
  await server.store.messages.ingest(
    COUNTED,
    Array.from({ length: 7 }, (_, n) => ({
      kind: 'message' as const,
      lineId: `Ucount${n % 2}`,
      sender: null,
      msg: `m${n}`,
      contentType: 'text',
      // 5 on 2026-11-20 in Tokyo, 2 on the 21st.
      createdAt: Date.parse(n < 5 ? '2026-11-20T03:00:00Z' : '2026-11-21T03:00:00Z') + n,
      sourceId: `ingest:count-${n}`,
      id: `count-${n}`,
      sourceKind: 'user' as const,
      sourceChatId: null,
    })),
    Date.now(),
  );
  const path = (query: string) => `/api/line/${COUNTED}/messages?apikey=${key}${query}`;
  const day = '&from=2026-11-20&to=2026-11-20';
  const asked: Array<[number, Record<string, string>, string, string]> = [];
  const ask = async (query: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await rawRequest(server.url, method, path(query), headers);
    asked.push([res.status, headers, method, query]);
    return res;
  };
  const first = await ask(day);
  await ask(day); // the same answer again: from the answer cache
  await ask(day, { 'accept-encoding': 'gzip' });
  await ask(day, { 'accept-encoding': 'br' });
  await ask(''); // the whole hub
  await ask('&from=2026-11-22&to=2026-11-22'); // a day without messages
  await ask(day, {}, 'HEAD');
  await ask(day, { 'if-none-match': String(first.headers.etag) });
  const records = await recordsOf(COUNTED, asked.length);
  assert.deepEqual(
    records.map((r) => [r.status, r.messages]),
    [
      [200, 5],
      [200, 5],
      [200, 5],
      [200, 5],
      [200, 7],
      [200, 0],
      [200, null],
      [304, null],
    ],
  );
});

test('records made after an idle second are written too (the recorder keeps flushing)', async () => {
  const recorder = new AuditRecorder({
    store: server.store,
    log: createLogger('warn'),
    clock: Date.now,
    keepDays: 400,
  });
  await recorder.flush(); // nothing waits: as the first tick of an idle server
  const entry = (n: number) => ({
    at: Date.now(),
    hubId: OTHER,
    keyId: `key_idle${n}`,
    endpoint: 'GET /api/line/:hubId/changes',
    query: '',
    status: 200,
    messages: 0,
    bytes: 10,
    client: '127.0.0.1',
  });
  recorder.record(entry(1));
  await recorder.flush();
  recorder.record(entry(2));
  await recorder.flush();
  const written = await server.store.audit.list({ hubId: OTHER, limit: 10 });
  assert.deepEqual(written.map((r) => r.keyId).sort(), ['key_idle1', 'key_idle2']);
});

test('chatlog audit prints them (tab-separated or --json), with --key and --since; no key in its output', async () => {
  const run = (args: string[]) => runChatlog(server.env, ['audit', ...args]);
  const json = run([HUB, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const listed = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
  assert.ok(listed.length >= 5);
  assert.deepEqual(Object.keys(listed[0] ?? {}), [
    'at',
    'keyId',
    'endpoint',
    'query',
    'status',
    'messages',
    'bytes',
    'client',
  ]);
  const byAdmin = JSON.parse(run([HUB, '--json', '--key', admin.id]).stdout) as Array<{ keyId: string }>;
  assert.deepEqual([...new Set(byAdmin.map((r) => r.keyId))], [admin.id]);
  assert.equal(JSON.parse(run([HUB, '--json', '--since', '2999-01-01']).stdout).length, 0);
  const lines = run([HUB]);
  assert.equal(lines.code, 0, lines.stderr);
  assert.match(
    lines.stdout,
    /\tGET \/api\/line\/:hubId\/search\tq=予約&limit=2\t200\t2\t\d+\t127\.0\.0\.1\n/,
  );
  for (const out of [json.stdout, lines.stdout])
    assert.ok(!out.includes(read.key) && !out.includes(admin.key));
  const bad = run([HUB, '--since', 'yesterday']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--since: "yesterday" is not a day/);
});

test('Audit log on the account screen: the records with their key labels, never a key', async () => {
  const client = new AccountClient(server.url, PASSWORD);
  await client.signIn('auditor@example.com');
  const keys = await client.get('/account');
  assert.match(keys.text, new RegExp(`href="/account/hubs/${HUB}/audit">Audit log</a>`));
  const page = await client.get(`/account/hubs/${HUB}/audit`);
  assert.equal(page.status, 200);
  assert.match(page.text, /<h1>Audit log of hub 7830001<\/h1>/);
  // The endpoint as shown (it may break after a slash: <wbr>).
  assert.match(page.text.replaceAll('<wbr>', ''), /GET \/api\/line\/:hubId\/search/);
  assert.match(page.text, new RegExp(`reporting <code>${read.id}</code>`));
  assert.match(page.text, new RegExp(`ops <code>${admin.id}</code>`));
  assert.ok(!page.text.includes(read.key) && !page.text.includes(admin.key));
  const stranger = new AccountClient(server.url, PASSWORD);
  await server.accounts.add('stranger@example.com', [OTHER], PASSWORD);
  await stranger.signIn('stranger@example.com');
  assert.equal((await stranger.get(`/account/hubs/${HUB}/audit`)).status, 404);
});
