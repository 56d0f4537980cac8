import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Utf8Writer } from '../../src/lib/utf8-writer.js';

test('text written piece by piece is the UTF-8 of the pieces joined, whatever the first size', () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 40 }),
      fc.integer({ min: 0, max: 2000 }),
      (pieces, expected) => {
        const out = new Utf8Writer(expected);
        for (const piece of pieces) out.write(piece);
        assert.deepEqual(out.bytes(), Buffer.from(pieces.join(''), 'utf8'));
      },
    ),
  );
});

test('a page far larger than expected grows and loses nothing', () => {
  const out = new Utf8Writer(0);
  const piece = 'ご予約の件です 😀 ';
  for (let i = 0; i < 10_000; i++) out.write(piece);
  assert.equal(out.bytes().toString('utf8'), piece.repeat(10_000));
});
