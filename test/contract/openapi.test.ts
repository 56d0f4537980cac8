/**
 * The OpenAPI document at /openapi.json and the /docs page made from it: every client route is in
 * it, every error code, and its request schemas are the ones the server validates with (a body the
 * document refuses is refused, one it accepts is stored).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { buildApp } from '../../src/app.js';
import { ERROR_CODES } from '../../src/lib/errors.js';
import { escapeHtml } from '../../src/lib/html.js';
import { createLogger } from '../../src/lib/logger.js';
import { createSecretBox } from '../../src/lib/secrets.js';
import { DOCS_JA } from '../../src/modules/docs/docs.ja.js';
import { dateTimeLike, isRfc3339DateTime, isStorableInstant, rfc3339EpochMs } from '../fixtures/rfc3339.js';
import { rawRequest, startTestServer, TEST_SECRET, type TestServer } from '../helpers.js';

/**
 * Routes of the screen and of operations that are not part of the client API; /mcp speaks JSON-RPC,
 * which the MCP specification describes (/docs lists its tools).
 */
const NOT_IN_THE_DOCUMENT = /^\/(account|docs|metrics|mcp|openapi\.json|favicon\.ico|$)/;
let server: TestServer;
interface Operation {
  operationId: string;
  responses: Record<string, unknown>;
  requestBody?: { content: { 'application/json': { schema: unknown } } };
}
let document: {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};
const HUB = '4242';
let ingestKey: string;

before(async () => {
  server = await startTestServer();
  const res = await rawRequest(server.url, 'GET', '/openapi.json');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  document = JSON.parse(res.body.toString('utf8'));
  await server.hubs.add(HUB, {});
  ingestKey = (await server.keys.issue(HUB, 'ingest', 'openapi test')).key;
});
after(() => server?.close());

test('OpenAPI 3.1, every route the app answers for clients, and no route it does not have', async () => {
  assert.equal(document.openapi, '3.1.0');
  const routes = new Set<string>();
  const { app } = buildApp({
    store: server.store,
    blobs: server.blobs,
    secrets: createSecretBox(TEST_SECRET),
    logger: createLogger('silent'),
    onRoute: (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
      if (NOT_IN_THE_DOCUMENT.test(path)) return;
      // Routes that only answer 405 are the document's "405" responses, not operations.
      if (route.handler.name === 'onlyMethods' || route.onRequest !== undefined) return;
      // HEAD included: Fastify answers HEAD on every GET route, and the document says so.
      for (const method of methods) routes.add(`${method.toLowerCase()} ${path}`);
    },
  });
  await app.ready();
  await app.close();
  const documented = new Set(
    Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    ),
  );
  for (const route of routes) assert.ok(documented.has(route), `${route} is not in the document`);
  for (const operation of documented) assert.ok(routes.has(operation), `${operation} is not a route`);
});

test('every error code the API can answer is in the document, each under a status that sends it', () => {
  const text = JSON.stringify(document);
  for (const code of ERROR_CODES) assert.ok(text.includes(`"${code}"`), code);
  const readErrors = document.paths['/api/line/{hubId}/messages']?.get?.responses ?? {};
  for (const status of ['400', '401', '403', '405', '429', '503']) assert.ok(status in readErrors, status);
});

/** An ajv that reads formats as integrators' validators do (ajv-formats, as Prism does). */
function integratorAjv() {
  const ajv = new Ajv({ strict: false });
  addFormats.default(ajv);
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  }
  return ajv;
}

/** The document's schema of an operation's body, with its component references resolvable. */
function bodyValidator(path: string, method: string) {
  const schema = document.paths[path]?.[method]?.requestBody?.content['application/json'].schema;
  assert.ok(schema, `${method} ${path} has a request body`);
  return integratorAjv().compile(schema as object);
}

/** A body's createdAt values that name an instant outside years 0000-9999 UTC, which the document's
 * description says chatlog refuses though the date-time itself is well formed (0000-01-01T00:00:00+01:00). */
function namesUnstorableInstant(payload: unknown): boolean {
  const messages = Array.isArray(payload) ? payload : [payload];
  return messages.some((message) => {
    const createdAt = (message as { createdAt?: unknown } | null)?.createdAt;
    if (typeof createdAt !== 'string') return false;
    const ms = rfc3339EpochMs(createdAt);
    return ms !== undefined && !isStorableInstant(ms);
  });
}

test("createdAt: the document's schema accepts exactly RFC 3339's date-times, read by ajv-formats", () => {
  const ajv = integratorAjv();
  const ingested = document.components.schemas.AccountMessage as { properties?: { createdAt?: object } };
  const createdAt = ingested.properties?.createdAt;
  assert.ok(createdAt, 'the ingest API message (AccountMessage) has createdAt');
  const validates = ajv.compile(createdAt);
  let accepted = 0;
  fc.assert(
    fc.property(dateTimeLike, (text) => {
      assert.equal(validates(text), isRfc3339DateTime(text), text);
      if (isRfc3339DateTime(text)) accepted += 1;
    }),
    { numRuns: 5000 },
  );
  assert.ok(accepted > 1000, `only ${accepted} accepted: the property says little`);
});

test("POST /ingest/line/{hubId}/messages: the server accepts exactly the bodies the document's schema accepts", async () => {
  const validates = bodyValidator('/ingest/line/{hubId}/messages', 'post');
  const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constant(''), fc.constant('x'.repeat(201)));
  const field = fc.oneof(text, fc.integer(), fc.constant(null), fc.boolean(), fc.constant([]));
  const message = fc.record(
    {
      lineId: field,
      msg: field,
      contentType: field,
      sender: field,
      id: field,
      createdAt: fc.oneof(
        dateTimeLike,
        fc.constantFrom('2019-11-03T10:15:00.000Z', '2019-02-30T00:00:00Z', '0000-01-01T00:00:00+01:00', ''),
        fc.constant(null),
        fc.integer(),
        fc.string({ maxLength: 30 }),
      ),
      extra: field,
    },
    { requiredKeys: [] },
  );
  // Some bodies of plain valid messages too: random fields alone made too few valid bodies now and then
  // (9 of 300 in one CI run), and the property then said little.
  const plain = fc.record({
    lineId: fc.string({ minLength: 1, maxLength: 8 }),
    msg: fc.string({ maxLength: 8 }),
  });
  const bodies = fc.oneof(
    fc.array(message, { maxLength: 3 }),
    message,
    fc.string(),
    fc.integer(),
    fc.array(plain, { minLength: 1, maxLength: 3 }),
  );
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(bodies, async (payload) => {
      const res = await rawRequest(
        server.url,
        'POST',
        `/ingest/line/${HUB}/messages`,
        { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
        JSON.stringify(payload),
      );
      const valid = validates(JSON.parse(JSON.stringify(payload))) && !namesUnstorableInstant(payload);
      if (valid) accepted += 1;
      assert.equal(res.status, valid ? 200 : 400, `${JSON.stringify(payload)} → ${res.body.toString()}`);
      if (!valid) assert.equal(JSON.parse(res.body.toString()).error.code, 'invalid_body');
    }),
    { numRuns: 300 },
  );
  assert.ok(accepted > 10, `only ${accepted} of 300 bodies were valid: the property says little`);
});

test("PUT /ingest/line/{hubId}/contacts/{lineId}: the server accepts exactly the bodies the document's schema accepts", async () => {
  const validates = bodyValidator('/ingest/line/{hubId}/contacts/{lineId}', 'put');
  const field = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constant('9'.repeat(101)),
    fc.integer({ min: -5, max: 2 ** 60 }),
    fc.double(),
    fc.constant(null),
    fc.boolean(),
  );
  const bodies = fc.oneof(
    fc.record({ vid: field, name: field }, { requiredKeys: [] }),
    fc.array(field),
    field,
  );
  await fc.assert(
    fc.asyncProperty(bodies, async (payload) => {
      const res = await rawRequest(
        server.url,
        'PUT',
        `/ingest/line/${HUB}/contacts/Uopenapi`,
        { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
        JSON.stringify(payload),
      );
      // As the server sees it: NaN and Infinity travel as null.
      const sent = JSON.parse(JSON.stringify(payload));
      assert.equal(res.status, validates(sent) ? 200 : 400, `${JSON.stringify(payload)} → ${res.body}`);
    }),
    { numRuns: 200 },
  );
});

test('/docs is made from the document: every operation, every error code, no script, locked down', async () => {
  const res = await rawRequest(server.url, 'GET', '/docs');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
  const html = res.body.toString('utf8');
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations))
      assert.ok(html.includes(`id="${operation.operationId}"`));
  }
  for (const code of ERROR_CODES) assert.ok(html.includes(`<code>${code}</code>`), code);
  assert.ok(
    !/<script|https?:\/\/(?!127\.0\.0\.1)[^'"<\s]*\.(js|css)/.test(html),
    'no script, nothing from elsewhere',
  );
  assert.ok(html.includes('href="/openapi.json"'));
});

/** Every summary and description of the document, where it says them. */
function documentTexts(value: unknown, key = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => documentTexts(item));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, item]) => documentTexts(item, k));
  return typeof value === 'string' && (key === 'summary' || key === 'description') ? [value] : [];
}

test('/docs in Japanese for a browser that asks: every summary and description in Japanese, the code as the API spells it', async () => {
  const texts = new Set(documentTexts(document));
  const missing = [...texts].filter((english) => !(english in DOCS_JA));
  assert.deepEqual(missing, [], 'a text of the document without its Japanese (docs.ja.ts)');
  const unused = Object.keys(DOCS_JA).filter((english) => !texts.has(english));
  assert.deepEqual(unused, [], 'Japanese of a text the document no longer has');

  const res = await rawRequest(server.url, 'GET', '/docs', { 'accept-language': 'ja-JP,ja;q=0.9,en;q=0.8' });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-language'], 'ja');
  assert.match(String(res.headers.vary), /Accept-Language/);
  const html = res.body.toString('utf8');
  assert.match(html, /<html lang="ja">/);
  assert.match(html, /<h1>API リファレンス<\/h1>/);
  for (const words of [
    'パラメーター',
    '応答',
    'データの形',
    'data-label="説明"',
    '<td data-label="必須">はい</td>',
  ])
    assert.ok(html.includes(words), words);
  for (const english of ['Example answer', 'data-label="meaning"', '>Parameters<', 'Fields of ', 'at most '])
    assert.ok(!html.includes(english), english);
  // No English sentence of the document is left; a text that is only a literal stays as it is.
  for (const english of texts) {
    if (DOCS_JA[english] !== english) assert.ok(!html.includes(escapeHtml(english)), english);
  }
  // The code is the API's, in either language.
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations))
      assert.ok(html.includes(`id="${operation.operationId}"`));
  }
  for (const code of ERROR_CODES) assert.ok(html.includes(`<code>${code}</code>`), code);

  const en = await rawRequest(server.url, 'GET', '/docs', { 'accept-language': 'fr, en;q=0.5' });
  assert.equal(en.headers['content-language'], 'en');
  assert.match(en.body.toString('utf8'), /<html lang="en">[\s\S]*<h1>API reference<\/h1>/);
});

test('the document declares what the server does: its address, HEAD, the keys as security schemes, Cache-Control on every answer', async () => {
  const declared = document as unknown as {
    servers: Array<{ url: string }>;
    paths: Record<
      string,
      Record<string, Operation & { security: unknown; responses: Record<string, Answer> }>
    >;
    components: { securitySchemes: Record<string, unknown> };
  };
  interface Answer {
    headers: Record<string, { required?: boolean }>;
    content?: unknown;
  }
  // The address the document was asked at, CHATLOG_PUBLIC_URL when set, never a Host that is not one.
  assert.deepEqual(
    declared.servers.map((s) => s.url),
    [server.url],
  );
  const serversOf = async (publicUrl: string | undefined, host: string) => {
    const { app } = buildApp({
      store: server.store,
      blobs: server.blobs,
      secrets: createSecretBox(TEST_SECRET),
      logger: createLogger('silent'),
      publicUrl,
    });
    const res = await app.inject({ method: 'GET', url: '/openapi.json', headers: { host } });
    await app.close();
    return (JSON.parse(res.body) as typeof declared).servers.map((s) => s.url);
  };
  assert.deepEqual(await serversOf('https://chatlog.example.org/', 'x.test'), [
    'https://chatlog.example.org',
  ]);
  assert.deepEqual(await serversOf(undefined, 'chat.internal:8080'), ['http://chat.internal:8080']);
  assert.deepEqual(await serversOf(undefined, 'a.test/"><script>'), ['http://chatlog.example.com']);

  const read = declared.paths['/api/line/{hubId}/messages'];
  assert.equal(read?.head?.operationId, 'headMessages');
  assert.deepEqual(Object.keys(read?.head?.responses ?? {}), Object.keys(read?.get?.responses ?? {}));
  for (const answer of Object.values(read?.head?.responses ?? {})) assert.equal(answer.content, undefined);
  assert.deepEqual(read?.get?.security, [{ readKey: [] }]);
  assert.deepEqual(declared.components.securitySchemes.readKey, {
    type: 'apiKey',
    in: 'query',
    name: 'apikey',
    description:
      'An API key of scope read, issued for the hub on the account screen or with chatlog key issue.',
  });
  assert.deepEqual(declared.paths['/ingest/line/{hubId}/messages']?.post?.security, [{ ingestKey: [] }]);
  assert.deepEqual(declared.paths['/ingest/line/{hubId}/contacts/{lineId}']?.put?.security, [
    { ingestKey: [] },
  ]);
  assert.match(
    JSON.stringify(declared.components.securitySchemes.ingestKey),
    /"type":"http","scheme":"bearer"/,
  );
  for (const [path, operations] of Object.entries(declared.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        assert.equal(answer.headers['Cache-Control']?.required, true, `${method} ${path} ${status}`);
      }
    }
  }
});
