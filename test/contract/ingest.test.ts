/** CONTRACT §6.2: the ingest API (account-side messages, contact linking), read back through the API. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, messageEvent, signed, USER } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

let server: TestServer;
let ingestKey: string;
let readKey: string;
let otherHubIngestKey: string;
const HUB = '4242';
const SECRET = 'line-channel-secret-for-ingest-test';

function ingest(path: string, payload: unknown, key: string | null = ingestKey, method = 'POST') {
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return rawRequest(server.url, method, path, headers, raw);
}

const messagesPath = `/ingest/line/${HUB}/messages`;

async function answer() {
  const res = await rawRequest(server.url, 'GET', `/api/line/${HUB}/messages?apikey=${readKey}`);
  return JSON.parse(res.body.toString()) as Array<{
    lineId: string;
    vid: string;
    name: string;
    messages: Array<Record<string, string>>;
  }>;
}

const code = (res: { body: Buffer }) => JSON.parse(res.body.toString()).error.code;

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { lineChannelSecret: SECRET });
  await server.hubs.add('5353', {});
  ingestKey = (await server.keys.issue(HUB, 'ingest', 'sender')).key;
  readKey = (await server.keys.issue(HUB, 'read', 'reader')).key;
  otherHubIngestKey = (await server.keys.issue('5353', 'ingest', '')).key;
});
after(() => server?.close());

describe('authentication', () => {
  test('no key, a bad key, a read key, another hub, a bad hub id: refused before the body is read', async () => {
    assert.equal(code(await ingest(messagesPath, [], null)), 'missing_api_key');
    assert.equal(code(await ingest(messagesPath, [], 'chl_garbage')), 'invalid_api_key');
    const asRead = await ingest(messagesPath, [], readKey);
    assert.deepEqual([asRead.status, code(asRead)], [401, 'invalid_api_key']);
    assert.equal(
      JSON.parse(asRead.body.toString()).error.message,
      'this API key is of scope read, which cannot record messages; use a key of scope ingest',
    );
    const other = await ingest(messagesPath, [], otherHubIngestKey);
    assert.deepEqual([other.status, code(other)], [403, 'forbidden']);
    assert.equal(code(await ingest('/ingest/line/x1/messages', [])), 'invalid_hub_id');
    const badJsonNoKey = await ingest(messagesPath, '{not json', null);
    assert.equal(badJsonNoKey.status, 401);
    const basic = await rawRequest(
      server.url,
      'POST',
      messagesPath,
      { authorization: `Basic ${ingestKey}`, 'content-type': 'application/json' },
      '[]',
    );
    assert.equal(basic.status, 401);
  });

  test('an ingest key cannot read, and is told it is a key of another scope', async () => {
    const res = await rawRequest(server.url, 'GET', `/api/line/${HUB}/messages?apikey=${ingestKey}`);
    assert.deepEqual([res.status, code(res)], [401, 'invalid_api_key']);
    assert.equal(
      JSON.parse(res.body.toString()).error.message,
      'this API key is of scope ingest, which cannot read messages; use a key of scope read',
    );
    // A key that is not one (or no longer is) is not told anything about scopes.
    await server.keys.revoke((await server.keys.list(HUB)).find((k) => k.label === 'sender')?.id ?? '');
    const revoked = await rawRequest(server.url, 'GET', `/api/line/${HUB}/messages?apikey=${ingestKey}`);
    assert.match(JSON.parse(revoked.body.toString()).error.message, /mistyped, unknown or revoked/);
    ingestKey = (await server.keys.issue(HUB, 'ingest', 'sender again')).key;
  });
});

describe('account-side messages', () => {
  test('defaults: sender "You", contentType text, createdAt now; id makes a retry harmless', async () => {
    const before = Date.now();
    const batch = [
      { lineId: 'Uacc1', msg: 'Thanks for your order!\n🎁', id: 'crm-1' },
      {
        lineId: 'Uacc1',
        msg: '[Sticker]\nID: 1',
        contentType: 'sticker',
        createdAt: '2019-11-03T10:00:00.000Z',
        sender: 'Support',
        id: 'crm-2',
      },
    ];
    const first = await ingest(messagesPath, batch);
    assert.equal(first.status, 200);
    assert.deepEqual(JSON.parse(first.body.toString()), { stored: 2, duplicates: 0 });
    const retry = await ingest(messagesPath, batch);
    assert.deepEqual(JSON.parse(retry.body.toString()), { stored: 0, duplicates: 2 });
    const contacts = await answer();
    const messages = contacts.find((c) => c.lineId === 'Uacc1')?.messages ?? [];
    assert.equal(messages.length, 2);
    assert.deepEqual(messages[0], {
      sender: 'Support',
      msg: '[Sticker]\nID: 1',
      contentType: 'sticker',
      createdAt: '2019-11-03T10:00:00.000Z',
    });
    assert.equal(messages[1]?.sender, 'You');
    assert.equal(messages[1]?.contentType, 'text');
    assert.ok(Date.parse(messages[1]?.createdAt ?? '') >= before - 1000);
  });

  test('a bad record answers 400 naming its index and field, and nothing of the batch is stored', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        [
          { lineId: 'Ubad', msg: 'ok' },
          { lineId: 'Ubad', msg: 5 },
        ],
        /\[1\]\.msg: must be a string/,
      ],
      [[{ lineId: 'Ubad', msg: 'ok' }, { msg: 'no line id' }], /\[1\]\.lineId: is required/],
      [
        [{ lineId: 'Ubad', msg: 'ok', createdAt: '2019-02-30T00:00:00Z' }],
        /^body\[0\]\.createdAt: 2019-02-30 is not a real date$/,
      ],
      [
        [{ lineId: 'Ubad', msg: 'ok', createdAt: '2019-11-03 10:00:00Z' }],
        /\[0\]\.createdAt: must be an RFC 3339 date-time/,
      ],
      [[{ lineId: 'Ubad', msg: 'ok', contentType: '' }], /\[0\]\.contentType: must not be empty/],
      [['just a string'], /\[0\]: must be a JSON object/],
      [{ lineId: 'Ubad', msg: 'not an array' }, /JSON array/],
      [Array.from({ length: 1001 }, (_, i) => ({ lineId: 'Ubad', msg: String(i) })), /at most 1000/],
    ];
    for (const [payload, message] of cases) {
      const res = await ingest(messagesPath, payload);
      assert.equal(res.status, 400);
      const error = JSON.parse(res.body.toString()).error;
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, message);
    }
    assert.equal(await server.store.contacts.get(HUB, 'Ubad'), undefined);
    const notJson = await ingest(messagesPath, '[{"lineId":');
    assert.deepEqual([notJson.status, code(notJson)], [400, 'invalid_body']);
  });

  test('createdAt: the RFC 3339 date-times other languages write are stored to the millisecond', async () => {
    // Python isoformat(), Java Instant, Go RFC3339Nano, lower case, a leap second, -00:00.
    const written: Array<[string, string]> = [
      ['2019-11-03T19:15:00.123456+09:00', '2019-11-03T10:15:00.123Z'],
      ['2019-11-03T10:15:01.987654321Z', '2019-11-03T10:15:01.987Z'],
      ['2019-11-03t10:15:02z', '2019-11-03T10:15:02.000Z'],
      ['2019-11-03T05:15:03.5-05:00', '2019-11-03T10:15:03.500Z'],
      ['2019-11-03T10:15:04-00:00', '2019-11-03T10:15:04.000Z'],
      ['2016-12-31T23:59:60.25Z', '2016-12-31T23:59:59.999Z'],
    ];
    const res = await ingest(
      messagesPath,
      written.map(([createdAt], i) => ({ lineId: 'Urfc3339', msg: `m${i}`, createdAt })),
    );
    assert.equal(res.status, 200, res.body.toString());
    const stored = (await answer()).find((c) => c.lineId === 'Urfc3339')?.messages ?? [];
    assert.deepEqual(
      stored.map((m) => [m.msg, m.createdAt]).sort(),
      written.map(([, expected], i) => [`m${i}`, expected]).sort(),
    );
  });

  test('createdAt: what RFC 3339 refuses is refused, and the whole batch with it', async () => {
    for (const createdAt of [
      '2019-11-03 10:15:00Z',
      '2019-11-03T10:15:00+0900',
      '2019-11-03T10:15Z',
      '2019-11-03T10:15:00',
      '2019-11-03T12:00:60Z',
      '0000-01-01T00:00:00+09:00',
    ]) {
      const res = await ingest(messagesPath, [
        { lineId: 'Urefused', msg: 'fine' },
        { lineId: 'Urefused', msg: 'bad', createdAt },
      ]);
      assert.equal(res.status, 400, createdAt);
      const error = JSON.parse(res.body.toString()).error;
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, /^body\[1\]\.createdAt: must be an RFC 3339 date-time from 0000-01-01/);
    }
    assert.equal(await server.store.contacts.get(HUB, 'Urefused'), undefined);
  });

  test('1,000 messages in one request are accepted', async () => {
    const batch = Array.from({ length: 1000 }, (_, i) => ({
      lineId: 'Ubulk',
      msg: `m${i}`,
      id: `bulk-${i}`,
      createdAt: new Date(Date.UTC(2020, 0, 1, 0, 0, 0, i)).toISOString(),
    }));
    const res = await ingest(messagesPath, batch);
    assert.deepEqual(JSON.parse(res.body.toString()), { stored: 1000, duplicates: 0 });
  });
});

describe('contact linking', () => {
  test("PUT links the friend to a HubSpot contact; the friend's own messages, earlier ones too, carry the name", async () => {
    const raw = body([
      messageEvent(
        { id: 'link-1', type: 'text', text: 'hello from the friend' },
        { source: { type: 'user', userId: USER }, timestamp: 1_600_000_000_000 },
      ),
    ]);
    assert.equal(
      (await rawRequest(server.url, 'POST', `/webhooks/line/${HUB}`, signed(SECRET, raw), raw)).status,
      200,
    );
    let friend = (await answer()).find((c) => c.lineId === USER);
    assert.deepEqual([friend?.vid, friend?.name, friend?.messages[0]?.sender], ['', '', 'User']);

    const res = await ingest(
      `/ingest/line/${HUB}/contacts/${USER}`,
      { vid: 101, name: 'shinobu' },
      ingestKey,
      'PUT',
    );
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body.toString()), { lineId: USER, vid: '101', name: 'shinobu' });
    friend = (await answer()).find((c) => c.lineId === USER);
    assert.deepEqual([friend?.vid, friend?.name, friend?.messages[0]?.sender], ['101', 'shinobu', 'shinobu']);

    const renamed = await ingest(
      `/ingest/line/${HUB}/contacts/${USER}`,
      { name: 'Shinobu K.' },
      ingestKey,
      'PUT',
    );
    assert.deepEqual(JSON.parse(renamed.body.toString()), { lineId: USER, vid: '101', name: 'Shinobu K.' });
    assert.equal((await answer()).find((c) => c.lineId === USER)?.messages[0]?.sender, 'Shinobu K.');
  });

  test('bad contact bodies are refused', async () => {
    for (const payload of [{ vid: { x: 1 } }, { name: 42 }, [1], 'x']) {
      const res = await ingest(`/ingest/line/${HUB}/contacts/Unew`, payload, ingestKey, 'PUT');
      assert.equal(res.status, 400, JSON.stringify(payload));
    }
    const wrongMethod = await rawRequest(server.url, 'GET', `/ingest/line/${HUB}/contacts/Unew`);
    assert.deepEqual([wrongMethod.status, wrongMethod.headers.allow], [405, 'PUT']);
  });
});
