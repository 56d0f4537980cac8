/** GET / leads a person to the account screen and the API reference; other unknown paths stay JSON 404. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rawRequest, startTestServer, type TestServer } from '../../helpers.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server?.close());

test('GET / is a small page linking /account and /docs, locked down like every page', async () => {
  const res = await rawRequest(server.url, 'GET', '/', { accept: 'text/html' });
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
  const html = res.body.toString('utf8');
  assert.match(html, /<a href="\/account">/);
  assert.match(html, /<a href="\/docs">/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['cache-control'], 'private, no-store');
  // Every link on it leads somewhere that answers.
  for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
    const linked = await rawRequest(server.url, 'GET', href ?? '');
    assert.equal(linked.status, 200, href);
  }
  const head = await rawRequest(server.url, 'HEAD', '/');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
});

test('other methods on / are 405 with Allow; unknown paths are still the JSON 404', async () => {
  const post = await rawRequest(server.url, 'POST', '/');
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
  const missing = await rawRequest(server.url, 'GET', '/nothing-here');
  assert.equal(missing.status, 404);
  assert.match(String(missing.headers['content-type']), /^application\/json/);
  assert.equal(JSON.parse(missing.body.toString('utf8')).error.code, 'not_found');
});

test("a browser's request for the site icon is answered with none (204), not a 404 in its console", async () => {
  const icon = await rawRequest(server.url, 'GET', '/favicon.ico');
  assert.equal(icon.status, 204);
  assert.equal(icon.body.length, 0);
});

test('GET / speaks Japanese to a browser that asks for it, English otherwise', async () => {
  const ja = await rawRequest(server.url, 'GET', '/', { 'accept-language': 'ja,en-US;q=0.8' });
  const html = ja.body.toString('utf8');
  assert.match(html, /<html lang="ja">/);
  assert.match(html, /<a href="\/account">API キー<\/a>/);
  assert.match(html, /読み取り専用の JSON API/);
  assert.doesNotMatch(html, /Keeps the LINE chat messages/);
  assert.equal(ja.headers['content-language'], 'ja');
  assert.match(String(ja.headers.vary), /Accept-Language/);
  for (const asked of [undefined, 'en-GB', 'fr, de;q=0.5']) {
    const en = await rawRequest(server.url, 'GET', '/', asked ? { 'accept-language': asked } : {});
    assert.match(
      en.body.toString('utf8'),
      /<html lang="en">[\s\S]*Keeps the LINE chat messages/,
      String(asked),
    );
  }
});
