import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { createLogger } from '../../../src/lib/logger.js';
import { RateLimiter } from '../../../src/modules/keys/keys.ratelimit.js';
import { freePort, LogCapture } from '../../helpers.js';

const REDIS_URL = process.env.CHATLOG_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const limit = { requests: 3, perSeconds: 60 };

test('in memory: the allowance counts down, then refuses with Retry-After', async () => {
  const limiter = new RateLimiter();
  const key = randomUUID();
  const remaining = [];
  for (let i = 0; i < 3; i++) {
    const state = await limiter.consume(key, limit);
    assert.equal(state.allowed, true);
    remaining.push(state.headers.RateLimit);
  }
  assert.deepEqual(
    remaining.map((h) => h?.replace(/;t=\d+$/, '')),
    ['"default";r=2', '"default";r=1', '"default";r=0'],
  );
  const refused = await limiter.consume(key, limit);
  assert.equal(refused.allowed, false);
  assert.match(refused.headers['Retry-After'] ?? '', /^\d+$/);
  assert.equal(refused.headers['RateLimit-Policy'], '"default";q=3;w=60');
});

test('two limiters on one Redis share the count', async () => {
  const a = new RateLimiter({ redisUrl: REDIS_URL });
  const b = new RateLimiter({ redisUrl: REDIS_URL });
  try {
    await Promise.all([a.connected(), b.connected()]);
    const key = randomUUID();
    const results = [];
    for (let i = 0; i < 5; i++) results.push((await (i % 2 ? b : a).consume(key, limit)).allowed);
    assert.deepEqual(results, [true, true, true, false, false]);
  } finally {
    await a.close();
    await b.close();
  }
});

test('Redis unreachable: requests are answered without limiting, and it is logged once', async () => {
  const logs = new LogCapture();
  const limiter = new RateLimiter({
    redisUrl: `redis://127.0.0.1:${await freePort()}`,
    log: createLogger('info', logs),
  });
  try {
    for (let i = 0; i < 5; i++) {
      const state = await limiter.consume('k', limit);
      assert.equal(state.allowed, true);
      assert.deepEqual(state.headers, {});
    }
    assert.deepEqual(await limiter.peek('k', limit), {});
    assert.equal(logs.lines.filter((line) => line.includes('rate limits are not enforced')).length, 1);
  } finally {
    await limiter.close();
  }
});
