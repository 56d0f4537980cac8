import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  generateApiKey,
  isWellFormedApiKey,
  KEY_LENGTH,
  keyStart,
} from '../../../src/modules/keys/keys.format.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

test('issued keys carry the chl_ prefix, 22 random base62 characters and a checksum', () => {
  const keys = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const key = generateApiKey();
    assert.match(key, /^chl_[0-9A-Za-z]{28}$/);
    assert.equal(key.length, KEY_LENGTH);
    assert.ok(isWellFormedApiKey(key));
    keys.add(key);
  }
  assert.equal(keys.size, 2000);
  assert.equal(keyStart('chl_abcdefgh'), 'chl_abcd');
});

test('any one mistyped character, or two swapped neighbours, fails the checksum', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 4, max: KEY_LENGTH - 1 }),
      fc.integer({ min: 1, max: 61 }),
      (position, shift) => {
        const key = generateApiKey();
        const original = key[position] ?? '0';
        const replaced = BASE62[(BASE62.indexOf(original) + shift) % 62] ?? '0';
        const typo = key.slice(0, position) + replaced + key.slice(position + 1);
        assert.equal(isWellFormedApiKey(typo), false);
        if (position < KEY_LENGTH - 1 && key[position] !== key[position + 1]) {
          const swapped =
            key.slice(0, position) + key[position + 1] + key[position] + key.slice(position + 2);
          assert.equal(isWellFormedApiKey(swapped), false);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test('random text is not a key', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 64 }), (text) => assert.equal(isWellFormedApiKey(text), false)),
  );
  for (const text of [
    '',
    'chl_',
    `CHL_${generateApiKey().slice(4)}`,
    `${generateApiKey()} `,
    `x${generateApiKey()}`,
  ]) {
    assert.equal(isWellFormedApiKey(text), false);
  }
});
