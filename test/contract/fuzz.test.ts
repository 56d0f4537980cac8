/**
 * Fuzzing against a real listening server (fast-check): requests of every shape on the read API
 * and the webhook. Never a 5xx, never a stack trace, never a byte of another hub's messages, and
 * the store unchanged by anything that was not a correctly signed webhook.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { collectAnswer } from '../../src/modules/messages/messages.serializer.js';
import { signed } from '../fixtures/line.js';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';

const CHANNEL_SECRET = 'fuzz-channel-secret-0000000001';
const OTHER_HUB_MARKER = 'OTHER-HUB-PRIVATE';
let server: TestServer;
let ownKey: string;
let otherKey: string;
let ingestKey: string;

async function digest(hubId: string): Promise<string> {
  const bytes = await collectAnswer(server.store.messages.stream({ hubId }));
  return createHash('sha256').update(bytes).digest('hex');
}

before(async () => {
  server = await startTestServer({ logLevel: 'warn' });
  await server.hubs.add('111', { timeZone: 'Asia/Tokyo', lineChannelSecret: CHANNEL_SECRET });
  await server.hubs.add('222', {});
  ownKey = (await server.keys.issue('111', 'read', '')).key;
  otherKey = (await server.keys.issue('222', 'read', '')).key;
  ingestKey = (await server.keys.issue('111', 'ingest', '')).key;
  await storeMessages(server.store, '111', [
    message({ lineId: 'U-own', msg: 'visible to hub 111', createdAt: Date.UTC(2024, 0, 5) }),
  ]);
  await storeMessages(
    server.store,
    '222',
    Array.from({ length: 5 }, (_, i) =>
      message({
        lineId: `U-other-${i}`,
        msg: `${OTHER_HUB_MARKER} ${i}`,
        createdAt: Date.UTC(2024, 0, 5 + i),
      }),
    ),
  );
});
after(() => server?.close());

const awkward = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '2024-01-05',
    '2024-02-30',
    '9999-12-31',
    '0000-01-01',
    'Asia/Tokyo',
    'Nowhere/x',
    '-1',
    '1e400',
  ),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'x'.repeat(n)),
);
/** A query value: percent-encoded, or raw bytes that are broken encodings. */
const queryValue = fc.oneof(
  awkward.map(encodeURIComponent),
  fc.constantFrom('%', '%Z', '%ZZ', '%00', '%FF%FE', '%E3%81', '+', '%2B', '&', '='),
);
const queryName = fc.constantFrom('apikey', 'from', 'to', 'tz', 'APIKEY', 'api%6Bey', 'x', '', 'from[]');
const pathPart = fc.oneof(
  fc.constantFrom('111', '222', '0', '', '..', '%2e%2e', '111%2F..%2F222', '%ZZ', '1'.repeat(30)),
  awkward.map(encodeURIComponent),
);

test('read API: random paths, methods and query strings never get a 5xx, a stack trace or another hub’s data', async (t) => {
  // Keys are only known once `before` ran: build the arbitraries here.
  const keyValue = fc.constantFrom(ownKey, otherKey, ingestKey, 'chl_', 'chl_0000000000000000000000000000');
  const query = fc
    .array(fc.tuple(queryName, fc.oneof(queryValue, keyValue.map(encodeURIComponent))), { maxLength: 6 })
    .map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join('&'));
  const request = fc.record({
    method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE'),
    path: fc.oneof(
      pathPart.map((hub) => `/api/line/${hub}/messages`),
      fc.tuple(pathPart, pathPart).map(([a, b]) => `/api/line/${a}/${b}`),
      fc.constantFrom('/api/line/111/messages/', '//api/line/111/messages', '/API/line/111/messages', '/'),
    ),
    query,
    headers: fc.dictionary(
      fc.constantFrom('accept-encoding', 'if-none-match', 'accept', 'x-request-id', 'range'),
      fc.string({ maxLength: 30 }).map((v) => v.replace(/[^\x20-\x7e]/g, '')),
      { maxKeys: 3 },
    ),
  });
  const before = [await digest('111'), await digest('222')];
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(request, async ({ method, path, query: q, headers }) => {
      cases += 1;
      const res = await rawRequest(server.url, method, `${path}?${q}`, headers);
      assert.ok(res.status < 500, `${method} ${path}?${q.slice(0, 200)} → ${res.status}`);
      const text = res.body.toString('latin1');
      assert.doesNotMatch(text, /\n\s+at |node_modules|Error:/, 'no stack trace or internals');
      // Hub 222's messages only for hub 222's own key, asking for hub 222.
      if (text.includes(OTHER_HUB_MARKER)) {
        const keys = new URLSearchParams(q).getAll('apikey');
        assert.ok(
          /^\/api\/line\/222\/messages\/?$/.test(path) && keys.length === 1 && keys[0] === otherKey,
          'never another hub’s messages',
        );
      }
      assert.ok(!text.includes(ownKey) && !text.includes(otherKey), 'never a key');
    }),
    { numRuns: 400 },
  );
  assert.deepEqual([await digest('111'), await digest('222')], before, 'the store is unchanged');
  t.diagnostic(`${cases} read API cases`);
});

test('webhook: random bodies and headers never get a 5xx; nothing unsigned is stored', async (t) => {
  const before = [await digest('111'), await digest('222')];
  const jsonish = fc.oneof(
    fc.json(),
    fc.jsonValue().map((v) => JSON.stringify({ destination: 'U0', events: [v] })),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom('', '{', '{"events":null}', '{"events":[{"type":"message"}]}', '[]', 'null'),
  );
  const hook = fc.record({
    hub: fc.constantFrom('111', '222', '999', 'abc', ''),
    body: jsonish,
    contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', ''),
    signature: fc.oneof(fc.constant('valid'), fc.constant('none'), fc.string({ maxLength: 60 })),
  });
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(hook, async ({ hub, body, contentType, signature }) => {
      cases += 1;
      const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
      if (signature !== 'none') {
        // A "valid" signature is made with the wrong secret here: only LINE's secret may store.
        const value =
          signature === 'valid' ? signed('not-the-channel-secret', body)['x-line-signature'] : signature;
        if (value !== undefined && /^[\x20-\x7e]*$/.test(value)) headers['x-line-signature'] = value;
      }
      const res = await rawRequest(server.url, 'POST', `/webhooks/line/${hub}`, headers, body);
      assert.ok(res.status < 500, `${hub} ${contentType} → ${res.status}`);
      assert.ok([401, 404, 405, 413, 415, 400].includes(res.status), `status ${res.status}`);
      assert.doesNotMatch(res.body.toString('latin1'), /\n\s+at |node_modules/);
    }),
    { numRuns: 300 },
  );
  assert.deepEqual([await digest('111'), await digest('222')], before, 'nothing was stored');
  t.diagnostic(`${cases} webhook cases`);
});

test('correctly signed random webhook bodies: 200 or a clear 4xx, never a 5xx, and the store stays sound', async (t) => {
  const event = fc.record(
    {
      type: fc.constantFrom('message', 'follow', 'unfollow', 'unsend', 'postback', 'join', 'somethingNew'),
      mode: fc.constantFrom('active', 'standby'),
      timestamp: fc.oneof(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constant(-1), fc.constant(1e20)),
      source: fc.oneof(
        fc.record({ type: fc.constant('user'), userId: fc.string({ maxLength: 40 }) }),
        fc.record(
          { type: fc.constant('group'), groupId: fc.string(), userId: fc.string() },
          { requiredKeys: ['type'] },
        ),
        fc.jsonValue(),
      ),
      webhookEventId: fc.string({ maxLength: 30 }),
      message: fc.record(
        {
          id: fc.string({ maxLength: 20 }),
          type: fc.constantFrom('text', 'sticker', 'image', 'file', 'location', 'mystery'),
          text: fc.string({ maxLength: 200 }),
          fileName: fc.string(),
          title: fc.string(),
          latitude: fc.double(),
        },
        { requiredKeys: [] },
      ),
      unsend: fc.record({ messageId: fc.string({ maxLength: 20 }) }),
    },
    { requiredKeys: ['type'] },
  );
  let cases = 0;
  let stored = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(event, { maxLength: 5 }), async (events) => {
      cases += 1;
      const body = JSON.stringify({ destination: 'U0', events });
      const res = await rawRequest(
        server.url,
        'POST',
        '/webhooks/line/111',
        signed(CHANNEL_SECRET, body),
        body,
      );
      assert.ok(
        res.status === 200 || res.status === 400,
        `→ ${res.status} ${res.body.toString().slice(0, 200)}`,
      );
      if (res.status === 200) stored += 1;
    }),
    { numRuns: 200 },
  );
  // Whatever was stored reads back as a valid answer; the other hub is untouched.
  const answer = await rawRequest(server.url, 'GET', `/api/line/111/messages?apikey=${ownKey}`);
  assert.equal(answer.status, 200);
  assert.ok(Array.isArray(JSON.parse(answer.body.toString('utf8'))));
  t.diagnostic(`${cases} signed webhook cases, ${stored} answered 200`);
});

test('isolation: with the keys of 12 hubs, every cross-hub request is refused and each answer holds only its hub', async () => {
  const hubs = Array.from({ length: 12 }, (_, i) => String(5000 + i));
  const keys = new Map<string, string>();
  for (const hubId of hubs) {
    await server.hubs.add(hubId, {});
    keys.set(hubId, (await server.keys.issue(hubId, 'read', '')).key);
    await storeMessages(server.store, hubId, [
      message({ lineId: `U-${hubId}`, msg: `only-for-${hubId}`, createdAt: Date.UTC(2024, 0, 1) }),
    ]);
  }
  let requests = 0;
  for (const [owner, key] of keys) {
    for (const hubId of hubs) {
      for (const query of ['', '&from=2024-01-01', '&to=2024-01-01&tz=Asia/Tokyo']) {
        const res = await rawRequest(server.url, 'GET', `/api/line/${hubId}/messages?apikey=${key}${query}`);
        requests += 1;
        const text = res.body.toString('utf8');
        if (hubId === owner) {
          assert.equal(res.status, 200);
          assert.deepEqual(
            text.match(/only-for-\d+/g),
            [`only-for-${owner}`],
            'its own messages, and nothing else',
          );
        } else {
          assert.equal(res.status, 403, `${owner}'s key on ${hubId}`);
          assert.ok(!text.includes('only-for-'), 'not a byte of another hub');
        }
      }
    }
  }
  assert.equal(requests, 12 * 12 * 3);
});
