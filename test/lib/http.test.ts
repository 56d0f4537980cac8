import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  COMPRESSOR_SLICE_BYTES,
  compressorInput,
  createCompressor,
  etagMatches,
  negotiateEncoding,
  readableQuery,
  redactUrl,
} from '../../src/lib/http.js';
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

/** The bytes a client gets when `chunks` are compressed as the read API compresses an answer. */
async function compressedAnswer(chunks: Buffer[], encoding: 'br' | 'gzip'): Promise<Buffer> {
  const compressor = createCompressor(encoding);
  const out: Buffer[] = [];
  compressor.on('data', (data: Buffer) => out.push(data));
  const ended = new Promise((resolve) => compressor.on('end', resolve));
  async function* source() {
    yield* chunks;
  }
  for await (const slice of compressorInput(source(), () => compressor.flush())) compressor.write(slice);
  compressor.end();
  await ended;
  return Buffer.concat(out);
}

test('a compressed answer is the same bytes however the answer was cut into chunks', async () => {
  // Text that compresses, and more than a few slices of it.
  const answer = Buffer.from(
    Array.from({ length: 40_000 }, (_, i) => `{"msg":"予約 ${i % 97} ${'x'.repeat(i % 13)}"}`).join(','),
  );
  assert.ok(answer.length > 3 * COMPRESSOR_SLICE_BYTES);
  const expected = {
    br: await compressedAnswer([answer], 'br'),
    gzip: await compressedAnswer([answer], 'gzip'),
  };
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 1, max: answer.length - 1 }), { maxLength: 40 }),
      fc.constantFrom('br' as const, 'gzip' as const),
      async (cuts, encoding) => {
        const at = [0, ...cuts.sort((a, b) => a - b), answer.length];
        const chunks = at.slice(1).map((end, i) => answer.subarray(at[i], end));
        assert.ok((await compressedAnswer(chunks, encoding)).equals(expected[encoding]));
      },
    ),
    { numRuns: 60 },
  );
});

test('readableQuery: the same names and values as the query it was given, decoded where that is safe', () => {
  const text = fc.string({
    unit: fc.constantFrom('a', '予', '約', ' ', '&', '=', '+', '%', '#', '\n', '\u3000', '😀', '/'),
  });
  fc.assert(
    fc.property(fc.array(fc.tuple(text, text), { maxLength: 6 }), (pairs) => {
      const encoded = new URLSearchParams(pairs).toString();
      const readable = readableQuery(encoded);
      // Read back, it is the same query (what the oracle, URLSearchParams, makes of each).
      assert.deepEqual([...new URLSearchParams(readable)], pairs);
      // Nothing that reads as itself is percent-encoded; and it reads the same a second time.
      assert.doesNotMatch(readable, /%E4%BA%88|%E7%B4%84|%2F|%F0/);
      assert.equal(readableQuery(readable), readable);
    }),
  );
  assert.equal(readableQuery('q=%E4%BA%88%E7%B4%84&limit=2'), 'q=予約&limit=2');
  assert.equal(readableQuery('q=a+b%26c%3Dd'), 'q=a%20b%26c%3Dd');
});
