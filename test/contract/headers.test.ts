/**
 * What every answer of the API says about caching, errors included (CONTRACT §3), and the one rule
 * for bodies that are not sent as JSON (415, naming application/json), on every JSON endpoint.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { type RawResponse, rawRequest, startTestServer, type TestServer } from '../helpers.js';

let server: TestServer;
let readKey: string;
let ingestKey: string;
let limitedKey: string;
const HUB = '8080';
const SECRET = 'line-channel-secret-for-headers-test';

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { lineChannelSecret: SECRET });
  await server.hubs.add('9090', {});
  readKey = (await server.keys.issue(HUB, 'read', 'reader')).key;
  ingestKey = (await server.keys.issue(HUB, 'ingest', 'sender')).key;
  const limited = await server.keys.issue(HUB, 'read', 'limited');
  await server.keys.setRateLimit(limited.summary.id, { requests: 1, perSeconds: 3600 });
  limitedKey = limited.key;
});
after(() => server?.close());

const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const read = (query: string, path = `/api/line/${HUB}/messages`) => `${path}?${query}`;
const event = body([messageEvent({ id: '1', type: 'text', text: 'hi', quoteToken: 'q' })]);

/** [what, method, path, headers, body, expected status, depends on] */
type Case = [string, string, string, Record<string, string>, string | undefined, number, string | undefined];
const cases = (): Case[] => [
  ['read 200', 'GET', read(`apikey=${readKey}`), {}, undefined, 200, 'Accept-Encoding'],
  [
    'read 200 gzip',
    'GET',
    read(`apikey=${readKey}`),
    { 'accept-encoding': 'gzip' },
    undefined,
    200,
    'Accept-Encoding',
  ],
  ['read HEAD 200', 'HEAD', read(`apikey=${readKey}`), {}, undefined, 200, 'Accept-Encoding'],
  ['read 401 missing key', 'GET', read(''), {}, undefined, 401, 'Accept-Encoding'],
  ['read 401 ingest key', 'GET', read(`apikey=${ingestKey}`), {}, undefined, 401, 'Accept-Encoding'],
  [
    'read 400 hub id',
    'GET',
    read(`apikey=${readKey}`, '/api/line/x/messages'),
    {},
    undefined,
    400,
    'Accept-Encoding',
  ],
  [
    'read 403',
    'GET',
    read(`apikey=${readKey}`, '/api/line/9090/messages'),
    {},
    undefined,
    403,
    'Accept-Encoding',
  ],
  ['read 400 date', 'GET', read(`apikey=${readKey}&from=2024-02-30`), {}, undefined, 400, 'Accept-Encoding'],
  ['read 400 tz', 'GET', read(`apikey=${readKey}&tz=JST`), {}, undefined, 400, 'Accept-Encoding'],
  ['read 405', 'DELETE', read(`apikey=${readKey}`), {}, undefined, 405, 'Accept-Encoding'],
  [
    'read 400 malformed path',
    'GET',
    read(`apikey=${readKey}`, '/api/line/%zz/messages'),
    {},
    undefined,
    400,
    'Accept-Encoding',
  ],
  [
    'ingest 200',
    'POST',
    `/ingest/line/${HUB}/messages`,
    { ...json, ...bearer(ingestKey) },
    '[]',
    200,
    'Authorization',
  ],
  ['ingest 401', 'POST', `/ingest/line/${HUB}/messages`, json, '[]', 401, 'Authorization'],
  [
    'ingest 400',
    'POST',
    `/ingest/line/${HUB}/messages`,
    { ...json, ...bearer(ingestKey) },
    '{}',
    400,
    'Authorization',
  ],
  [
    'ingest 415',
    'POST',
    `/ingest/line/${HUB}/messages`,
    { 'content-type': 'text/plain', ...bearer(ingestKey) },
    '[]',
    415,
    'Authorization',
  ],
  ['ingest 405', 'GET', `/ingest/line/${HUB}/messages`, {}, undefined, 405, undefined],
  [
    'contact 200',
    'PUT',
    `/ingest/line/${HUB}/contacts/U1`,
    { ...json, ...bearer(ingestKey) },
    '{"vid":"1"}',
    200,
    'Authorization',
  ],
  ['webhook 200', 'POST', `/webhooks/line/${HUB}`, signed(SECRET, event), event, 200, undefined],
  ['webhook 401', 'POST', `/webhooks/line/${HUB}`, json, event, 401, undefined],
  ['unknown path 404', 'GET', '/api/nothing', {}, undefined, 404, undefined],
  [
    'account page 403 (a sign-in without the form token)',
    'POST',
    '/account/sign-in',
    { 'content-type': 'application/x-www-form-urlencoded' },
    'email=a%40example.com&password=b',
    403,
    undefined,
  ],
  ['healthz', 'GET', '/healthz', {}, undefined, 200, undefined],
  ['readyz', 'GET', '/readyz', {}, undefined, 200, undefined],
];

function varies(res: RawResponse): string[] {
  return String(res.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
}

describe('Cache-Control: private, no-store on every answer of the API, errors included', () => {
  test('each status of each endpoint, with Vary naming the header the answer depends on', async () => {
    for (const [what, method, path, headers, payload, status, dependsOn] of cases()) {
      const res = await rawRequest(server.url, method, path, headers, payload);
      assert.equal(res.status, status, `${what}: ${res.body.toString()}`);
      assert.equal(res.headers['cache-control'], 'private, no-store', what);
      if (dependsOn)
        assert.ok(varies(res).includes(dependsOn.toLowerCase()), `${what}: Vary ${res.headers.vary}`);
    }
  });

  test('a 429 too', async () => {
    await rawRequest(server.url, 'GET', read(`apikey=${limitedKey}`));
    const res = await rawRequest(server.url, 'GET', read(`apikey=${limitedKey}`));
    assert.equal(res.status, 429);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    assert.ok(varies(res).includes('accept-encoding'));
  });

  test('and the answers to requests that are not HTTP enough to route (400, 431)', async () => {
    for (const raw of [
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      `GET / HTTP/1.1\r\nX: ${'a'.repeat(40_000)}\r\n\r\n`,
    ]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => socket.end(raw));
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(answer, /^HTTP\/1\.1 4(00|31) /);
      assert.match(answer, /\r\nCache-Control: private, no-store\r\n/i);
    }
  });
});

describe('a body not sent as JSON: 415 naming application/json, on every JSON endpoint', () => {
  const endpoints = (): Array<[string, string, Record<string, string>, string]> => [
    ['POST', `/ingest/line/${HUB}/messages`, bearer(ingestKey), '[{"lineId":"U415","msg":"hi"}]'],
    ['PUT', `/ingest/line/${HUB}/contacts/U415`, bearer(ingestKey), '{"vid":"415"}'],
    [
      'POST',
      `/webhooks/line/${HUB}`,
      { 'x-line-signature': signed(SECRET, event)['x-line-signature'] ?? '' },
      event,
    ],
  ];
  for (const contentType of [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/x-www-form-urlencoded',
    'application/xml',
    undefined,
  ]) {
    test(`Content-Type: ${contentType ?? '(none)'}`, async () => {
      for (const [method, path, headers, payload] of endpoints()) {
        const sent = contentType ? { ...headers, 'content-type': contentType } : headers;
        const res = await rawRequest(server.url, method, path, sent, payload);
        assert.equal(res.status, 415, `${method} ${path}: ${res.body.toString()}`);
        const { error } = JSON.parse(res.body.toString());
        assert.equal(error.code, 'unsupported_media_type');
        assert.equal(error.message, 'the request body must be sent with Content-Type: application/json');
      }
      assert.equal(await server.store.contacts.get(HUB, 'U415'), undefined, 'nothing was stored');
    });
  }

  test('application/json in any case and with parameters is JSON', async () => {
    for (const contentType of ['application/json', 'Application/JSON', 'application/json; charset=utf-8']) {
      const res = await rawRequest(
        server.url,
        'POST',
        `/ingest/line/${HUB}/messages`,
        { ...bearer(ingestKey), 'content-type': contentType },
        '[{"lineId":"Ujson","msg":"hi"}]',
      );
      assert.equal(res.status, 200, `${contentType}: ${res.body.toString()}`);
    }
  });

  test('the key is still checked first: a bad key with a text body is 401, not 415', async () => {
    const res = await rawRequest(
      server.url,
      'POST',
      `/ingest/line/${HUB}/messages`,
      { 'content-type': 'text/plain' },
      '[]',
    );
    assert.equal(res.status, 401);
  });
});
