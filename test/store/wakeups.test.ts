/** Long-poll wake-ups within one process (the PostgreSQL ones, across nodes: test/scale/wakeups.test.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalWakeups } from '../../src/store/sql/wakeups.js';

test('a waiter wakes when its hub changes, and only then', async () => {
  const wakeups = new LocalWakeups();
  const one = wakeups.subscribe('1');
  const other = wakeups.subscribe('2');
  const started = Date.now();
  const waiting = one.wait(5_000);
  wakeups.wake(['1']);
  assert.equal(await waiting, true);
  assert.ok(Date.now() - started < 1_000);
  assert.equal(await other.wait(30), false, 'another hub changed nothing for it');
  one.cancel();
  other.cancel();
  assert.equal(wakeups.size, 0);
});

test('a change between the look and the wait is not missed', async () => {
  const wakeups = new LocalWakeups();
  const waiter = wakeups.subscribe('1');
  // The reader looked, found nothing; the change commits before it waits.
  wakeups.wake(['1']);
  assert.equal(await waiter.wait(5_000), true);
  waiter.cancel();
});

test('cancel ends a wait at once, and wakeAll wakes every hub', async () => {
  const wakeups = new LocalWakeups();
  const waiter = wakeups.subscribe('1');
  const waiting = waiter.wait(5_000);
  waiter.cancel();
  assert.equal(await waiting, false);
  const a = wakeups.subscribe('1');
  const b = wakeups.subscribe('2');
  const both = Promise.all([a.wait(5_000), b.wait(5_000)]);
  wakeups.wakeAll();
  assert.deepEqual(await both, [true, true]);
  a.cancel();
  b.cancel();
  assert.equal(wakeups.size, 0);
});
