import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { etagMatches, negotiateEncoding, redactUrl } from '../../src/lib/http.js';
import { generateApiKey } from '../../src/modules/keys/keys.format.js';

test('Accept-Encoding: q-values are honoured, br wins ties, identity when nothing else is welcome', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0, identity', 'identity'],
    ['identity;q=1, gzip;q=0.5', 'identity'],
    ['deflate', 'identity'],
    ['GZIP', 'gzip'],
    ['gzip;q=nonsense', 'identity'],
  ];
  for (const [header, expected] of cases) assert.equal(negotiateEncoding(header), expected, String(header));
  fc.assert(
    fc.property(fc.string(), (header) =>
      assert.ok(['br', 'gzip', 'identity'].includes(negotiateEncoding(header))),
    ),
  );
});

test('If-None-Match: weak comparison, lists and *', () => {
  assert.ok(etagMatches('W/"abc"', 'W/"abc"'));
  assert.ok(etagMatches('"abc"', 'W/"abc"'));
  assert.ok(etagMatches('"x", W/"abc"', 'W/"abc"'));
  assert.ok(etagMatches('*', 'W/"abc"'));
  assert.ok(!etagMatches('W/"abd"', 'W/"abc"'));
  assert.ok(!etagMatches(undefined, 'W/"abc"'));
});

test('redactUrl hides every apikey value and search words, and keeps everything else', () => {
  const pair = fc.tuple(
    fc.constantFrom('from', 'to', 'x', 'apikey', 'APIKEY', 'api%6Bey', 'ApiKey', 'q', 'Q', '%71'),
    fc.string({ maxLength: 12 }).map(encodeURIComponent),
  );
  fc.assert(
    fc.property(fc.array(pair, { maxLength: 6 }), (pairs) => {
      const key = generateApiKey();
      const all = [...pairs, ['apikey', key] as [string, string]];
      const url = `/api/line/1/messages?${all.map(([k, v]) => `${k}=${v}`).join('&')}`;
      const redacted = redactUrl(url);
      assert.ok(!redacted.includes(key));
      const kept = redacted.split('?')[1]?.split('&') ?? [];
      assert.equal(kept.length, all.length);
      for (const [i, [name, value]] of all.entries()) {
        const isKey = ['apikey', 'q'].includes(decodeURIComponent(name).toLowerCase());
        assert.equal(kept[i], isKey ? `${name}=[REDACTED]` : `${name}=${value}`);
      }
    }),
  );
  assert.equal(redactUrl('/healthz'), '/healthz');
});
