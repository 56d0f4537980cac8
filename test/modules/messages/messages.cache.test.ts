import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnswerCache, watchHistory } from '../../../src/modules/messages/messages.cache.js';

const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

test('the answer cache keeps what fits, forgets the least recently used first, never a big answer', () => {
  const cache = new AnswerCache(1600);
  assert.equal(cache.maxEntryBytes, 100);
  cache.set('too big', '1', bytes(101));
  assert.equal(cache.get('too big'), undefined);
  for (let i = 0; i < 16; i++) cache.set(`k${i}`, '1', bytes(100, i));
  assert.deepEqual(cache.get('k0')?.body, bytes(100, 0)); // now the most recently used
  cache.set('k16', '1', bytes(100, 16)); // over 1600 bytes: the least recently used (k1) goes
  assert.equal(cache.get('k1'), undefined);
  assert.deepEqual(cache.get('k0')?.body, bytes(100, 0));
  assert.deepEqual(cache.get('k16')?.body, bytes(100, 16));
});

test('a cache of 0 bytes is off and keeps nothing', () => {
  const cache = new AnswerCache(0);
  assert.equal(cache.enabled, false);
  cache.set('k', '1', bytes(1));
  assert.equal(cache.get('k'), undefined);
});

test("forgetting a hub drops its answers, and those of it being made now, and no other hub's", async () => {
  const cache = new AnswerCache(1600);
  cache.set('a1', 'a', bytes(10));
  cache.set('a2', 'a', bytes(10));
  cache.set('b1', 'b', bytes(10));
  const making = cache.recorder('a3', 'a', {});
  cache.forgetHub('a');
  // The answer begun before the hub was forgotten ends now: not kept.
  await new Promise<void>((resolve, reject) => {
    making.keep.on('finish', resolve).on('error', reject);
    making.measure.pipe(making.keep).resume();
    making.measure.end(bytes(10));
  });
  making.done();
  assert.equal(cache.get('a1'), undefined);
  assert.equal(cache.get('a2'), undefined);
  assert.equal(cache.get('a3'), undefined);
  assert.deepEqual(cache.get('b1')?.body, bytes(10));
  assert.equal(cache.holds('a'), false);
  // Room freed: sixteen answers of 100 bytes fit again beside b1's 10.
  for (let i = 0; i < 15; i++) cache.set(`c${i}`, 'c', bytes(100));
  assert.deepEqual(cache.get('b1')?.body, bytes(10));
});

test("a hub's answers go when its history version moves, not when it only grows", async () => {
  const cache = new AnswerCache(1600);
  let listener: (hubId: string | undefined) => void = () => undefined;
  const versions = new Map([
    ['a', 1],
    ['b', 1],
  ]);
  const stop = watchHistory(
    cache,
    (l) => {
      listener = l;
      return () => undefined;
    },
    async (hubId) => versions.get(hubId),
    (error) => assert.fail(String(error)),
  );
  const settle = () => new Promise((resolve) => setTimeout(resolve, 250));
  try {
    // The first look at a hub knows no version before it: its answers go once.
    cache.set('a1', 'a', bytes(10));
    listener('a');
    await settle();
    assert.equal(cache.get('a1'), undefined);
    // New messages: the version stays, and so do the answers.
    cache.set('a1', 'a', bytes(10));
    cache.set('b1', 'b', bytes(10));
    listener('a');
    await settle();
    assert.deepEqual(cache.get('a1')?.body, bytes(10));
    // An erasure, an unsend, retention: the version moves, and the hub's answers go.
    versions.set('a', 2);
    listener('a');
    await settle();
    assert.equal(cache.get('a1'), undefined);
    assert.deepEqual(cache.get('b1')?.body, bytes(10));
    // "Anything may have changed" looks at every hub held.
    versions.set('b', 2);
    listener(undefined);
    await settle();
    assert.equal(cache.get('b1'), undefined);
  } finally {
    stop();
  }
});

test('a change that comes while a hub is being looked at is looked at again after', async () => {
  const cache = new AnswerCache(1600);
  let listener: (hubId: string | undefined) => void = () => undefined;
  let version = 1;
  let reads = 0;
  let release: () => void = () => undefined;
  const stop = watchHistory(
    cache,
    (l) => {
      listener = l;
      return () => undefined;
    },
    async () => {
      reads += 1;
      const read = version;
      // The first read is slow: the erasure commits after it read the version, before it ends.
      if (reads === 2) await new Promise<void>((resolve) => (release = resolve));
      return read;
    },
    (error) => assert.fail(String(error)),
  );
  const settle = () => new Promise((resolve) => setTimeout(resolve, 250));
  try {
    cache.set('a1', 'a', bytes(10));
    listener('a');
    await settle(); // first look: version 1 seen
    cache.set('a1', 'a', bytes(10));
    listener('a'); // a new message: the look reads 1 and waits
    await settle();
    version = 2;
    cache.set('a2', 'a', bytes(10)); // an answer made before the erasure, say
    listener('a'); // the erasure's change, while the look is under way
    release();
    await settle();
    await settle();
    assert.equal(cache.get('a2'), undefined, 'looked at again, it saw version 2');
    assert.equal(reads, 3);
  } finally {
    stop();
  }
});
