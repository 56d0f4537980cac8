/**
 * Stoplight Prism's validating proxy (`prism proxy --errors`) in front of a live chatlog server:
 * every request below goes through Prism, which checks the request against the document, forwards
 * it, and checks the answer (status, headers, body) against the document. With --errors, any
 * violation turns the answer into Prism's own application/problem+json error, and any warning shows
 * in its sl-violations header: each request must come back as chatlog sent it, with neither.
 *
 * The spread covers every documented status of every operation that a request can provoke through
 * a proxy; the last test checks that the rest are listed in THROUGH_A_PROXY_UNREACHABLE with why.
 *
 * HEAD is the exception: Prism 5.14.2 parses the body of every answer labelled application/json
 * (utils/parseResponse.js), and a HEAD answer, rightly labelled as its GET's, has none ("invalid
 * json response body ... Unexpected end of JSON input", answered as Prism's own 500). So each HEAD
 * goes straight to chatlog, and must answer what its GET answered through Prism: the same status
 * and headers, no body.
 *
 * Over 400 lines because every request of the document goes through one Prism proxy, started once.
 */
// sqlite-only: Prism checks answers against the document, whose shapes do not depend on the store; the same
// answers' values are the contract tests', which run on both stores
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Signature } from '@hubspot/api-client';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { Store } from '../../src/store/store.js';
import { type FakeLine, startFakeLine } from '../fixtures/fake-line.js';
import { type Receiver, startReceiver } from '../fixtures/receiver.js';
import { freePort, type RawResponse, rawRequest, startTestServer, type TestServer } from '../helpers.js';
import { REPO_ROOT, type ServedDocument, servedDocument, TOOL_ENV } from './document.js';

/** Documented statuses no request through Prism can provoke, and why. Keys: "operationId status". */
const THROUGH_A_PROXY_UNREACHABLE: Record<string, string> = {};
const unreachable = (operations: string[], status: string, why: string) => {
  for (const operation of operations) THROUGH_A_PROXY_UNREACHABLE[`${operation} ${status}`] = why;
};
const HEALTH = ['health', 'headHealth', 'ready', 'headReady'];
const ALL = [
  'getMessages',
  'headMessages',
  'receiveLineWebhook',
  'recordMessages',
  'linkContact',
  'getChanges',
  'addWebhook',
  'listWebhooks',
  'removeWebhook',
  'getContent',
  'searchMessages',
  'eraseContact',
  'receiveHubspotWebhook',
  'receiveHubspotChannelMessage',
  'sendMessages',
  'getSend',
  'getReport',
];
unreachable(
  ALL,
  '405',
  'a method the document does not list for the path: Prism answers 405 itself (NO_METHOD_MATCHED_ERROR)',
);
unreachable(
  [...ALL, ...HEALTH],
  '408',
  'Prism reads the whole request before it forwards it, so chatlog never sees a request arrive slowly',
);
unreachable(
  [...ALL, ...HEALTH],
  '431',
  "Prism's own HTTP server (Node, 16 KiB of headers, as chatlog) refuses the request first",
);
unreachable(
  ['recordMessages', 'linkContact', 'receiveHubspotWebhook', 'receiveHubspotChannelMessage'],
  '400',
  'only a request the document refuses gets it (the server accepts exactly what the schemas accept, ' +
    'test/contract/openapi.test.ts): Prism refuses such a request itself (422)',
);
unreachable(
  ['receiveLineWebhook', 'linkContact'],
  '404',
  "an empty path parameter (/webhooks/line/) fails the parameter's schema: Prism refuses the request itself (422)",
);
unreachable(
  ['recordMessages'],
  '413',
  "a body over 16 MiB: Prism's body parser stops at 10 MB and answers 413 itself, with its own body",
);
unreachable(
  ['receiveLineWebhook', 'recordMessages', 'linkContact', 'addWebhook'],
  '415',
  'a body that is not application/json: Prism refuses a media type the operation does not list (422) itself',
);

const HUB = '6662225';
const HUBSPOT_SECRET = 'prism-hubspot-client-secret';
const OTHER_HUB = '4242';
const CHANNEL_SECRET = 'prism-test-channel-secret';
const LINE_ID = 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3';
/** A hub with a LINE access token, whose media are downloaded from a local fake of LINE. */
const MEDIA_HUB = '5150';
const ACCESS_TOKEN = 'prism-test-access-token';
let line: FakeLine;
let mediaReadKey: string;
let mediaIngestKey: string;
let limitedMediaKey: string;

let server: TestServer;
let served: ServedDocument;
let prism: ChildProcess;
let prismUrl: string;
let prismOutput = '';
let readKey: string;
let ingestKey: string;
let otherHubReadKey: string;
let otherHubIngestKey: string;
let limitedReadKey: string;
let limitedIngestKey: string;
let limitedChangesKey: string;
let limitedSearchKey: string;
let limitedReportKey: string;
let adminKey: string;
let otherHubAdminKey: string;
let limitedAdminKey: string;
/** Where the endpoints added through Prism are sent their changes. */
let receiver: Receiver;
/** "operationId status" of every answer that came back through Prism unchanged. */
const provoked = new Set<string>();
/** "operationId status" of HEAD answers equal to their GET's, which came through Prism. */
const headsLikeTheirGet = new Set<string>();
/** "operationId status" of the answers a proxy cannot reach, asked of chatlog directly and checked. */
const checkedDirectly = new Set<string>();
let requestsSent = 0;
let headsSent = 0;

before(async () => {
  receiver = await startReceiver();
  line = await startFakeLine({ token: ACCESS_TOKEN });
  // Endpoints on 127.0.0.1 (the receiver) are accepted, as with CHATLOG_WEBHOOK_ALLOW_PRIVATE=true.
  server = await startTestServer({
    logLevel: 'silent',
    webhookAllowPrivate: true,
    lineApiBaseUrl: line.base,
    lineApiDataBaseUrl: line.base,
    hubspotClientSecret: HUBSPOT_SECRET,
  });
  await server.hubs.add(MEDIA_HUB, {
    lineChannelSecret: CHANNEL_SECRET,
    lineChannelAccessToken: ACCESS_TOKEN,
  });
  mediaReadKey = (await server.keys.issue(MEDIA_HUB, 'read', 'prism')).key;
  mediaIngestKey = (await server.keys.issue(MEDIA_HUB, 'ingest', 'prism')).key;
  const limitedMedia = await server.keys.issue(MEDIA_HUB, 'read', 'prism limited media');
  await server.keys.setRateLimit(limitedMedia.summary.id, { requests: 1, perSeconds: 600 });
  limitedMediaKey = limitedMedia.key;
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo', lineChannelSecret: CHANNEL_SECRET });
  await server.hubs.add(OTHER_HUB, {});
  readKey = (await server.keys.issue(HUB, 'read', 'prism')).key;
  ingestKey = (await server.keys.issue(HUB, 'ingest', 'prism')).key;
  otherHubReadKey = (await server.keys.issue(OTHER_HUB, 'read', 'prism')).key;
  otherHubIngestKey = (await server.keys.issue(OTHER_HUB, 'ingest', 'prism')).key;
  const limitedRead = await server.keys.issue(HUB, 'read', 'prism limited');
  await server.keys.setRateLimit(limitedRead.summary.id, { requests: 1, perSeconds: 600 });
  limitedReadKey = limitedRead.key;
  const limitedIngest = await server.keys.issue(HUB, 'ingest', 'prism limited');
  await server.keys.setRateLimit(limitedIngest.summary.id, { requests: 1, perSeconds: 600 });
  limitedIngestKey = limitedIngest.key;
  // Its own limited read key: the rate limit counts per key, and getMessages spends limitedReadKey's.
  const limitedChanges = await server.keys.issue(HUB, 'read', 'prism limited changes');
  await server.keys.setRateLimit(limitedChanges.summary.id, { requests: 1, perSeconds: 600 });
  limitedChangesKey = limitedChanges.key;
  const limitedSearch = await server.keys.issue(HUB, 'read', 'prism limited search');
  await server.keys.setRateLimit(limitedSearch.summary.id, { requests: 1, perSeconds: 600 });
  limitedSearchKey = limitedSearch.key;
  const limitedReport = await server.keys.issue(HUB, 'read', 'prism limited reports');
  await server.keys.setRateLimit(limitedReport.summary.id, { requests: 1, perSeconds: 600 });
  limitedReportKey = limitedReport.key;
  adminKey = (await server.keys.issue(HUB, 'admin', 'prism')).key;
  otherHubAdminKey = (await server.keys.issue(OTHER_HUB, 'admin', 'prism')).key;
  const limitedAdmin = await server.keys.issue(HUB, 'admin', 'prism limited');
  await server.keys.setRateLimit(limitedAdmin.summary.id, { requests: 1, perSeconds: 600 });
  limitedAdminKey = limitedAdmin.key;

  served = await servedDocument();
  const port = await freePort();
  prismUrl = `http://127.0.0.1:${port}`;
  prism = spawn(
    path.join(REPO_ROOT, 'node_modules', '.bin', 'prism'),
    ['proxy', '--errors', '--port', String(port), '--host', '127.0.0.1', served.file, server.url],
    { env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prism.stdout?.on('data', (chunk: Buffer) => {
    prismOutput += chunk.toString();
  });
  prism.stderr?.on('data', (chunk: Buffer) => {
    prismOutput += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    // Every way out stops the poll: a poll left running would keep the test process alive.
    const fail = (error: Error) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`Prism did not start in 30 s:\n${prismOutput}`)), 30_000);
    const exited = (code: number | null) =>
      fail(new Error(`Prism exited (${code}) before listening:\n${prismOutput}`));
    prism.once('exit', exited);
    const poll = setInterval(() => {
      if (!/Prism is listening/.test(prismOutput)) return;
      clearInterval(poll);
      clearTimeout(timer);
      prism.off('exit', exited);
      resolve();
    }, 50);
  });
});

after(async () => {
  if (prism && prism.exitCode === null) {
    const exited = new Promise((resolve) => prism.once('exit', resolve));
    prism.kill('SIGTERM');
    await exited;
  }
  served?.cleanUp();
  await server?.close();
  await receiver?.close();
  await line?.close();
});

/**
 * One request through Prism. It must come back with `status`, as chatlog sent it: no Prism error
 * (a violation, with --errors) and no sl-violations header (a warning).
 */
async function through(
  operationId: string,
  status: number,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  requestsSent += 1;
  const res = await rawRequest(
    prismUrl,
    method,
    pathAndQuery,
    { 'accept-encoding': 'identity', ...headers },
    body,
  );
  const text = res.body.toString('utf8');
  const what = `${method} ${pathAndQuery.replace(/chl_\w+/g, 'chl_…')} → ${res.status}`;
  assert.ok(
    !String(res.headers['content-type']).startsWith('application/problem+json'),
    `${what}: Prism answered itself: ${text}`,
  );
  assert.equal(res.headers['sl-violations'], undefined, `${what}: Prism saw violations`);
  assert.equal(res.status, status, `${what}, expected ${status}: ${text}`);
  provoked.add(`${operationId} ${status}`);
  return res;
}

/** Headers a HEAD answer has as its GET had them (others, such as Date, may differ by a tick). */
const SAME_IN_HEAD = [
  'content-type',
  'cache-control',
  'vary',
  'etag',
  'www-authenticate',
  'ratelimit-policy',
];

/**
 * GET through Prism (checked there), then HEAD straight to chatlog: the same status and headers,
 * no body. `headOperationId` is the HEAD operation of the document.
 */
async function getThenHead(
  getOperationId: string,
  headOperationId: string,
  status: number,
  pathAndQuery: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const get = await through(getOperationId, status, 'GET', pathAndQuery, headers);
  headsSent += 1;
  const head = await rawRequest(server.url, 'HEAD', pathAndQuery, {
    'accept-encoding': 'identity',
    ...headers,
  });
  const what = `HEAD ${pathAndQuery.replace(/chl_\w+/g, 'chl_…')}`;
  assert.equal(head.status, status, what);
  assert.equal(head.body.length, 0, `${what}: no body`);
  for (const name of SAME_IN_HEAD) assert.equal(head.headers[name], get.headers[name], `${what}: ${name}`);
  headsLikeTheirGet.add(`${headOperationId} ${status}`);
  return get;
}

const messagesPath = (hubId: string, query: string) => `/api/line/${hubId}/messages?${query}`;
const changesPath = (hubId: string, query = '') => `/api/line/${hubId}/changes${query ? `?${query}` : ''}`;
const searchPath = (hubId: string, query: string) => `/api/line/${hubId}/search?${query}`;
const reportPath = (hubId: string, query: string) => `/api/line/${hubId}/reports?${query}`;
const webhooksPath = (hubId: string, query = '') => `/api/line/${hubId}/webhooks${query ? `?${query}` : ''}`;
const webhookPath = (hubId: string, id: string, query = '') =>
  `/api/line/${hubId}/webhooks/${encodeURIComponent(id)}${query ? `?${query}` : ''}`;
const contentPath = (hubId: string, id: string, query = '') =>
  `/api/line/${hubId}/content/${id}${query ? `?${query}` : ''}`;
const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ ...json, authorization: `Bearer ${key}` });
const sign = (body: string) => createHmac('sha256', CHANNEL_SECRET).update(body).digest('base64');

/** Every function of the store answers `error` until the returned function puts them back. */
function failingStore(store: Store, error: Error): () => void {
  const restores: Array<() => void> = [];
  const replace = (target: object, name: string) => {
    const original = Reflect.get(target, name);
    if (typeof original !== 'function') return;
    Reflect.set(target, name, async () => {
      throw error;
    });
    restores.push(() => Reflect.set(target, name, original));
  };
  for (const part of [
    store.hubs,
    store.keys,
    store.messages,
    store.contacts,
    store.changes,
    store.webhooks,
    store.content,
    store.sends,
    store.hubspot,
  ] as object[]) {
    if (!part) continue;
    for (const name of Object.keys(part)) replace(part, name);
    for (let proto = Object.getPrototypeOf(part); proto && proto !== Object.prototype; ) {
      for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor') replace(part, name);
      proto = Object.getPrototypeOf(proto);
    }
  }
  replace(store, 'ready');
  return () => {
    for (const restore of restores.reverse()) restore();
  };
}

const webhookBody = (messageId: string, text: string) =>
  JSON.stringify({
    destination: 'U0123456789abcdef0123456789abcdef',
    events: [
      {
        type: 'message',
        mode: 'active',
        timestamp: Date.UTC(2019, 10, 3, 1, 2, 11, 120),
        source: { type: 'user', userId: LINE_ID },
        webhookEventId: `01FZ74A0TDDPYRVKNK77XK${messageId.slice(-4)}`,
        deliveryContext: { isRedelivery: false },
        message: { id: messageId, type: 'text', text },
      },
    ],
  });

test('the LINE webhook through Prism: 200, 400, 401, 413', async () => {
  const body = webhookBody('444573844083572737', 'こんにちは！');
  // Prism forwards the body as JSON.stringify of what it parsed: a compact body keeps its bytes.
  await through(
    'receiveLineWebhook',
    200,
    'POST',
    `/webhooks/line/${HUB}`,
    { ...json, 'x-line-signature': sign(body) },
    body,
  );
  const sticker = JSON.stringify({
    destination: 'U0123456789abcdef0123456789abcdef',
    events: [
      {
        type: 'message',
        timestamp: Date.UTC(2019, 10, 3, 1, 6, 45),
        source: { type: 'user', userId: LINE_ID },
        message: { id: '444573844083572738', type: 'sticker', packageId: '446', stickerId: '1988' },
      },
      { type: 'follow', timestamp: Date.UTC(2019, 10, 3), source: { type: 'user', userId: 'Unew' } },
    ],
  });
  await through(
    'receiveLineWebhook',
    200,
    'POST',
    `/webhooks/line/${HUB}`,
    { ...json, 'x-line-signature': sign(sticker) },
    sticker,
  );
  // Signed, of the documented shape, but an event without a type: not a webhook body.
  const typeless = JSON.stringify({ events: [{ timestamp: 1 }] });
  await through(
    'receiveLineWebhook',
    400,
    'POST',
    `/webhooks/line/${HUB}`,
    { ...json, 'x-line-signature': sign(typeless) },
    typeless,
  );
  await through(
    'receiveLineWebhook',
    401,
    'POST',
    `/webhooks/line/${HUB}`,
    { ...json, 'x-line-signature': sign(`${body} `) },
    body,
  );
  await through(
    'receiveLineWebhook',
    401,
    'POST',
    `/webhooks/line/${OTHER_HUB}`,
    { ...json, 'x-line-signature': sign(body) },
    body,
  );
  const large = JSON.stringify({ destination: 'x'.repeat(1024 * 1024), events: [] });
  await through(
    'receiveLineWebhook',
    413,
    'POST',
    `/webhooks/line/${HUB}`,
    { ...json, 'x-line-signature': sign(large) },
    large,
  );
});

test("HubSpot's webhook through Prism: 200, 401, 413 (400 directly)", async () => {
  // Signed by HubSpot's own library over the URL chatlog is called at (Prism forwards to it).
  const hubspot = (status: number, body: string, timestamp = Date.now(), secret = HUBSPOT_SECRET) =>
    through(
      'receiveHubspotWebhook',
      status,
      'POST',
      '/webhooks/hubspot',
      {
        ...json,
        'x-hubspot-request-timestamp': String(timestamp),
        'x-hubspot-signature-v3': Signature.getSignature('POST', 'v3', {
          signature: '',
          clientSecret: secret,
          requestBody: body,
          url: `${server.url}/webhooks/hubspot`,
          timestamp,
        }),
      },
      body,
    );
  const deletion = JSON.stringify([
    { eventId: 1, portalId: Number(HUB), subscriptionType: 'contact.privacyDeletion', objectId: 987654 },
  ]);
  const done = await hubspot(200, deletion);
  assert.deepEqual(JSON.parse(done.body.toString()), { erased: { contacts: 0, messages: 0 } });
  // 400 needs a body the document refuses (Prism answers 422 itself): asked of chatlog directly.
  const notEvents = JSON.stringify([1, 2]);
  const timestamp = Date.now();
  await direct(
    'receiveHubspotWebhook',
    400,
    'POST',
    '/webhooks/hubspot',
    {
      ...json,
      'x-hubspot-request-timestamp': String(timestamp),
      'x-hubspot-signature-v3': Signature.getSignature('POST', 'v3', {
        signature: '',
        clientSecret: HUBSPOT_SECRET,
        requestBody: notEvents,
        url: `${server.url}/webhooks/hubspot`,
        timestamp,
      }),
    },
    notEvents,
  );
  await hubspot(401, deletion, Date.now() - 10 * 60_000);
  await hubspot(401, deletion, Date.now(), 'not-the-app-client-secret');
  const large = JSON.stringify([{ portalId: 1, subscriptionType: 'x'.repeat(1024 * 1024) }]);
  await hubspot(413, large);
});

/** A HubSpot webhook request to `path`, signed by HubSpot's own library over the URL chatlog is called at. */
function signedByHubspot(path: string, body: string, timestamp = Date.now(), secret = HUBSPOT_SECRET) {
  return {
    ...json,
    'x-hubspot-request-timestamp': String(timestamp),
    'x-hubspot-signature-v3': Signature.getSignature('POST', 'v3', {
      signature: '',
      clientSecret: secret,
      requestBody: body,
      url: `${server.url}${path}`,
      timestamp,
    }),
  };
}

/** An agent's reply as HubSpot's custom channel sends it (of a channel account no hub holds). */
const agentReply = JSON.stringify({
  type: 'OUTGOING_CHANNEL_MESSAGE_CREATED',
  portalId: '6662225',
  channelIntegrationThreadIds: [LINE_ID],
  message: {
    id: 'hs-1',
    channelAccountId: 'ca-none',
    text: 'ありがとうございます',
    client: { clientType: 'HUBSPOT' },
  },
});

test("HubSpot's custom-channel webhook through Prism: 200, 401, 413 (400 directly)", async () => {
  const path = '/webhooks/hubspot/channel';
  const channel = (status: number, body: string, timestamp = Date.now(), secret = HUBSPOT_SECRET) =>
    through(
      'receiveHubspotChannelMessage',
      status,
      'POST',
      path,
      signedByHubspot(path, body, timestamp, secret),
      body,
    );
  const done = await channel(200, agentReply);
  assert.deepEqual(JSON.parse(done.body.toString()), { sends: [], ignored: 1 });
  const notEvents = JSON.stringify([1, 2]);
  await direct(
    'receiveHubspotChannelMessage',
    400,
    'POST',
    path,
    signedByHubspot(path, notEvents),
    notEvents,
  );
  await channel(401, agentReply, Date.now() - 10 * 60_000);
  await channel(401, agentReply, Date.now(), 'not-the-app-client-secret');
  await channel(413, JSON.stringify({ type: 'x'.repeat(1024 * 1024) }));
});

test('the ingest API through Prism: 200, 401, 403, 413, 429', async () => {
  const messages = JSON.stringify([
    { lineId: LINE_ID, msg: 'Thanks, see you on the 10th!', id: 'crm-8812' },
    { lineId: LINE_ID, msg: 'hi' },
    {
      lineId: LINE_ID,
      msg: '[Sticker]\nID: 1988',
      contentType: 'sticker',
      sender: 'Reservations desk',
      id: 'crm-8813',
      createdAt: '2019-11-03t19:15:00.123456789+09:00',
    },
    { lineId: LINE_ID, msg: 'null is absent', contentType: null, sender: null, id: null, createdAt: null },
    { lineId: LINE_ID, msg: 'leap', createdAt: '2016-12-31T23:59:60Z' },
  ]);
  const record = (status: number, key: string, payload = '[]') =>
    through('recordMessages', status, 'POST', `/ingest/line/${HUB}/messages`, bearer(key), payload);
  const stored = await record(200, ingestKey, messages);
  assert.deepEqual(JSON.parse(stored.body.toString()), { stored: 5, duplicates: 0 });
  const again = await record(200, ingestKey, messages);
  assert.deepEqual(JSON.parse(again.body.toString()), { stored: 3, duplicates: 2 });
  await record(200, ingestKey);
  await record(401, 'chl_0000000000000000000000000000');
  await record(401, readKey);
  await record(403, otherHubIngestKey);
  await record(200, limitedIngestKey);
  await record(429, limitedIngestKey);

  const link = (status: number, key: string, payload: string) =>
    through('linkContact', status, 'PUT', `/ingest/line/${HUB}/contacts/${LINE_ID}`, bearer(key), payload);
  const linked = await link(200, ingestKey, '{"vid":"101","name":"shinobu"}');
  assert.deepEqual(JSON.parse(linked.body.toString()), { lineId: LINE_ID, vid: '101', name: 'shinobu' });
  await link(200, ingestKey, '{"vid":101}');
  await link(200, ingestKey, '{}');
  await link(401, 'chl_0000000000000000000000000000', '{}');
  await link(401, readKey, '{}');
  await link(403, otherHubIngestKey, '{}');
  // Fields the schema does not name are allowed (and ignored): a large one reaches the body limit.
  await link(413, ingestKey, JSON.stringify({ note: 'x'.repeat(1024 * 1024) }));
  await link(429, limitedIngestKey, '{}');
});

test('the read API through Prism (GET; HEAD alike): 200, 304, 400, 401, 403, 429', async () => {
  const read = (status: number, query: string, headers: Record<string, string> = {}) =>
    getThenHead('getMessages', 'headMessages', status, messagesPath(HUB, query), headers);
  const day = `apikey=${readKey}&from=2019-11-03&to=2019-11-04`;
  const answer = await read(200, day);
  assert.ok(JSON.parse(answer.body.toString()).length > 0, 'the range holds data');
  await read(200, `apikey=${readKey}`);
  await read(200, `apikey=${readKey}&from=2030-01-01`);
  await read(200, `apikey=${readKey}&to=2019-11-03&tz=Japan`);
  await read(200, `apikey=${readKey}&from=2019-11-03&tz=America/Los_Angeles`);
  await through('getMessages', 200, 'GET', messagesPath(HUB, `apikey=${readKey}&tz=UTC`), {
    'accept-encoding': 'gzip',
  });
  await read(304, day, { 'if-none-match': String(answer.headers.etag) });
  await read(400, `apikey=${readKey}&from=2019-11-05&to=2019-11-04`);
  await read(400, `apikey=${readKey}&tz=CST`);
  await read(400, `apikey=${readKey}&tz=JST`);
  await read(400, `apikey=${readKey}&tz=Mars/Olympus_Mons`);
  await read(401, 'apikey=chl_0000000000000000000000000000');
  const otherScope = await read(401, `apikey=${ingestKey}`);
  assert.match(
    JSON.parse(otherScope.body.toString()).error.message,
    /scope/,
    'an ingest key is told its scope',
  );
  await read(403, `apikey=${otherHubReadKey}`);
  // One request of the limited key per window: the first GET spends it.
  await through('getMessages', 200, 'GET', messagesPath(HUB, `apikey=${limitedReadKey}`));
  await read(429, `apikey=${limitedReadKey}`);
});

interface FeedPage {
  changes: Array<{ seq: string; type: string; id?: string }>;
  cursor: string;
  hasMore: boolean;
}

test('the change feed through Prism: 200, 400, 401, 403, 410, 429', async () => {
  const feed = async (query: string, headers: Record<string, string> = {}): Promise<FeedPage> =>
    JSON.parse((await through('getChanges', 200, 'GET', changesPath(HUB, query), headers)).body.toString());
  const auth = { authorization: `Bearer ${readKey}` };
  // The earlier tests' webhook and ingest messages, LINE's own objects included.
  const all = await feed('', auth);
  assert.ok(all.changes.length > 0, 'the feed holds the earlier messages');
  assert.ok(
    all.changes.some((c) => c.type === 'message.created'),
    'with message.created changes',
  );
  assert.equal(all.hasMore, false);
  assert.deepEqual(await feed(`apikey=${readKey}`), all, 'the key in the query works as in the header');
  const first = await feed('limit=1', auth);
  assert.equal(first.changes.length, 1);
  assert.equal(first.hasMore, all.changes.length > 1);
  const next = await feed(`cursor=${first.cursor}&limit=1000&wait=0`, auth);
  assert.deepEqual(
    next.changes.map((c) => c.seq),
    all.changes.slice(1).map((c) => c.seq),
  );
  // Caught up: the cursor given comes back, after a wait of one second with nothing.
  assert.deepEqual(await feed(`cursor=${all.cursor}&wait=1`, auth), {
    changes: [],
    cursor: all.cursor,
    hasMore: false,
  });
  // Long polling: held through Prism until a change commits.
  const held = feed(`cursor=${all.cursor}&wait=20`, auth);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const woke = await rawRequest(
    server.url,
    'POST',
    `/ingest/line/${HUB}/messages`,
    bearer(ingestKey),
    JSON.stringify([{ lineId: LINE_ID, msg: 'wakes the feed', id: 'prism-feed-wake' }]),
  );
  assert.equal(woke.status, 200);
  assert.deepEqual(
    (await held).changes.map((c) => c.id),
    ['prism-feed-wake'],
  );

  const refused = async (status: number, query: string, headers: Record<string, string>) =>
    JSON.parse((await through('getChanges', status, 'GET', changesPath(HUB, query), headers)).body.toString())
      .error.code;
  assert.equal(await refused(400, `apikey=${readKey}`, auth), 'ambiguous_credentials');
  assert.equal(await refused(400, 'cursor=garbage', auth), 'invalid_cursor');
  const otherHubCursor = (
    JSON.parse(
      (
        await through('getChanges', 200, 'GET', changesPath(OTHER_HUB), {
          authorization: `Bearer ${otherHubReadKey}`,
        })
      ).body.toString(),
    ) as FeedPage
  ).cursor;
  assert.equal(await refused(400, `cursor=${otherHubCursor}`, auth), 'invalid_cursor');
  const noKey = 'chl_0000000000000000000000000000';
  assert.equal(await refused(401, '', { authorization: `Bearer ${noKey}` }), 'invalid_api_key');
  assert.equal(await refused(401, `apikey=${noKey}`, {}), 'invalid_api_key');
  assert.equal(await refused(403, '', { authorization: `Bearer ${ingestKey}` }), 'insufficient_scope');
  assert.equal(await refused(403, `apikey=${otherHubReadKey}`, {}), 'forbidden');
  // One request of the limited key per window: the first spends it.
  await feed(`apikey=${limitedChangesKey}`);
  assert.equal(await refused(429, `apikey=${limitedChangesKey}`, {}), 'rate_limited');

  // 410: a cursor from before a contact change that was dropped (as if CHATLOG_CHANGES_KEEP_DAYS
  // had passed). Last here: the drop expires every cursor this test took before it.
  const before = (await feed(`cursor=${all.cursor}`, auth)).cursor;
  const renamed = await rawRequest(
    server.url,
    'PUT',
    `/ingest/line/${HUB}/contacts/${LINE_ID}`,
    bearer(ingestKey),
    '{"name":"renamed for the feed"}',
  );
  assert.equal(renamed.status, 200);
  const after = await feed(`cursor=${before}`, auth);
  assert.deepEqual(
    after.changes.map((c) => c.type),
    ['contact.updated'],
  );
  assert.ok((await server.store.changes.dropBefore(Date.now() + 1000)) >= 1);
  assert.equal(await refused(410, `cursor=${before}`, auth), 'cursor_expired');
  assert.deepEqual((await feed(`cursor=${after.cursor}`, auth)).changes, []);
});

interface SearchPage {
  results: Array<{ id: string; message: { msg: string } }>;
  cursor: string;
  hasMore: boolean;
}

test('search through Prism: 200, 400, 401, 403, 429', async () => {
  const auth = { authorization: `Bearer ${readKey}` };
  const ingested = await rawRequest(
    server.url,
    'POST',
    `/ingest/line/${HUB}/messages`,
    bearer(ingestKey),
    JSON.stringify([
      { lineId: LINE_ID, msg: 'ご予約ありがとうございます', id: 'prism-search-1' },
      { lineId: LINE_ID, msg: '予約の変更', id: 'prism-search-2' },
    ]),
  );
  assert.equal(ingested.status, 200);
  const q = `q=${encodeURIComponent('予約')}`;
  const found = async (query: string, headers: Record<string, string> = {}): Promise<SearchPage> =>
    JSON.parse(
      (await through('searchMessages', 200, 'GET', searchPath(HUB, query), headers)).body.toString(),
    );
  const all = await found(q, auth);
  assert.deepEqual(
    all.results.map((r) => r.id),
    ['prism-search-2', 'prism-search-1'],
  );
  assert.deepEqual(await found(`${q}&apikey=${readKey}`), all, 'the key in the query works as in the header');
  const first = await found(`${q}&limit=1&from=2020-01-01&tz=UTC&lineId=${LINE_ID}`, auth);
  assert.equal(first.hasMore, true);
  const next = await found(
    `${q}&limit=1&from=2020-01-01&tz=UTC&lineId=${LINE_ID}&cursor=${first.cursor}`,
    auth,
  );
  assert.deepEqual(
    next.results.map((r) => r.id),
    ['prism-search-1'],
  );

  const refused = async (status: number, query: string, headers: Record<string, string>) =>
    JSON.parse(
      (await through('searchMessages', status, 'GET', searchPath(HUB, query), headers)).body.toString(),
    ).error.code;
  assert.equal(await refused(400, `${q}&apikey=${readKey}`, auth), 'ambiguous_credentials');
  assert.equal(await refused(400, 'q=%20', auth), 'invalid_query');
  assert.equal(await refused(400, `${q}&from=2024-05-02&to=2024-05-01`, auth), 'invalid_range');
  assert.equal(await refused(400, `${q}&tz=Mars%2FBase`, auth), 'invalid_time_zone');
  assert.equal(await refused(400, `${q}&cursor=garbage`, auth), 'invalid_cursor');
  assert.equal(await refused(400, `q=other&cursor=${first.cursor}`, auth), 'invalid_cursor');
  const noKey = 'chl_0000000000000000000000000000';
  assert.equal(await refused(401, q, { authorization: `Bearer ${noKey}` }), 'invalid_api_key');
  assert.equal(await refused(403, q, { authorization: `Bearer ${ingestKey}` }), 'insufficient_scope');
  assert.equal(await refused(403, `${q}&apikey=${otherHubReadKey}`, {}), 'forbidden');
  await found(`${q}&apikey=${limitedSearchKey}`);
  assert.equal(await refused(429, `${q}&apikey=${limitedSearchKey}`, {}), 'rate_limited');
});

test('reports through Prism: 200, 400, 401, 403, 429', async () => {
  const auth = { authorization: `Bearer ${readKey}` };
  const range = 'from=2026-11-01&to=2026-11-28';
  const ok = await through('getReport', 200, 'GET', reportPath(HUB, range), auth);
  const report = JSON.parse(ok.body.toString()) as { days: unknown[]; hours: number[][] };
  assert.equal(report.days.length, 28);
  await through('getReport', 200, 'GET', reportPath(HUB, `${range}&tz=UTC&apikey=${readKey}`), {});
  const refused = async (status: number, query: string, headers: Record<string, string>) =>
    JSON.parse((await through('getReport', status, 'GET', reportPath(HUB, query), headers)).body.toString())
      .error.code;
  assert.equal(await refused(400, `${range}&apikey=${readKey}`, auth), 'ambiguous_credentials');
  assert.equal(await refused(400, 'from=2026-11-28&to=2026-11-01', auth), 'invalid_range');
  assert.equal(await refused(400, 'from=2025-01-01&to=2026-01-02', auth), 'range_too_long');
  assert.equal(await refused(400, `${range}&tz=Mars%2FBase`, auth), 'invalid_time_zone');
  const noKey = 'chl_0000000000000000000000000000';
  assert.equal(await refused(401, range, { authorization: `Bearer ${noKey}` }), 'invalid_api_key');
  assert.equal(await refused(403, range, { authorization: `Bearer ${ingestKey}` }), 'insufficient_scope');
  assert.equal(await refused(403, `${range}&apikey=${otherHubReadKey}`, {}), 'forbidden');
  await through('getReport', 200, 'GET', reportPath(HUB, `${range}&apikey=${limitedReportKey}`), {});
  assert.equal(await refused(429, `${range}&apikey=${limitedReportKey}`, {}), 'rate_limited');
});

/** A signed LINE webhook with one image message to the media hub (its content held by LINE). */
async function sendImage(messageId: string): Promise<void> {
  const body = JSON.stringify({
    destination: 'U0123456789abcdef0123456789abcdef',
    events: [
      {
        type: 'message',
        mode: 'active',
        timestamp: Date.UTC(2019, 10, 3, 1, 2, 11, 120),
        source: { type: 'user', userId: LINE_ID },
        webhookEventId: `01FZ74A0TDDPYRVKNK77XM${messageId.slice(-4)}`,
        deliveryContext: { isRedelivery: false },
        message: { id: messageId, type: 'image', contentProvider: { type: 'line' } },
      },
    ],
  });
  const res = await rawRequest(
    server.url,
    'POST',
    `/webhooks/line/${MEDIA_HUB}`,
    { ...json, 'x-line-signature': sign(body) },
    body,
  );
  assert.equal(res.status, 200);
}

test('media content through Prism: 200, 202, 206, 304, 400, 401, 403, 404, 416, 429', async () => {
  const bytes = Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7) & 255));
  line.setContent('770001', { bytes, contentType: 'image/jpeg' });
  // Still downloading (LINE trickles it) while the test runs.
  line.setContent('770002', { bytes, contentType: 'image/jpeg', trickleMs: 60_000 });
  await sendImage('770001');
  await sendImage('770002');
  const auth = { authorization: `Bearer ${mediaReadKey}` };
  const deadline = Date.now() + 20_000;
  while ((await rawRequest(server.url, 'GET', contentPath(MEDIA_HUB, '770001'), auth)).status !== 200) {
    assert.ok(Date.now() < deadline, 'the image was downloaded');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Prism 5 passes a body on as text (bytes that are not UTF-8 come out changed), so the bytes
  // themselves are compared straight from chatlog; Prism checks status and headers.
  const whole = await through('getContent', 200, 'GET', contentPath(MEDIA_HUB, '770001'), auth);
  assert.equal(whole.headers['content-type'], 'image/jpeg');
  assert.deepEqual((await rawRequest(server.url, 'GET', contentPath(MEDIA_HUB, '770001'), auth)).body, bytes);
  const etag = String(whole.headers.etag);
  await through('getContent', 200, 'GET', contentPath(MEDIA_HUB, '770001', `apikey=${mediaReadKey}`));
  const part = await through('getContent', 206, 'GET', contentPath(MEDIA_HUB, '770001'), {
    ...auth,
    range: 'bytes=100-199',
  });
  assert.equal(part.headers['content-range'], `bytes 100-199/${bytes.length}`);
  await through('getContent', 304, 'GET', contentPath(MEDIA_HUB, '770001'), {
    ...auth,
    'if-none-match': etag,
  });
  await through('getContent', 416, 'GET', contentPath(MEDIA_HUB, '770001'), {
    ...auth,
    range: `bytes=${bytes.length}-`,
  });
  const pending = await through('getContent', 202, 'GET', contentPath(MEDIA_HUB, '770002'), auth);
  assert.match(String(pending.headers['retry-after']), /^\d+$/);
  await through('getContent', 404, 'GET', contentPath(MEDIA_HUB, '999999'), auth);
  await through('getContent', 400, 'GET', contentPath(MEDIA_HUB, '770001', `apikey=${mediaReadKey}`), auth);
  await through('getContent', 401, 'GET', contentPath(MEDIA_HUB, '770001'), {
    authorization: `Bearer chl_${'x'.repeat(43)}`,
  });
  // No key at all: Prism answers 401 itself (its security check), so that one goes straight to chatlog.
  const keyless = await direct('getContent', 401, 'GET', contentPath(MEDIA_HUB, '770001'));
  assert.equal(JSON.parse(keyless.body.toString()).error.code, 'missing_api_key');
  await through('getContent', 403, 'GET', contentPath(MEDIA_HUB, '770001'), {
    authorization: `Bearer ${mediaIngestKey}`,
  });
  await through('getContent', 403, 'GET', contentPath(MEDIA_HUB, '770001', `apikey=${otherHubReadKey}`));
  await through('getContent', 200, 'GET', contentPath(MEDIA_HUB, '770001', `apikey=${limitedMediaKey}`));
  await through('getContent', 429, 'GET', contentPath(MEDIA_HUB, '770001', `apikey=${limitedMediaKey}`));
});

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  secret?: string;
  createdAt?: string;
  disabledAt?: string | null;
}

test('the webhook admin API through Prism: 201, 200, 204, 400, 401, 403, 404, 429', async () => {
  const admin = bearer(adminKey);
  const parsed = <T>(res: RawResponse): T => JSON.parse(res.body.toString()) as T;
  const code = (res: RawResponse) => parsed<{ error: { code: string } }>(res).error.code;
  const add = (status: number, headers: Record<string, string>, body: object, query = '', hubId = HUB) =>
    through('addWebhook', status, 'POST', webhooksPath(hubId, query), headers, JSON.stringify(body));
  const list = (status: number, headers: Record<string, string>, query = '') =>
    through('listWebhooks', status, 'GET', webhooksPath(HUB, query), headers);
  const remove = (status: number, id: string, headers: Record<string, string>, query = '', hubId = HUB) =>
    through('removeWebhook', status, 'DELETE', webhookPath(hubId, id, query), headers);

  // 201: the secret is in this answer only; events default to every type.
  const every = parsed<Endpoint>(await add(201, admin, { url: receiver.url }));
  assert.deepEqual(Object.keys(every), ['id', 'url', 'events', 'secret']);
  assert.equal(every.url, receiver.url);
  assert.match(String(every.secret), /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  assert.deepEqual(every.events, [
    'message.created',
    'message.deleted',
    'contact.updated',
    'contact.erased',
    'retention.applied',
  ]);
  const onlyDeleted = parsed<Endpoint>(
    await add(201, json, { url: receiver.url, events: ['message.deleted'] }, `apikey=${adminKey}`),
  );
  assert.deepEqual(onlyDeleted.events, ['message.deleted']);
  const nullEvents = parsed<Endpoint>(await add(201, admin, { url: `${receiver.url}/all`, events: null }));
  assert.deepEqual(nullEvents.events, every.events);
  assert.notEqual(nullEvents.secret, every.secret);

  // The secret answered 201 verifies what the endpoint is sent.
  receiver.secret = String(every.secret);
  receiver.received.length = 0;
  const ingested = await rawRequest(
    server.url,
    'POST',
    `/ingest/line/${HUB}/messages`,
    bearer(ingestKey),
    JSON.stringify([{ lineId: LINE_ID, msg: 'told to the endpoint', id: 'prism-webhook-told' }]),
  );
  assert.equal(ingested.status, 200);
  const told = (await receiver.waitFor(1)).find((r) => r.payload.data.id === 'prism-webhook-told');
  assert.equal(told?.payload.type, 'message.created');

  // 200: oldest first, never a secret; the key in the query works as in the header.
  const listed = parsed<Endpoint[]>(await list(200, { authorization: `Bearer ${adminKey}` }));
  assert.deepEqual(
    listed.map((e) => [e.id, e.events.length, e.disabledAt]),
    [
      [every.id, 5, null],
      [onlyDeleted.id, 1, null],
      [nullEvents.id, 5, null],
    ],
  );
  assert.ok(!JSON.stringify(listed).includes('whsec_'), 'no secret is listed');
  assert.deepEqual(parsed<Endpoint[]>(await list(200, {}, `apikey=${adminKey}`)), listed);

  // 204, then 404 for an id the hub no longer has, or never had, or that is another hub's.
  await remove(204, onlyDeleted.id, { authorization: `Bearer ${adminKey}` });
  await remove(204, nullEvents.id, {}, `apikey=${adminKey}`);
  assert.deepEqual(
    parsed<Endpoint[]>(await list(200, { authorization: `Bearer ${adminKey}` })).map((e) => e.id),
    [every.id],
  );
  assert.equal(code(await remove(404, onlyDeleted.id, { authorization: `Bearer ${adminKey}` })), 'not_found');
  assert.equal(code(await remove(404, 'whe_never', { authorization: `Bearer ${adminKey}` })), 'not_found');
  const theirs = parsed<Endpoint>(
    await add(201, bearer(otherHubAdminKey), { url: receiver.url }, '', OTHER_HUB),
  );
  assert.equal(code(await remove(404, theirs.id, { authorization: `Bearer ${adminKey}` })), 'not_found');
  await remove(204, theirs.id, { authorization: `Bearer ${otherHubAdminKey}` }, '', OTHER_HUB);

  // 400: both kinds of credentials; a URL chatlog will not send to (the document allows any string).
  const both = `apikey=${adminKey}`;
  assert.equal(code(await add(400, admin, { url: receiver.url }, both)), 'ambiguous_credentials');
  assert.equal(code(await list(400, { authorization: `Bearer ${adminKey}` }, both)), 'ambiguous_credentials');
  assert.equal(
    code(await remove(400, every.id, { authorization: `Bearer ${adminKey}` }, both)),
    'ambiguous_credentials',
  );
  for (const url of [
    'ftp://example.com/hook',
    'not a url',
    'http://169.254.169.254/latest/meta-data/',
    'https://[fe80::1]/hook',
    'https://192.0.2.10/hook',
  ]) {
    assert.equal(code(await add(400, admin, { url })), 'invalid_url', url);
  }

  // 401: not a key of this service; 403: a key of another scope, or of another hub.
  const noKey = 'chl_0000000000000000000000000000';
  for (const [status, key, expected] of [
    [401, noKey, 'invalid_api_key'],
    [403, readKey, 'insufficient_scope'],
    [403, ingestKey, 'insufficient_scope'],
    [403, otherHubAdminKey, 'forbidden'],
  ] as const) {
    assert.equal(code(await add(status, bearer(key), { url: receiver.url })), expected);
    assert.equal(code(await list(status, {}, `apikey=${key}`)), expected);
    assert.equal(code(await remove(status, every.id, { authorization: `Bearer ${key}` })), expected);
  }

  // 429: one request of the limited key per window, whichever operation; the first spends it.
  await list(200, { authorization: `Bearer ${limitedAdminKey}` });
  assert.equal(code(await add(429, bearer(limitedAdminKey), { url: receiver.url })), 'rate_limited');
  assert.equal(code(await list(429, {}, `apikey=${limitedAdminKey}`)), 'rate_limited');
  assert.equal(
    code(await remove(429, every.id, { authorization: `Bearer ${limitedAdminKey}` })),
    'rate_limited',
  );

  // None of the refused requests removed anything; the last endpoint goes too.
  assert.deepEqual(
    parsed<Endpoint[]>(await list(200, { authorization: `Bearer ${adminKey}` })).map((e) => e.id),
    [every.id],
  );
  await remove(204, every.id, { authorization: `Bearer ${adminKey}` });
});

test('erasing a contact through Prism: 200, 400, 401, 403, 404, 429', async () => {
  const contactPath = (hubId: string, lineId: string, query = '') =>
    `/api/line/${hubId}/contacts/${lineId}${query ? `?${query}` : ''}`;
  const erase = (status: number, lineId: string, headers: Record<string, string>, query = '', hubId = HUB) =>
    through('eraseContact', status, 'DELETE', contactPath(hubId, lineId, query), headers);
  const code = (res: RawResponse) =>
    (JSON.parse(res.body.toString()) as { error: { code: string } }).error.code;
  const admin = { authorization: `Bearer ${adminKey}` };
  const lineId = 'U9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b';
  const stored = await rawRequest(
    server.url,
    'POST',
    `/ingest/line/${HUB}/messages`,
    bearer(ingestKey),
    JSON.stringify([
      { lineId, msg: 'erase me' },
      { lineId, msg: 'and me' },
    ]),
  );
  assert.equal(stored.status, 200);

  // Refused first (nothing erased): both credentials, not a key, another scope or hub.
  assert.equal(code(await erase(400, lineId, admin, `apikey=${adminKey}`)), 'ambiguous_credentials');
  for (const [status, key, expected] of [
    [401, 'chl_0000000000000000000000000000', 'invalid_api_key'],
    [403, readKey, 'insufficient_scope'],
    [403, otherHubAdminKey, 'forbidden'],
  ] as const) {
    assert.equal(code(await erase(status, lineId, { authorization: `Bearer ${key}` })), expected);
  }
  const limited = await server.keys.issue(HUB, 'admin', 'prism limited erasure');
  await server.keys.setRateLimit(limited.summary.id, { requests: 1, perSeconds: 600 });
  assert.equal(
    code(await erase(404, 'Unobody', { authorization: `Bearer ${limited.key}` })),
    'contact_not_found',
  );
  assert.equal(code(await erase(429, lineId, {}, `apikey=${limited.key}`)), 'rate_limited');

  // 200 once, then 404: the contact is gone.
  const erased = await erase(200, lineId, {}, `apikey=${adminKey}`);
  assert.deepEqual(JSON.parse(erased.body.toString()), { erased: { messages: 2 } });
  assert.equal(code(await erase(404, lineId, admin)), 'contact_not_found');
});

test('replying to a LINE friend through Prism: 202, 200, 400, 401, 403, 404, 409, 429', async () => {
  const code = (res: RawResponse) =>
    (JSON.parse(res.body.toString()) as { error: { code: string } }).error.code;
  const sendPath = (hubId: string, lineId: string, query = '') =>
    `/api/line/${hubId}/contacts/${lineId}/messages${query ? `?${query}` : ''}`;
  const statusPath = (hubId: string, id: string, query = '') =>
    `/api/line/${hubId}/sends/${id}${query ? `?${query}` : ''}`;
  const body = JSON.stringify({ messages: [{ type: 'text', text: 'ご予約ありがとうございます。' }] });
  // A friend of each hub: the media hub has an access token, HUB has none.
  for (const [hubId, key] of [
    [MEDIA_HUB, mediaIngestKey],
    [HUB, ingestKey],
  ] as const) {
    const stored = await rawRequest(
      server.url,
      'POST',
      `/ingest/line/${hubId}/messages`,
      bearer(key),
      JSON.stringify([{ lineId: LINE_ID, msg: '予約できますか' }]),
    );
    assert.equal(stored.status, 200);
  }
  const sendKey = (await server.keys.issue(MEDIA_HUB, 'send', 'prism')).key;
  const hubSendKey = (await server.keys.issue(HUB, 'send', 'prism')).key;
  const limited = await server.keys.issue(MEDIA_HUB, 'send', 'prism limited');
  await server.keys.setRateLimit(limited.summary.id, { requests: 1, perSeconds: 600 });

  const accepted = await through(
    'sendMessages',
    202,
    'POST',
    sendPath(MEDIA_HUB, LINE_ID),
    bearer(sendKey),
    body,
  );
  const { send } = JSON.parse(accepted.body.toString()) as { send: { id: string } };
  await through('getSend', 200, 'GET', statusPath(MEDIA_HUB, send.id), {
    authorization: `Bearer ${sendKey}`,
  });
  await through('getSend', 200, 'GET', statusPath(MEDIA_HUB, send.id, `apikey=${mediaReadKey}`), {});
  assert.equal(
    code(await through('sendMessages', 404, 'POST', sendPath(MEDIA_HUB, 'Unobody'), bearer(sendKey), body)),
    'contact_not_found',
  );
  assert.equal(
    code(await through('sendMessages', 409, 'POST', sendPath(HUB, LINE_ID), bearer(hubSendKey), body)),
    'no_channel_access_token',
  );
  assert.equal(
    code(
      await through('getSend', 404, 'GET', statusPath(MEDIA_HUB, 'never'), {
        authorization: `Bearer ${sendKey}`,
      }),
    ),
    'not_found',
  );
  assert.equal(
    code(
      await through(
        'sendMessages',
        400,
        'POST',
        sendPath(MEDIA_HUB, LINE_ID, `apikey=${sendKey}`),
        bearer(sendKey),
        body,
      ),
    ),
    'ambiguous_credentials',
  );
  assert.equal(
    code(
      await through('getSend', 400, 'GET', statusPath(MEDIA_HUB, send.id, `apikey=${sendKey}`), {
        authorization: `Bearer ${sendKey}`,
      }),
    ),
    'ambiguous_credentials',
  );
  for (const [status, key, expected] of [
    [401, 'chl_0000000000000000000000000000', 'invalid_api_key'],
    [403, mediaReadKey, 'insufficient_scope'],
    [403, hubSendKey, 'forbidden'],
  ] as const) {
    assert.equal(
      code(await through('sendMessages', status, 'POST', sendPath(MEDIA_HUB, LINE_ID), bearer(key), body)),
      expected,
    );
  }
  for (const [status, key, expected] of [
    [401, 'chl_0000000000000000000000000000', 'invalid_api_key'],
    [403, mediaIngestKey, 'insufficient_scope'],
    [403, hubSendKey, 'forbidden'],
  ] as const) {
    assert.equal(
      code(
        await through('getSend', status, 'GET', statusPath(MEDIA_HUB, send.id), {
          authorization: `Bearer ${key}`,
        }),
      ),
      expected,
    );
  }
  await through('getSend', 200, 'GET', statusPath(MEDIA_HUB, send.id), {
    authorization: `Bearer ${limited.key}`,
  });
  assert.equal(
    code(await through('sendMessages', 429, 'POST', sendPath(MEDIA_HUB, LINE_ID), bearer(limited.key), body)),
    'rate_limited',
  );
  assert.equal(
    code(
      await through('getSend', 429, 'GET', statusPath(MEDIA_HUB, send.id), {
        authorization: `Bearer ${limited.key}`,
      }),
    ),
    'rate_limited',
  );
});

test('the health checks through Prism (GET; HEAD alike): 200', async () => {
  await getThenHead('health', 'headHealth', 200, '/healthz');
  await getThenHead('ready', 'headReady', 200, '/readyz');
});

test('a store that cannot answer (503, with Retry-After) and an unexpected fault (500), through Prism', async () => {
  // Used once before the store fails, so that the key is known (as every other key here).
  const storeDownSendKey = (await server.keys.issue(MEDIA_HUB, 'send', 'prism store down')).key;
  await rawRequest(server.url, 'GET', `/api/line/${MEDIA_HUB}/sends/never`, {
    authorization: `Bearer ${storeDownSendKey}`,
  });
  const unavailable = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const fault = new Error('an unexpected fault');
  for (const [status, error] of [
    [503, unavailable],
    [500, fault],
  ] as const) {
    const restore = failingStore(server.store, error);
    try {
      // A range not asked before, so the answer cannot come from the answer cache.
      await getThenHead(
        'getMessages',
        'headMessages',
        status,
        messagesPath(HUB, `apikey=${readKey}&from=2031-01-0${status === 503 ? 1 : 2}`),
      );
      const body = webhookBody(`44457384408357${status}`, 'while the store is down');
      await through(
        'receiveLineWebhook',
        status,
        'POST',
        `/webhooks/line/${HUB}`,
        { ...json, 'x-line-signature': sign(body) },
        body,
      );
      await through(
        'recordMessages',
        status,
        'POST',
        `/ingest/line/${HUB}/messages`,
        bearer(ingestKey),
        JSON.stringify([{ lineId: LINE_ID, msg: 'while the store is down' }]),
      );
      await through(
        'linkContact',
        status,
        'PUT',
        `/ingest/line/${HUB}/contacts/${LINE_ID}`,
        bearer(ingestKey),
        '{}',
      );
      await through('getChanges', status, 'GET', changesPath(HUB), { authorization: `Bearer ${readKey}` });
      await through(
        'addWebhook',
        status,
        'POST',
        webhooksPath(HUB),
        bearer(adminKey),
        JSON.stringify({ url: receiver.url }),
      );
      await through('listWebhooks', status, 'GET', webhooksPath(HUB), {
        authorization: `Bearer ${adminKey}`,
      });
      await through('removeWebhook', status, 'DELETE', webhookPath(HUB, 'whe_never'), {
        authorization: `Bearer ${adminKey}`,
      });
      await through('getContent', status, 'GET', contentPath(MEDIA_HUB, 'never'), {
        authorization: `Bearer ${mediaReadKey}`,
      });
      await through('searchMessages', status, 'GET', searchPath(HUB, 'q=x'), {
        authorization: `Bearer ${readKey}`,
      });
      await through('getReport', status, 'GET', reportPath(HUB, 'from=2026-11-01&to=2026-11-02'), {
        authorization: `Bearer ${readKey}`,
      });
      const deletion = JSON.stringify([
        { portalId: Number(HUB), subscriptionType: 'contact.privacyDeletion', objectId: 1 },
      ]);
      const timestamp = Date.now();
      await through(
        'receiveHubspotWebhook',
        status,
        'POST',
        '/webhooks/hubspot',
        {
          ...json,
          'x-hubspot-request-timestamp': String(timestamp),
          'x-hubspot-signature-v3': Signature.getSignature('POST', 'v3', {
            signature: '',
            clientSecret: HUBSPOT_SECRET,
            requestBody: deletion,
            url: `${server.url}/webhooks/hubspot`,
            timestamp,
          }),
        },
        deletion,
      );
      await through(
        'receiveHubspotChannelMessage',
        status,
        'POST',
        '/webhooks/hubspot/channel',
        signedByHubspot('/webhooks/hubspot/channel', agentReply),
        agentReply,
      );
      await through('eraseContact', status, 'DELETE', `/api/line/${HUB}/contacts/Unobody`, {
        authorization: `Bearer ${adminKey}`,
      });
      await through(
        'sendMessages',
        status,
        'POST',
        `/api/line/${MEDIA_HUB}/contacts/${LINE_ID}/messages`,
        bearer(storeDownSendKey),
        JSON.stringify({ messages: [{ type: 'text', text: 'while the store is down' }] }),
      );
      await through('getSend', status, 'GET', `/api/line/${MEDIA_HUB}/sends/never`, {
        authorization: `Bearer ${storeDownSendKey}`,
      });
      if (status === 503) await getThenHead('ready', 'headReady', 503, '/readyz');
    } finally {
      restore();
    }
  }
});

interface DocumentedAnswer {
  headers?: Record<string, { required?: boolean; schema: object }>;
  content?: { 'application/json': { schema: object } };
}

/**
 * Straight to chatlog, for the statuses a proxy cannot reach: the answer must be the documented one
 * (its body valid against the documented schema, its required headers present and valid), as Prism
 * would check it.
 */
async function direct(
  operationId: string,
  status: number,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const res = await rawRequest(server.url, method, pathAndQuery, headers, body);
  const what = `${method} ${pathAndQuery.slice(0, 80)} → ${res.status}`;
  assert.equal(res.status, status, `${what}: ${res.body.toString().slice(0, 300)}`);
  const paths = served.document.paths as Record<
    string,
    Record<string, { operationId: string; responses: Record<string, DocumentedAnswer> }>
  >;
  const operation = Object.values(paths)
    .flatMap((operations) => Object.values(operations))
    .find((o) => o.operationId === operationId);
  const answer = operation?.responses[String(status)];
  assert.ok(answer, `${operationId} documents ${status}`);
  const ajv = new Ajv({ strict: false });
  addFormats.default(ajv);
  const components = (served.document.components as { schemas: Record<string, object> }).schemas;
  for (const [name, schema] of Object.entries(components))
    ajv.addSchema(schema, `#/components/schemas/${name}`);
  for (const [name, header] of Object.entries(answer.headers ?? {})) {
    const value = res.headers[name.toLowerCase()];
    if (header.required) assert.ok(value !== undefined, `${what}: ${name} is required`);
    if (value !== undefined) {
      const read = (header.schema as { type?: string }).type === 'integer' ? Number(value) : value;
      assert.ok(ajv.validate(header.schema, read), `${what}: ${name}: ${value} ${ajv.errorsText()}`);
    }
  }
  const schema = answer.content?.['application/json'].schema;
  if (schema) {
    assert.match(String(res.headers['content-type']), /^application\/json/, what);
    const parsed = JSON.parse(res.body.toString('utf8'));
    assert.ok(ajv.validate(schema, parsed), `${what}: ${JSON.stringify(parsed)} ${ajv.errorsText()}`);
  }
  checkedDirectly.add(`${operationId} ${status}`);
  return res;
}

test('the statuses a proxy cannot reach, asked of chatlog directly, answer as the document says', async () => {
  const messages = `/ingest/line/${HUB}/messages`;
  const contact = `/ingest/line/${HUB}/contacts/${LINE_ID}`;
  await direct('recordMessages', 400, 'POST', messages, bearer(ingestKey), '[{"msg":"no lineId"}]');
  await direct(
    'recordMessages',
    400,
    'POST',
    messages,
    bearer(ingestKey),
    '[{"lineId":"U1","msg":"x","createdAt":"2019-11-03 10:15:00Z"}]',
  );
  await direct('recordMessages', 400, 'POST', '/ingest/line/abc/messages', bearer(ingestKey), '[]');
  await direct('linkContact', 400, 'PUT', contact, bearer(ingestKey), '{"vid":true}');
  // What the document refuses (Prism would answer 422 itself), checked against the document here.
  const feedKey = { authorization: `Bearer ${readKey}` };
  for (const [query, code] of [
    ['limit=0', 'invalid_limit'],
    ['limit=1001', 'invalid_limit'],
    ['wait=31', 'invalid_wait'],
    ['limit=1&limit=2', 'duplicate_parameter'],
  ] as const) {
    const res = await direct('getChanges', 400, 'GET', changesPath(HUB, query), feedKey);
    assert.equal(JSON.parse(res.body.toString()).error.code, code, query);
  }
  await direct('getChanges', 400, 'GET', changesPath('abc'), feedKey);
  for (const [query, code] of [
    ['', 'invalid_query'],
    ['q=x&limit=0', 'invalid_limit'],
    ['q=x&limit=101', 'invalid_limit'],
    ['q=x&from=2023-02-29', 'invalid_date'],
    ['q=x&q=y', 'duplicate_parameter'],
  ] as const) {
    const res = await direct('searchMessages', 400, 'GET', searchPath(HUB, query), feedKey);
    assert.equal(JSON.parse(res.body.toString()).error.code, code, query);
  }
  for (const [query, code] of [
    ['to=2026-11-02', 'invalid_date'],
    ['from=2023-02-29&to=2023-03-01', 'invalid_date'],
    ['from=2026-11-01&from=2026-11-01&to=2026-11-02', 'duplicate_parameter'],
  ] as const) {
    const res = await direct('getReport', 400, 'GET', reportPath(HUB, query), feedKey);
    assert.equal(JSON.parse(res.body.toString()).error.code, code, query);
  }
  const keylessSearch = await direct('searchMessages', 401, 'GET', searchPath(HUB, 'q=x'));
  assert.equal(JSON.parse(keylessSearch.body.toString()).error.code, 'missing_api_key');
  // No key at all: Prism answers 401 itself (its security check: neither bearerKey nor queryKey).
  const keyless = await direct('getChanges', 401, 'GET', changesPath(HUB));
  assert.equal(JSON.parse(keyless.body.toString()).error.code, 'missing_api_key');
  // The webhook admin API: bodies the document refuses (Prism would answer 422 itself), a bad hub id,
  // and no key at all (Prism answers 401 itself).
  const hooks = webhooksPath(HUB);
  for (const body of [
    '{}',
    '{"url":42}',
    '{"url":""}',
    `{"url":"${receiver.url}","events":[]}`,
    `{"url":"${receiver.url}","events":["message.created","message.created"]}`,
    `{"url":"${receiver.url}","events":["message.read"]}`,
    `{"url":"${receiver.url}","secret":"whsec_mine"}`,
    `{"url":"https://example.com/${'x'.repeat(2048)}"}`,
    '[]',
  ]) {
    const res = await direct('addWebhook', 400, 'POST', hooks, bearer(adminKey), body);
    assert.equal(JSON.parse(res.body.toString()).error.code, 'invalid_body', body.slice(0, 80));
  }
  const adminAuth = { authorization: `Bearer ${adminKey}` };
  for (const [operationId, method, url, headers, body] of [
    ['addWebhook', 'POST', webhooksPath('abc'), bearer(adminKey), `{"url":"${receiver.url}"}`],
    ['listWebhooks', 'GET', webhooksPath('abc'), adminAuth, undefined],
    ['removeWebhook', 'DELETE', webhookPath('abc', 'whe_never'), adminAuth, undefined],
    ['eraseContact', 'DELETE', '/api/line/abc/contacts/Unobody', adminAuth, undefined],
  ] as const) {
    const res = await direct(operationId, 400, method, url, headers, body);
    assert.equal(JSON.parse(res.body.toString()).error.code, 'invalid_hub_id', operationId);
  }
  for (const [operationId, method, url, headers, body] of [
    ['addWebhook', 'POST', hooks, json, `{"url":"${receiver.url}"}`],
    ['listWebhooks', 'GET', hooks, {}, undefined],
    ['removeWebhook', 'DELETE', webhookPath(HUB, 'whe_never'), {}, undefined],
    ['eraseContact', 'DELETE', `/api/line/${HUB}/contacts/Unobody`, {}, undefined],
  ] as const) {
    const res = await direct(operationId, 401, method, url, headers, body);
    assert.equal(JSON.parse(res.body.toString()).error.code, 'missing_api_key', operationId);
  }
  assert.deepEqual(
    JSON.parse((await rawRequest(server.url, 'GET', hooks, adminAuth)).body.toString()),
    [],
    'no refused body added an endpoint',
  );
  await direct('receiveLineWebhook', 404, 'POST', '/webhooks/line/', json, '{}');
  await direct('linkContact', 404, 'PUT', `/ingest/line/${HUB}/contacts/`, bearer(ingestKey), '{}');
  await direct(
    'recordMessages',
    413,
    'POST',
    messages,
    bearer(ingestKey),
    `[${'"x",'.repeat(4 * 1024 * 1024)}"x"]`,
  );
  const text = { 'content-type': 'text/plain' };
  const webhook = '{"events":[]}';
  for (const [operationId, method, url, headers, body] of [
    [
      'receiveLineWebhook',
      'POST',
      `/webhooks/line/${HUB}`,
      { ...text, 'x-line-signature': sign(webhook) },
      webhook,
    ],
    ['recordMessages', 'POST', messages, { ...bearer(ingestKey), ...text }, '[]'],
    ['linkContact', 'PUT', contact, { ...bearer(ingestKey), ...text }, '{}'],
    ['addWebhook', 'POST', hooks, { ...bearer(adminKey), ...text }, `{"url":"${receiver.url}"}`],
  ] as const) {
    const refused = await direct(operationId, 415, method, url, headers, body);
    assert.match(
      JSON.parse(refused.body.toString()).error.message,
      /application\/json/,
      `${operationId} 415 names application/json`,
    );
  }
  for (const [operationId, url] of [
    ['getMessages', messagesPath(HUB, `apikey=${readKey}`)],
    ['receiveLineWebhook', `/webhooks/line/${HUB}`],
    ['recordMessages', messages],
    ['linkContact', contact],
    ['getChanges', changesPath(HUB, `apikey=${readKey}`)],
    ['searchMessages', searchPath(HUB, `q=x&apikey=${readKey}`)],
    ['getReport', reportPath(HUB, `from=2026-11-01&to=2026-11-02&apikey=${readKey}`)],
  ] as const) {
    await direct(operationId, 405, 'DELETE', url);
  }
  // The two webhook paths: PUT or PATCH on the list, GET on an endpoint (each answers its own Allow).
  const listRefused = await direct('addWebhook', 405, 'PUT', hooks, bearer(adminKey), '{}');
  assert.equal(listRefused.headers.allow, 'GET, POST');
  await direct('listWebhooks', 405, 'PATCH', hooks, adminAuth);
  const endpointRefused = await direct('removeWebhook', 405, 'GET', webhookPath(HUB, 'whe_never'), adminAuth);
  assert.equal(endpointRefused.headers.allow, 'DELETE');
  const large = { 'x-large': 'x'.repeat(17 * 1024) };
  await direct('getMessages', 431, 'GET', messagesPath(HUB, `apikey=${readKey}`), large);
  await direct('receiveLineWebhook', 431, 'POST', `/webhooks/line/${HUB}`, large);
  await direct('recordMessages', 431, 'POST', messages, large);
  await direct('linkContact', 431, 'PUT', contact, large);
  await direct('getChanges', 431, 'GET', changesPath(HUB, `apikey=${readKey}`), large);
  await direct('searchMessages', 431, 'GET', searchPath(HUB, `q=x&apikey=${readKey}`), large);
  await direct(
    'getReport',
    431,
    'GET',
    reportPath(HUB, `from=2026-11-01&to=2026-11-02&apikey=${readKey}`),
    large,
  );
  await direct('addWebhook', 431, 'POST', hooks, { ...bearer(adminKey), ...large }, '{}');
  await direct('listWebhooks', 431, 'GET', hooks, { ...adminAuth, ...large });
  await direct('removeWebhook', 431, 'DELETE', webhookPath(HUB, 'whe_never'), { ...adminAuth, ...large });
  await direct('receiveHubspotWebhook', 431, 'POST', '/webhooks/hubspot', large);
  await direct('receiveHubspotWebhook', 405, 'GET', '/webhooks/hubspot');
  await direct('receiveHubspotChannelMessage', 431, 'POST', '/webhooks/hubspot/channel', large);
  await direct('receiveHubspotChannelMessage', 405, 'GET', '/webhooks/hubspot/channel');
  await direct('eraseContact', 431, 'DELETE', `/api/line/${HUB}/contacts/Unobody`, {
    ...adminAuth,
    ...large,
  });
  const contactRefused = await direct(
    'eraseContact',
    405,
    'GET',
    `/api/line/${HUB}/contacts/Unobody`,
    adminAuth,
  );
  assert.equal(contactRefused.headers.allow, 'DELETE');
  const sendsAuth = { authorization: `Bearer ${adminKey}` };
  const sendRefused = await direct(
    'sendMessages',
    405,
    'GET',
    `/api/line/${HUB}/contacts/Unobody/messages`,
    sendsAuth,
  );
  assert.equal(sendRefused.headers.allow, 'POST');
  const statusRefused = await direct('getSend', 405, 'DELETE', `/api/line/${HUB}/sends/never`, sendsAuth);
  assert.equal(statusRefused.headers.allow, 'GET');
  await direct('sendMessages', 431, 'POST', `/api/line/${HUB}/contacts/Unobody/messages`, {
    ...sendsAuth,
    ...large,
  });
  await direct('getSend', 431, 'GET', `/api/line/${HUB}/sends/never`, { ...sendsAuth, ...large });
  await direct('getContent', 431, 'GET', contentPath(MEDIA_HUB, 'never'), {
    authorization: `Bearer ${mediaReadKey}`,
    ...large,
  });
  const contentRefused = await direct('getContent', 405, 'DELETE', contentPath(MEDIA_HUB, 'never'), {
    authorization: `Bearer ${mediaReadKey}`,
  });
  assert.equal(contentRefused.headers.allow, 'GET');
  await direct('health', 431, 'GET', '/healthz', large);
  await direct('ready', 431, 'GET', '/readyz', large);
});

test('every documented status of every operation was seen through Prism, or cannot be provoked through a proxy (and why)', () => {
  const documented: string[] = [];
  const paths = served.document.paths as Record<
    string,
    Record<string, { operationId: string; responses: object }>
  >;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const status of Object.keys(operation.responses))
        documented.push(`${operation.operationId} ${status}`);
    }
  }
  const seen = (s: string) => provoked.has(s) || headsLikeTheirGet.has(s);
  const missing = documented.filter((s) => !seen(s) && !(s in THROUGH_A_PROXY_UNREACHABLE));
  assert.deepEqual(missing, [], 'documented statuses no request provoked');
  const stale = Object.keys(THROUGH_A_PROXY_UNREACHABLE).filter((s) => !documented.includes(s) || seen(s));
  assert.deepEqual(stale, [], 'listed as unreachable, but not documented or provoked after all');
  // What a proxy cannot reach is asked of chatlog directly, but for HEAD (its GET's twin) and the
  // request timeout (test/scale/idle-connections.test.ts: held connections, not a document check).
  const unchecked = Object.keys(THROUGH_A_PROXY_UNREACHABLE).filter(
    (s) => !checkedDirectly.has(s) && !s.startsWith('head') && !s.endsWith(' 408'),
  );
  assert.deepEqual(unchecked, [], 'unreachable through a proxy and not checked directly either');
  // For the record (the issue asks how many requests Prism checked).
  console.log(
    `Prism checked ${requestsSent} requests (${provoked.size} operation statuses); ${headsSent} HEAD requests ` +
      `matched their GET (${headsLikeTheirGet.size} statuses); ${documented.length} documented statuses, ` +
      `${Object.keys(THROUGH_A_PROXY_UNREACHABLE).length} unreachable through a proxy`,
  );
});
