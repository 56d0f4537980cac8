/**
 * Secrets never leak: every surface of one server (read API, webhooks, ingest API, account screen,
 * metrics, errors) is exercised at log level trace with the secrets it needs, good and bad; then
 * every log line, answer body, answer header (but the one meant to carry it) and metric is scanned
 * for every API key, channel secret, password and session id used. Zero hits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../../src/lib/metrics.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const CHANNEL_SECRET = 'channel-secret-never-logged-0001';
const ACCESS_TOKEN = 'access-token-never-logged-0000001';
const PASSWORD = 'password never logged 42';
const METRICS_TOKEN = 'metrics-token-never-logged-01';

test('no key, channel secret, password or session id in any log line, error, metric or page', async () => {
  let server: TestServer | undefined;
  const metrics = new Metrics(() => server?.store.poolState() ?? []);
  // Display-name look-ups go to a closed local port: they fail, and their failure is logged.
  server = await startTestServer({
    logLevel: 'trace',
    metrics,
    metricsToken: METRICS_TOKEN,
    lineApiBaseUrl: 'http://127.0.0.1:9',
  });
  const seen: string[] = [];
  const send = async (
    method: string,
    path: string,
    headers: Record<string, string> = {},
    payload?: string,
  ) => {
    const res = await rawRequest(server.url, method, path, headers, payload);
    seen.push(`${res.status} ${JSON.stringify(res.headers)}\n${res.body.toString('utf8')}`);
    return res;
  };
  try {
    await server.hubs.add('314', { lineChannelSecret: CHANNEL_SECRET, lineChannelAccessToken: ACCESS_TOKEN });
    const read = (await server.keys.issue('314', 'read', 'r')).key;
    const ingest = (await server.keys.issue('314', 'ingest', 'i')).key;
    const revoked = await server.keys.issue('314', 'read', 'gone');
    await server.keys.revoke(revoked.summary.id);
    await server.accounts.add('owner@example.com', ['314'], PASSWORD);
    const secrets = [read, ingest, revoked.key, CHANNEL_SECRET, ACCESS_TOKEN, PASSWORD, METRICS_TOKEN];

    // Read API: good, revoked, wrong scope, mistyped, repeated, in odd places.
    for (const key of [read, revoked.key, ingest, `${read.slice(0, -1)}x`]) {
      await send('GET', `/api/line/314/messages?apikey=${key}`);
      await send('GET', `/api/line/314/messages?apikey=${key}&apikey=${key}&from=bad`);
      await send('POST', `/api/line/314/messages?apikey=${key}`);
      await send('GET', `/api/line/999/messages?apikey=${encodeURIComponent(key)}`);
      await send('GET', `/nowhere?apikey=${key}`, { authorization: `Bearer ${key}` });
    }
    // Webhooks: signed, forged, and signed with the secret itself as a body.
    const raw = body([messageEvent({ id: 's-1', type: 'text', text: 'hello' })]);
    await send('POST', '/webhooks/line/314', signed(CHANNEL_SECRET, raw), raw);
    await send('POST', '/webhooks/line/314', signed(CHANNEL_SECRET, raw), '{"broken":');
    await send(
      'POST',
      '/webhooks/line/314',
      { 'x-line-signature': CHANNEL_SECRET, 'content-type': 'application/json' },
      raw,
    );
    // Ingest API with its key, a read key, and garbage.
    for (const key of [ingest, read]) {
      await send(
        'POST',
        '/ingest/line/314/messages',
        { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        '[]',
      );
      await send(
        'POST',
        '/ingest/line/314/messages',
        { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        '{nope',
      );
    }
    // Account screen: a wrong password, the right one, pages, copy, sign-out.
    const signInPage = await send('GET', '/account');
    const signInCookie = String(signInPage.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    const token = /name="csrf" value="([^"]+)"/.exec(signInPage.body.toString())?.[1] ?? '';
    const form = (password: string) =>
      new URLSearchParams({ csrf: token, email: 'owner@example.com', password }).toString();
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded', cookie: signInCookie };
    await send('POST', '/account/sign-in', formHeaders, form(`${PASSWORD}!`));
    const signedIn = await send('POST', '/account/sign-in', formHeaders, form(PASSWORD));
    const sessionCookie = String(signedIn.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    const sessionId = sessionCookie.split('=')[1] ?? '';
    assert.ok(sessionId.length > 20);
    secrets.push(sessionId);
    seen.pop(); // that answer is the one meant to set the session cookie
    const page = await send('GET', '/account', { cookie: sessionCookie });
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.body.toString())?.[1] ?? '';
    const keyId = /data-key-id="([^"]+)"/.exec(page.body.toString())?.[1] ?? '';
    const reveal = await rawRequest(server.url, 'POST', `/account/keys/${keyId}/reveal`, {
      cookie: sessionCookie,
      'x-csrf-token': csrf,
    });
    assert.equal(reveal.status, 200, 'the copy request is the one answer that carries a key (not scanned)');
    await send('POST', `/account/keys/${keyId}/reveal`, { cookie: sessionCookie });
    await send('GET', '/docs');
    await send('GET', '/openapi.json');
    // Metrics, with and without their token.
    await send('GET', '/metrics');
    await send('GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
    await send(
      'POST',
      '/account/sign-out',
      { cookie: sessionCookie, 'content-type': 'application/x-www-form-urlencoded' },
      `csrf=${csrf}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // the display-name look-up may log

    const places = { logs: server.logs.text, answers: seen.join('\n') };
    // Every request left its log line (and trace logging was on), so the scan below saw them all.
    const completed = server.logs.lines.filter((line) => line.includes('"msg":"request completed"'));
    assert.ok(
      completed.length >= seen.length,
      `${completed.length} request lines for ${seen.length} answers`,
    );
    for (const [where, text] of Object.entries(places)) {
      for (const secret of secrets) {
        assert.ok(!text.includes(secret), `a secret (${secret.slice(0, 4)}…) in the ${where}`);
        // Nor a large part of one (a key with its prefix cut, say).
        assert.ok(
          !text.includes(secret.slice(4, 20)),
          `part of a secret (${secret.slice(0, 4)}…) in the ${where}`,
        );
      }
    }
  } finally {
    await server.close();
  }
});
