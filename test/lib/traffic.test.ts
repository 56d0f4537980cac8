import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TrafficMeter } from '../../src/lib/traffic.js';

/** `perSecond` writes a second for `ms`, each open `openMs` (a closed-loop or an open-loop sender). */
function drive(meter: TrafficMeter, clock: { now: number }, perSecond: number, openMs: number, ms: number) {
  const closing: Array<{ at: number; close: () => void }> = [];
  const end = clock.now + ms;
  for (let at = clock.now; at < end; at += 1000 / perSecond) {
    clock.now = at;
    for (const due of closing.filter((c) => c.at <= at)) due.close();
    closing.splice(0, closing.length, ...closing.filter((c) => c.at > at));
    const close = meter.arrived(true);
    if (close) closing.push({ at: at + openMs, close });
  }
  return () => {
    for (const c of closing) c.close();
  };
}

test('writes that queue (32 senders, 25 ms each) make the process busy; 200 a second do not', () => {
  const clock = { now: 1_000_000 };
  const meter = new TrafficMeter(() => clock.now);
  // 200 webhooks a second answered in 30 ms: about 6 open at once.
  let closeAll = drive(meter, clock, 200, 30, 2000);
  assert.equal(meter.busy(), false);
  closeAll();
  // 1,000 a second answered in 25 ms: about 25 open at once, as 32 senders keep.
  closeAll = drive(meter, clock, 1000, 25, 2000);
  assert.equal(meter.busy(), true);
  closeAll();
  // Then nothing for a second: the last window says nothing any more.
  clock.now += 1500;
  assert.equal(meter.busy(), false);
});

test('a burst of open writes is busy at once, before its window ends', () => {
  const clock = { now: 1_000_000 };
  const meter = new TrafficMeter(() => clock.now);
  const closes = Array.from({ length: 24 }, () => meter.arrived(true));
  assert.equal(meter.busy(), true);
  for (const close of closes) close?.();
  assert.equal(meter.busy(), false);
  // Reads are not writes.
  for (let i = 0; i < 50; i++) assert.equal(meter.arrived(false), undefined);
  assert.equal(meter.busy(), false);
});
