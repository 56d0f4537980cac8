/**
 * CHATLOG_DOWNLOAD_MBPS: streams that share one budget move, together, no more bytes a second than
 * it allows, and every byte arrives, in order.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { test } from 'node:test';
import { ByteRate } from '../../src/lib/byte-rate.js';

const bytes = (n: number, seed: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + seed) & 255));

/** `total` bytes in pieces of `piece`. */
function source(total: number, piece: number, seed: number): { stream: Readable; sent: Buffer } {
  const sent = bytes(total, seed);
  const pieces: Buffer[] = [];
  for (let at = 0; at < total; at += piece) pieces.push(sent.subarray(at, at + piece));
  return { stream: Readable.from(pieces), sent };
}

test('three streams sharing 200 kB/s: 600 kB take at least two seconds (the first second’s budget is there at once), each whole and in order', async () => {
  const rate = new ByteRate(200_000);
  const started = performance.now();
  const sources = [0, 1, 2].map((seed) => source(200_000, 16_384, seed));
  const received = await Promise.all(sources.map(({ stream }) => buffer(stream.pipe(rate.stream()))));
  const seconds = (performance.now() - started) / 1000;
  for (const [i, got] of received.entries()) assert.ok(got.equals(sources[i]!.sent), `stream ${i} intact`);
  // 600 kB at 200 kB/s, less the 200 kB the full budget lets through at once: 2 s at least.
  assert.ok(seconds >= 1.9, `took ${seconds.toFixed(2)} s`);
});

test('a piece larger than a second’s budget still passes (once the budget is full)', async () => {
  const rate = new ByteRate(10_000);
  const { stream, sent } = source(25_000, 25_000, 9);
  const got = await buffer(stream.pipe(rate.stream()));
  assert.ok(got.equals(sent));
});

test('a budget that changes: small while busy, and the bytes flow again as soon as it grows', async () => {
  let busy = true;
  const rate = new ByteRate(() => (busy ? 10_000 : 100_000_000));
  const started = performance.now();
  const { stream, sent } = source(1_000_000, 16_384, 5);
  const limited = stream.pipe(rate.stream());
  let received = 0;
  limited.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  const got = buffer(limited);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // At 10 kB/s, a second lets a few pieces of 16 kB through, not the megabyte.
  assert.ok(received < 200_000, `${received} bytes through while busy`);
  busy = false;
  const all = await got;
  assert.ok(all.equals(sent), 'every byte, in order');
  // Well under the 100 s the small budget would take (the budget is looked at every 250 ms).
  const seconds = (performance.now() - started) / 1000;
  assert.ok(seconds < 30, `took ${seconds.toFixed(2)} s`);
});

test('no limit (Infinity) lets everything through without waiting; a limit set later holds from an empty second', async () => {
  // A clock of the test's own: with it standing still, any wait would never end.
  let now = 0;
  let limit = Number.POSITIVE_INFINITY;
  const rate = new ByteRate(
    () => limit,
    () => now,
  );
  const { stream, sent } = source(5_000_000, 65_536, 3);
  assert.ok((await buffer(stream.pipe(rate.stream()))).equals(sent));
  limit = 100_000;
  const after = source(150_000, 10_000, 4);
  const ticking = setInterval(() => {
    now += 50;
  }, 5);
  try {
    assert.ok((await buffer(after.stream.pipe(rate.stream()))).equals(after.sent));
  } finally {
    clearInterval(ticking);
  }
  assert.ok(now >= 1_400, `150 kB at 100 kB/s from an empty second passed after ${now} ms of the clock`);
});
