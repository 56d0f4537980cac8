/**
 * U+0000 in what clients send, on SQLite and (CHATLOG_TEST_STORE=postgres) PostgreSQL, whose text
 * cannot hold it: a LINE text, an ingest record's text, sender, id and contact, a search term, a
 * contact filter. Nothing answers 500 and nothing is lost: SQLite keeps U+0000 as it came,
 * PostgreSQL keeps U+FFFD in its place (src/store/postgres/postgres.sql.ts storable), and the LINE
 * event kept as sent (`line` in the feed) still holds U+0000.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { message, rawRequest, startTestServer, TEST_STORE_KIND, type TestServer } from '../helpers.js';

const SECRET = 'line-channel-secret-for-nul-test';
const HUB = '6060';
/** What the store keeps of U+0000. */
const KEPT = TEST_STORE_KIND === 'postgres' ? '\uFFFD' : '\u0000';
let server: TestServer;
let readKey = '';
let ingestKey = '';

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { lineChannelSecret: SECRET });
  readKey = (await server.keys.issue(HUB, 'read', '')).key;
  ingestKey = (await server.keys.issue(HUB, 'ingest', '')).key;
});
after(() => server?.close());

const get = async (path: string) => {
  const res = await rawRequest(server.url, 'GET', path);
  return { status: res.status, json: JSON.parse(res.body.toString('utf8')) };
};

test('a LINE text holding U+0000 is stored, answered and found', async () => {
  const raw = body([messageEvent({ type: 'text', id: '70001', quoteToken: 'q', text: 'a\u0000b 予約' })]);
  const res = await rawRequest(server.url, 'POST', `/webhooks/line/${HUB}`, signed(SECRET, raw), raw);
  assert.equal(res.status, 200, res.body.toString());

  const answer = await get(`/api/line/${HUB}/messages?apikey=${readKey}`);
  assert.equal(answer.status, 200);
  assert.deepEqual(
    answer.json.flatMap((c: { messages: Array<{ msg: string }> }) => c.messages.map((m) => m.msg)),
    [`a${KEPT}b 予約`],
  );
  const feed = await get(`/api/line/${HUB}/changes?apikey=${readKey}`);
  assert.equal(feed.status, 200);
  const [created] = feed.json.changes;
  assert.equal(created.message.msg, `a${KEPT}b 予約`);
  // LINE's event as it was sent: JSON, where U+0000 is written as an escape.
  assert.equal(created.line.message.text, 'a\u0000b 予約');

  const found = await get(`/api/line/${HUB}/search?q=${encodeURIComponent('予約')}&apikey=${readKey}`);
  assert.equal(found.status, 200);
  assert.equal(found.json.results.length, 1);
});

test('the ingest API takes U+0000 in every text, and a search term or filter of it is no error', async () => {
  const record = { lineId: 'Unul\u0000', msg: 'x\u0000y', sender: 'S\u0000', id: 'crm\u00001' };
  const sent = () =>
    rawRequest(
      server.url,
      'POST',
      `/ingest/line/${HUB}/messages`,
      { 'content-type': 'application/json', authorization: `Bearer ${ingestKey}` },
      JSON.stringify([record]),
    );
  const first = await sent();
  assert.equal(first.status, 200, first.body.toString());
  // Sent again: the same record, not a second message.
  const again = await sent();
  assert.equal(again.status, 200, again.body.toString());
  const answer = await get(`/api/line/${HUB}/messages?apikey=${readKey}`);
  const contact = answer.json.find((c: { lineId: string }) => c.lineId === `Unul${KEPT}`);
  assert.ok(contact, JSON.stringify(answer.json));
  assert.deepEqual(
    contact.messages.map((m: { msg: string; sender: string }) => [m.msg, m.sender]),
    [[`x${KEPT}y`, `S${KEPT}`]],
  );

  // Found by the text as it was sent, whether the search reads the index or not.
  for (const scanFirst of [0, 1000]) {
    const { hits } = await server.store.search.page({ hubId: HUB, terms: ['x\u0000y'], limit: 5, scanFirst });
    assert.deepEqual(
      hits.map((hit) => hit.message.msg),
      [`x${KEPT}y`],
      `scanFirst ${scanFirst}`,
    );
  }
  const found = await get(`/api/line/${HUB}/search?q=${encodeURIComponent('x\u0000y')}&apikey=${readKey}`);
  assert.equal(found.json.results?.length, 1, JSON.stringify(found.json));

  for (const path of [
    `/api/line/${HUB}/search?q=${encodeURIComponent('\u0000')}&apikey=${readKey}`,
    `/api/line/${HUB}/search?q=${encodeURIComponent('x\u0000y')}&apikey=${readKey}`,
    `/api/line/${HUB}/search?q=x&lineId=${encodeURIComponent('Unul\u0000')}&apikey=${readKey}`,
  ]) {
    const res = await rawRequest(server.url, 'GET', path);
    assert.ok(res.status < 500, `${path}: ${res.status} ${res.body.toString()}`);
  }
});

test('an import holding U+0000 in a contact and a source id is stored once, however often it comes', async () => {
  const hubId = '6061';
  await server.hubs.add(hubId, {});
  const rows = [
    message({
      lineId: 'Uimp\u0000',
      sourceId: 'import:\u00001',
      msg: 'i\u0000j',
      createdAt: 1_700_000_000_000,
    }),
    message({ lineId: 'Uimp\u0000', sourceId: 'import:\u00002', msg: 'k', createdAt: 1_700_000_000_001 }),
  ];
  const imported = async () =>
    server.store.messages.importAll(
      hubId,
      (async function* () {
        yield rows;
      })(),
      1,
    );
  assert.deepEqual(await imported(), { received: 2, inserted: 2, duplicates: 0, contactsCreated: 1 });
  assert.deepEqual(await imported(), { received: 2, inserted: 0, duplicates: 2, contactsCreated: 0 });
  const texts: string[] = [];
  for await (const batch of server.store.messages.stream({ hubId })) {
    texts.push(...batch.map((row) => `${row.lineId} ${row.msg}`));
  }
  assert.deepEqual(texts, [`Uimp${KEPT} i${KEPT}j`, `Uimp${KEPT} k`]);
});
