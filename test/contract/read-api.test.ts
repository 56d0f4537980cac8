/**
 * CONTRACT §1-5 against a real listening server.
 *
 * Over 400 lines because it is the read API's contract whole, section by section, against one server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import {
  message,
  rawRequest,
  socketRequest,
  startTestServer,
  storeMessages,
  type TestServer,
} from '../helpers.js';

let server: TestServer;
let tokyoKey: string;
let laKey: string;
let otherKey: string;
const usedSecrets: string[] = [];

const at = (iso: string) => Date.parse(iso);
const api = (hubId: string, query: string) => `/api/line/${hubId}/messages?${query}`;

async function getJson(path: string, init?: RequestInit) {
  const response = await server.request(path, init);
  const text = await response.text();
  return { response, text, body: text === '' ? undefined : JSON.parse(text) };
}

async function issue(hubId: string, label = '') {
  const { key, summary } = await server.keys.issue(hubId, 'read', label);
  usedSecrets.push(key);
  return { key, id: summary.id };
}

before(async () => {
  server = await startTestServer();
  await server.hubs.add('100', { timeZone: 'Asia/Tokyo' });
  await server.hubs.add('200', { timeZone: 'America/Los_Angeles' });
  await server.hubs.add('300', {});
  tokyoKey = (await issue('100')).key;
  laKey = (await issue('200')).key;
  otherKey = (await issue('300')).key;
  await storeMessages(server.store, '100', [
    // Tokyo is UTC+9: local 2019-11-03T00:00:00.000 is 2019-11-02T15:00:00.000Z.
    message({
      lineId: 'U-first',
      vid: '101',
      name: 'shinobu',
      msg: 'before',
      createdAt: at('2019-11-02T14:59:59.999Z'),
    }),
    message({
      lineId: 'U-first',
      vid: '101',
      name: 'shinobu',
      msg: 'first instant',
      createdAt: at('2019-11-02T15:00:00.000Z'),
    }),
    message({ lineId: 'U-second', msg: 'unnamed friend', createdAt: at('2019-11-03T01:00:00.000Z') }),
    message({ lineId: 'U-first', sender: 'You', msg: 'tie A', createdAt: at('2019-11-03T02:00:00.000Z') }),
    message({ lineId: 'U-first', sender: 'You', msg: 'tie B', createdAt: at('2019-11-03T02:00:00.000Z') }),
    message({
      lineId: 'U-first',
      sender: 'You',
      msg: 'earlier, stored later',
      createdAt: at('2019-11-03T01:30:00.000Z'),
    }),
    message({ lineId: 'U-first', msg: 'last instant', createdAt: at('2019-11-04T14:59:59.999Z') }),
    message({ lineId: 'U-first', msg: 'after', createdAt: at('2019-11-04T15:00:00.000Z') }),
  ]);
  await storeMessages(server.store, '200', [
    // Los Angeles: DST began 2024-03-10 at 02:00 (PST -8 → PDT -7).
    message({ lineId: 'U-la', msg: 'before', createdAt: at('2024-03-10T07:59:59.999Z') }),
    message({ lineId: 'U-la', msg: 'first instant', createdAt: at('2024-03-10T08:00:00.000Z') }),
    message({ lineId: 'U-la', msg: 'last instant', createdAt: at('2024-03-11T06:59:59.999Z') }),
    message({ lineId: 'U-la', msg: 'after', createdAt: at('2024-03-11T07:00:00.000Z') }),
  ]);
  await storeMessages(server.store, '300', [
    message({
      lineId: 'U-secret',
      name: 'other hub',
      msg: 'SECRET-OF-HUB-300',
      createdAt: at('2019-11-03T05:00:00.000Z'),
    }),
  ]);
});
after(() => server?.close());

const msgsOf = (body: Array<{ messages: Array<{ msg: string }> }>) =>
  body.flatMap((c) => c.messages.map((m) => m.msg));

describe('the answer', () => {
  test('inclusive whole days in the hub zone (Asia/Tokyo), bounds at 00:00:00.000 and 23:59:59.999', async () => {
    const { response, body } = await getJson(api('100', `apikey=${tokyoKey}&from=2019-11-03&to=2019-11-04`));
    assert.equal(response.status, 200);
    assert.deepEqual(msgsOf(body), [
      'first instant',
      'earlier, stored later',
      'tie A',
      'tie B',
      'last instant',
      'unnamed friend',
    ]);
  });

  test('keys in order, vid a string, 24-character createdAt, sender from the contact name or "User"', async () => {
    const { text } = await getJson(api('100', `apikey=${tokyoKey}&from=2019-11-03&to=2019-11-03`));
    assert.equal(
      text,
      '[{"lineId":"U-first","vid":"101","name":"shinobu","messages":[' +
        '{"sender":"shinobu","msg":"first instant","contentType":"text","createdAt":"2019-11-02T15:00:00.000Z"},' +
        '{"sender":"You","msg":"earlier, stored later","contentType":"text","createdAt":"2019-11-03T01:30:00.000Z"},' +
        '{"sender":"You","msg":"tie A","contentType":"text","createdAt":"2019-11-03T02:00:00.000Z"},' +
        '{"sender":"You","msg":"tie B","contentType":"text","createdAt":"2019-11-03T02:00:00.000Z"}]},' +
        '{"lineId":"U-second","vid":"","name":"","messages":[' +
        '{"sender":"User","msg":"unnamed friend","contentType":"text","createdAt":"2019-11-03T01:00:00.000Z"}]}]',
    );
  });

  test('inclusive whole days in America/Los_Angeles across the DST change', async () => {
    const { body } = await getJson(api('200', `apikey=${laKey}&from=2024-03-10&to=2024-03-10`));
    assert.deepEqual(msgsOf(body), ['first instant', 'last instant']);
  });

  test('from alone, to alone, neither', async () => {
    assert.deepEqual(msgsOf((await getJson(api('100', `apikey=${tokyoKey}&from=2019-11-05`))).body), [
      'after',
    ]);
    assert.deepEqual(msgsOf((await getJson(api('100', `apikey=${tokyoKey}&to=2019-11-02`))).body), [
      'before',
    ]);
    assert.equal(msgsOf((await getJson(api('100', `apikey=${tokyoKey}`))).body).length, 8);
  });

  test('a range with no message is []', async () => {
    const { response, text } = await getJson(api('100', `apikey=${tokyoKey}&from=2001-01-01&to=2001-01-31`));
    assert.equal(response.status, 200);
    assert.equal(text, '[]');
  });

  test('tz reads the days in another zone for this request', async () => {
    const { body } = await getJson(api('100', `apikey=${tokyoKey}&from=2019-11-02&to=2019-11-02&tz=UTC`));
    assert.deepEqual(msgsOf(body), ['before', 'first instant']);
  });

  test('a trailing slash is accepted; unknown parameters are ignored', async () => {
    const { response } = await getJson(`/api/line/100/messages/?apikey=${tokyoKey}&utm=1&utm=2`);
    assert.equal(response.status, 200);
  });

  test('headers: JSON type, no-store caching, Vary, a weak ETag answered 304', async () => {
    const path = api('100', `apikey=${tokyoKey}&from=2019-11-03`);
    const first = await server.request(path);
    assert.equal(first.headers.get('cache-control'), 'private, no-store');
    assert.equal(first.headers.get('vary'), 'Accept-Encoding');
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^W\/"[A-Za-z0-9_-]+"$/);
    const again = await server.request(path, { headers: { 'if-none-match': etag ?? '' } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    const otherRange = await server.request(api('100', `apikey=${tokyoKey}&from=2019-11-04`), {
      headers: { 'if-none-match': etag ?? '' },
    });
    assert.equal(otherRange.status, 200);
    // New data for the hub: the old ETag no longer matches.
    await storeMessages(server.store, '100', [
      message({ lineId: 'U-third', msg: 'new', createdAt: at('2030-01-01T00:00:00.000Z') }),
    ]);
    const changed = await server.request(path, { headers: { 'if-none-match': etag ?? '' } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), etag);
  });

  test('gzip and br by Accept-Encoding decode to the identical body', async () => {
    const path = api('100', `apikey=${tokyoKey}`);
    const plain = (await rawRequest(server.url, 'GET', path)).body;
    const gz = await rawRequest(server.url, 'GET', path, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body), plain);
    const br = await rawRequest(server.url, 'GET', path, { 'accept-encoding': 'gzip;q=0.5, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(br.body), plain);
    const none = await rawRequest(server.url, 'GET', path, { 'accept-encoding': 'gzip;q=0, br;q=0' });
    assert.equal(none.headers['content-encoding'], undefined);
    assert.deepEqual(none.body, plain);
  });

  test('HEAD answers the same status and headers as GET, with no body', async () => {
    const path = api('100', `apikey=${tokyoKey}&from=2019-11-03`);
    const get = await rawRequest(server.url, 'GET', path);
    const head = await rawRequest(server.url, 'HEAD', path);
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    for (const name of ['content-type', 'etag', 'cache-control', 'vary'])
      assert.equal(head.headers[name], get.headers[name]);
    const bad = await rawRequest(server.url, 'HEAD', api('100', `apikey=${tokyoKey}&from=nope`));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.length, 0);
  });
});

describe('answer cache', () => {
  test('an answer asked again is the same bytes, and never stale after the hub changes', async () => {
    await server.hubs.add('400', { timeZone: 'UTC' });
    const key = (await issue('400')).key;
    await storeMessages(server.store, '400', [
      message({ lineId: 'U-c', name: 'old name', msg: 'one', createdAt: at('2024-05-01T10:00:00.000Z') }),
    ]);
    const path = api('400', `apikey=${key}&from=2024-05-01&to=2024-05-01`);
    const decode = { identity: (b: Buffer) => b, gzip: gunzipSync, br: brotliDecompressSync };
    const ask = async (encoding: keyof typeof decode) => {
      const response = await rawRequest(server.url, 'GET', path, { 'accept-encoding': encoding });
      assert.equal(response.status, 200);
      return decode[encoding](response.body).toString('utf8');
    };
    for (const encoding of ['identity', 'gzip', 'br'] as const) {
      const first = await ask(encoding);
      assert.equal(await ask(encoding), first);
      assert.deepEqual(
        JSON.parse(first)[0].messages.map((m: { msg: string }) => m.msg),
        ['one'],
      );
    }
    // A new message in the range, then a new name: each shows at once, in every encoding.
    await storeMessages(server.store, '400', [
      message({ lineId: 'U-c', msg: 'two', createdAt: at('2024-05-01T11:00:00.000Z') }),
    ]);
    for (const encoding of ['identity', 'gzip', 'br'] as const) {
      const body = JSON.parse(await ask(encoding));
      assert.deepEqual(
        body[0].messages.map((m: { msg: string }) => m.msg),
        ['one', 'two'],
      );
    }
    await storeMessages(server.store, '400', [
      message({ lineId: 'U-c', name: 'new name', msg: 'three', createdAt: at('2024-06-01T00:00:00.000Z') }),
    ]);
    for (const encoding of ['identity', 'gzip', 'br'] as const) {
      assert.equal(JSON.parse(await ask(encoding))[0].name, 'new name');
    }
  });
});

describe('errors', () => {
  const cases: Array<[string, string, number, string]> = [
    ['no key', api('100', 'from=2019-11-03'), 401, 'missing_api_key'],
    ['empty key', api('100', 'apikey='), 401, 'missing_api_key'],
    ['malformed key', api('100', 'apikey=hello'), 401, 'invalid_api_key'],
    ['hub id of 25 digits', api('1234567890123456789012345', 'apikey=KEY'), 400, 'invalid_hub_id'],
    ['hub id of 2,000 digits', api('9'.repeat(2000), 'apikey=KEY'), 400, 'invalid_hub_id'],
    ['empty hub id', api('', 'apikey=KEY'), 400, 'invalid_hub_id'],
    ['hub id with letters', api('12a', 'apikey=KEY'), 400, 'invalid_hub_id'],
    ['badly encoded hub id', api('%ZZ', 'apikey=KEY'), 400, 'invalid_hub_id'],
    ['key of another hub', api('300', 'apikey=KEY'), 403, 'forbidden'],
    ['from twice', api('100', 'apikey=KEY&from=2019-11-03&from=2019-11-03'), 400, 'duplicate_parameter'],
    ['from=9999-99-99', api('100', 'apikey=KEY&from=9999-99-99'), 400, 'invalid_date'],
    ['2023-02-29', api('100', 'apikey=KEY&to=2023-02-29'), 400, 'invalid_date'],
    ['2024-1-05', api('100', 'apikey=KEY&from=2024-1-05'), 400, 'invalid_date'],
    ['non-UTF-8 date', api('100', 'apikey=KEY&from=%FF%FE'), 400, 'invalid_date'],
    ['control bytes in a date', api('100', 'apikey=KEY&from=2019-11-03%00'), 400, 'invalid_date'],
    ['from after to', api('100', 'apikey=KEY&from=2019-11-04&to=2019-11-03'), 400, 'invalid_range'],
    ['unknown tz', api('100', 'apikey=KEY&tz=Nowhere/Land'), 400, 'invalid_time_zone'],
    ['tz an abbreviation', api('100', 'apikey=KEY&tz=PST'), 400, 'invalid_time_zone'],
    ['unknown path', '/api/line/100/other?apikey=KEY', 404, 'not_found'],
    ['unknown root-level path', '/nothing', 404, 'not_found'],
  ];
  for (const [why, path, status, code] of cases) {
    test(`${why} → ${status} ${code}`, async () => {
      const res = await rawRequest(server.url, 'GET', path.replace('KEY', tokyoKey));
      assert.equal(res.status, status);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      const body = JSON.parse(res.body.toString('utf8'));
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
      assert.ok(!res.body.toString('utf8').includes(tokyoKey));
      assert.ok(!/at .*\.(ts|js):\d+/.test(res.body.toString('utf8')), 'no stack trace');
    });
  }

  test('apikey given twice → 401 invalid_api_key, which says it was given more than once', async () => {
    for (const second of [tokyoKey, 'chl_other']) {
      const res = await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}&apikey=${second}`));
      assert.equal(res.status, 401);
      const { error } = JSON.parse(res.body.toString());
      assert.equal(error.code, 'invalid_api_key');
      assert.match(error.message, /given more than once/);
      assert.doesNotMatch(error.message, /mistyped|unknown|revoked/);
    }
  });

  test('a key of hub A on hub B → 403 and nothing of B leaks', async () => {
    const res = await rawRequest(server.url, 'GET', api('300', `apikey=${tokyoKey}`));
    assert.equal(res.status, 403);
    assert.ok(!res.body.toString().includes('SECRET-OF-HUB-300'));
    const own = await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}`));
    assert.ok(!own.body.toString().includes('SECRET-OF-HUB-300'));
    const theirs = await rawRequest(server.url, 'GET', api('300', `apikey=${otherKey}`));
    assert.ok(theirs.body.toString().includes('SECRET-OF-HUB-300'));
  });

  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'LOCK']) {
    test(`${method} → 405 method_not_allowed with Allow: GET, HEAD, before any check`, async () => {
      const res = await rawRequest(
        server.url,
        method,
        '/api/line/abc/messages',
        { 'content-type': 'application/json' },
        '{bad json',
      );
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'GET, HEAD');
      const { error } = JSON.parse(res.body.toString());
      assert.equal(error.code, 'method_not_allowed');
      // The same words whichever method it was (the framework's path or the route's own).
      assert.equal(error.message, 'only GET and HEAD are allowed on this path');
    });
  }

  test('an over-long URL is refused cleanly, not with a 500', async () => {
    const res = await rawRequest(
      server.url,
      'GET',
      api('100', `apikey=${tokyoKey}&pad=${'x'.repeat(20_000)}`),
    );
    assert.ok(res.status === 414 || res.status === 431, `status ${res.status}`);
  });

  test('a GET with a truncated gzip body is answered normally; the body is ignored', async () => {
    const truncated = gzipSync(Buffer.from('{"a":1}')).subarray(0, 8);
    const res = await rawRequest(
      server.url,
      'GET',
      api('100', `apikey=${tokyoKey}&from=2019-11-03&to=2019-11-03`),
      { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      truncated,
    );
    assert.equal(res.status, 200);
  });

  test('a malformed request line gets a 400, and the server keeps serving', async () => {
    const answer = await socketRequest(server.url, 'GET /api/line/1 00/messages HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400/);
    const res = await rawRequest(server.url, 'GET', '/healthz');
    assert.equal(res.status, 200);
  });
});

describe('keys and limits', () => {
  test('revocation takes effect at the next request', async () => {
    const { key, id } = await issue('100', 'to revoke');
    assert.equal(
      (await rawRequest(server.url, 'GET', api('100', `apikey=${key}&from=2019-11-03`))).status,
      200,
    );
    await server.keys.revoke(id);
    const res = await rawRequest(server.url, 'GET', api('100', `apikey=${key}&from=2019-11-03`));
    assert.equal(res.status, 401);
    assert.equal(JSON.parse(res.body.toString()).error.code, 'invalid_api_key');
  });

  test('a hub can have several live keys', async () => {
    const second = await issue('100', 'second');
    assert.equal(
      (await rawRequest(server.url, 'GET', api('100', `apikey=${second.key}&from=2030-01-01`))).status,
      200,
    );
    assert.equal(
      (await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}&from=2030-01-01`))).status,
      200,
    );
  });

  test('no rate limit by default: no RateLimit fields', async () => {
    const res = await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}&from=2030-01-01`));
    assert.equal(res.headers.ratelimit, undefined);
    assert.equal(res.headers['ratelimit-policy'], undefined);
  });

  test('a limited key: RateLimit fields on every answer, then 429 with Retry-After', async () => {
    const { key, id } = await issue('100', 'limited');
    await server.keys.setRateLimit(id, { requests: 2, perSeconds: 60 });
    const path = api('100', `apikey=${key}&from=2030-01-01`);
    const first = await rawRequest(server.url, 'GET', path);
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-policy'], '"default";q=2;w=60');
    assert.match(String(first.headers.ratelimit), /^"default";r=1;t=\d+$/);
    const refusedEarlier = await rawRequest(server.url, 'GET', api('100', `apikey=${key}&from=bad`));
    assert.equal(refusedEarlier.status, 400);
    assert.equal(refusedEarlier.headers['ratelimit-policy'], '"default";q=2;w=60');
    assert.equal((await rawRequest(server.url, 'GET', path)).status, 200);
    const limited = await rawRequest(server.url, 'GET', path);
    assert.equal(limited.status, 429);
    assert.equal(JSON.parse(limited.body.toString()).error.code, 'rate_limited');
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.match(String(limited.headers.ratelimit), /^"default";r=0;t=\d+$/);
    await server.keys.setRateLimit(id, null);
  });
});

describe('faults', () => {
  test('a store that cannot answer → 503 unavailable with Retry-After; an unexpected fault → 500 without internals', async () => {
    const original = server.store.hubs.get;
    try {
      server.store.hubs.get = async () => {
        throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      };
      const busy = await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}`));
      assert.equal(busy.status, 503);
      assert.equal(busy.headers['retry-after'], '2');
      assert.equal(JSON.parse(busy.body.toString()).error.code, 'unavailable');
      server.store.hubs.get = async () => {
        throw new Error('SELECT secret_column FROM internals');
      };
      const fault = await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}`));
      assert.equal(fault.status, 500);
      assert.equal(JSON.parse(fault.body.toString()).error.code, 'internal_error');
      assert.doesNotMatch(fault.body.toString(), /SELECT|secret_column|\.ts/);
    } finally {
      server.store.hubs.get = original;
    }
  });
});

describe('health', () => {
  test('/healthz and /readyz answer', async () => {
    assert.equal((await rawRequest(server.url, 'GET', '/healthz')).status, 200);
    assert.equal((await rawRequest(server.url, 'GET', '/readyz')).status, 200);
  });
});

test('no key, nor any part of one, reaches the log', async () => {
  // However the parameter is spelled: encoded name, odd case, repeated, in a bad path.
  for (const path of [
    `/api/line/100/messages?api%6Bey=${tokyoKey}`,
    `/api/line/100/messages??apikey=${tokyoKey}`,
    `/api/line/100/messages?x=${tokyoKey}`,
    `/api/line/100/messages?APIKEY=${tokyoKey}&apikey=${tokyoKey}`,
    `/api/line/%ZZ/messages?apikey=${tokyoKey}`,
    `/nowhere?apikey=${tokyoKey}`,
    `/api/line/100/messages?from=bad&apikey=${tokyoKey}`,
  ]) {
    await rawRequest(server.url, 'GET', path);
    await rawRequest(server.url, 'POST', path);
  }
  assert.ok(server.logs.lines.length > 10, 'requests were logged');
  assert.ok(server.logs.text.includes('apikey=[REDACTED]'));
  for (const key of usedSecrets) {
    assert.equal(server.logs.text.includes(key), false);
    assert.equal(server.logs.text.includes(key.slice(4, 20)), false);
  }
});

test('every answer carries X-Request-Id: the client’s when it looks like one, else a new one; the request’s one log line has it', async () => {
  const given = await rawRequest(server.url, 'GET', api('100', `apikey=${tokyoKey}`), {
    'x-request-id': 'trace-42.abc_DEF:1',
  });
  assert.equal(given.headers['x-request-id'], 'trace-42.abc_DEF:1');
  const made = await rawRequest(server.url, 'GET', '/nowhere', { 'x-request-id': 'bad id with spaces' });
  assert.equal(made.status, 404);
  assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  const refused = await rawRequest(server.url, 'GET', api('100', 'apikey=nope'));
  assert.match(String(refused.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  const logged = server.logs.lines
    .map(
      (line) =>
        JSON.parse(line) as {
          reqId?: string;
          msg?: string;
          req?: { method?: string; url?: string };
          res?: { statusCode?: number };
          responseTime?: number;
        },
    )
    .filter((line) => line.reqId === 'trace-42.abc_DEF:1');
  // One line per request, with everything about it.
  assert.equal(logged.length, 1, JSON.stringify(logged));
  const [line] = logged;
  assert.equal(line?.msg, 'request completed');
  assert.deepEqual([line?.req?.method, line?.req?.url], ['GET', '/api/line/100/messages?apikey=[REDACTED]']);
  assert.equal(line?.res?.statusCode, 200);
  assert.equal(typeof line?.responseTime, 'number');
});
