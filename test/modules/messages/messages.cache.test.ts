import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnswerCache } from '../../../src/modules/messages/messages.cache.js';

const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

test('the answer cache keeps what fits, forgets the least recently used first, never a big answer', () => {
  const cache = new AnswerCache(1600);
  assert.equal(cache.maxEntryBytes, 100);
  cache.set('too big', bytes(101));
  assert.equal(cache.get('too big'), undefined);
  for (let i = 0; i < 16; i++) cache.set(`k${i}`, bytes(100, i));
  assert.deepEqual(cache.get('k0'), bytes(100, 0)); // now the most recently used
  cache.set('k16', bytes(100, 16)); // over 1600 bytes: the least recently used (k1) goes
  assert.equal(cache.get('k1'), undefined);
  assert.deepEqual(cache.get('k0'), bytes(100, 0));
  assert.deepEqual(cache.get('k16'), bytes(100, 16));
});

test('a cache of 0 bytes is off and keeps nothing', () => {
  const cache = new AnswerCache(0);
  assert.equal(cache.enabled, false);
  cache.set('k', bytes(1));
  assert.equal(cache.get('k'), undefined);
});
