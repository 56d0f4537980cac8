/** The OpenAPI document at /openapi.json, checked against the routes the app registers and its error codes. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { ERROR_CODES } from '../../src/lib/errors.js';
import { createLogger } from '../../src/lib/logger.js';
import { createSecretBox } from '../../src/lib/secrets.js';
import { rawRequest, startTestServer, TEST_SECRET, type TestServer } from '../helpers.js';

/** Routes of the screen and of operations that are not part of the client API. */
const NOT_IN_THE_DOCUMENT = /^\/(account|docs|metrics|openapi\.json)/;
let server: TestServer;
let document: {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

before(async () => {
  server = await startTestServer();
  const res = await rawRequest(server.url, 'GET', '/openapi.json');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  document = JSON.parse(res.body.toString('utf8'));
});
after(() => server.close());

test('OpenAPI 3.1, every route the app answers for clients, and no route it does not have', async () => {
  assert.equal(document.openapi, '3.1.0');
  const routes = new Set<string>();
  const { app } = buildApp({
    store: server.store,
    secrets: createSecretBox(TEST_SECRET),
    logger: createLogger('silent'),
    onRoute: (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
      if (NOT_IN_THE_DOCUMENT.test(path)) return;
      // Routes that only answer 405 are the document's "405" responses, not operations.
      if (route.handler.name === 'onlyMethods' || route.onRequest !== undefined) return;
      for (const method of methods) if (method !== 'HEAD') routes.add(`${method.toLowerCase()} ${path}`);
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
