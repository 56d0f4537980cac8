import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { attachment, rangeOf } from '../../../src/modules/content/content.range.js';

/** RFC 9110 §14.1.2, read plainly: which bytes one `bytes=` range of a representation of `size` selects. */
function oracle(first: number | undefined, last: number | undefined, size: number) {
  if (first === undefined && last === undefined) return { kind: 'whole' };
  if (first === undefined) {
    const n = last ?? 0;
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  if (last !== undefined && last < first) return { kind: 'whole' }; // invalid: ignored
  if (first >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start: first, end: Math.min(last ?? size - 1, size - 1) };
}

test('one bytes range selects what RFC 9110 says, for every position and size', () => {
  fc.assert(
    fc.property(
      fc.option(fc.nat(2000), { nil: undefined }),
      fc.option(fc.nat(2000), { nil: undefined }),
      fc.nat(1500),
      (first, last, size) => {
        const header = `bytes=${first ?? ''}-${last ?? ''}`;
        assert.deepEqual(rangeOf(header, size), oracle(first, last, size));
      },
    ),
    { numRuns: 2000 },
  );
});

test('no Range, several ranges, or another unit: the whole content', () => {
  assert.deepEqual(rangeOf(undefined, 10), { kind: 'whole' });
  assert.deepEqual(rangeOf('bytes=0-1,4-5', 10), { kind: 'whole' });
  assert.deepEqual(rangeOf('items=0-1', 10), { kind: 'whole' });
  assert.deepEqual(rangeOf('bytes=abc', 10), { kind: 'whole' });
  assert.deepEqual(rangeOf('bytes=0-0', 10), { kind: 'part', start: 0, end: 0 });
  assert.deepEqual(rangeOf('bytes=-3', 10), { kind: 'part', start: 7, end: 9 });
  assert.deepEqual(rangeOf('bytes=10-', 10), { kind: 'unsatisfiable' });
});

test('a file name reaches Content-Disposition as RFC 6266 filename* with an ASCII fallback', () => {
  assert.equal(
    attachment('見積書 2026.pdf'),
    `attachment; filename="___ 2026.pdf"; filename*=UTF-8''%E8%A6%8B%E7%A9%8D%E6%9B%B8%202026.pdf`,
  );
  // Quotes, separators and control characters never break the header or reach a path.
  assert.equal(
    attachment('a"b;c%\r\n/..\\x'),
    `attachment; filename="a_b_c____.._x"; filename*=UTF-8''a%22b%3Bc%25___.._x`,
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (name) => {
      const header = attachment(name);
      assert.doesNotMatch(header, /\p{Cc}/u);
      const encoded = /filename\*=UTF-8''(.*)$/.exec(header)?.[1] ?? '';
      assert.match(encoded, /^[A-Za-z0-9%!._~-]*$/);
      assert.equal(decodeURIComponent(encoded).length > 0, true);
    }),
  );
});
