/**
 * Per-key rate limits (CONTRACT §5): none unless the operator sets one on a key. Counters live
 * in Redis when REDIS_URL is set (shared by every node), in the primary process when this is one
 * of several workers on a machine, and in this process otherwise. If Redis cannot be reached,
 * requests are answered without limiting (logged once) rather than failing.
 */
import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { RateLimit } from '../../store/store.js';

export interface RateLimitState {
  allowed: boolean;
  headers: Record<string, string>;
}

export interface RateLimiterOptions {
  redisUrl?: string | undefined;
  log?: FastifyBaseLogger | undefined;
}

export class RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  /** Loaded only when REDIS_URL is set, so that a single node starts without it. */
  private readonly redis: Promise<Redis> | undefined;
  private readonly log: FastifyBaseLogger | undefined;
  private degraded = false;

  constructor(options: RateLimiterOptions = {}) {
    this.log = options.log;
    const redisUrl = options.redisUrl;
    if (redisUrl) {
      // required (it is CommonJS), so that its names are the same whether chatlog runs bundled or not.
      this.redis = Promise.resolve().then(() => {
        const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
        const client = new Redis(redisUrl, {
          // Fail fast while Redis is away instead of queueing requests behind it.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2_000,
        });
        // Connection trouble surfaces as failed commands (handled below); never crash on it.
        client.on('error', () => undefined);
        return client;
      });
    }
  }

  private async limiterFor(limit: RateLimit): Promise<RateLimiterAbstract> {
    const id = `${limit.requests}/${limit.perSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const options = { points: limit.requests, duration: limit.perSeconds, keyPrefix: `chatlog:rl:${id}` };
      const redis = this.redis ? await this.redis : undefined;
      if (redis)
        limiter = new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true });
      else if (cluster.isWorker) limiter = new RateLimiterCluster({ ...options, timeoutMs: 2_000 });
      else limiter = new RateLimiterMemory(options);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  /** Takes one request from the key's allowance. */
  async consume(keyId: string, limit: RateLimit): Promise<RateLimitState> {
    try {
      const result = await (await this.limiterFor(limit)).consume(keyId, 1);
      this.recovered();
      return { allowed: true, headers: rateLimitHeaders(limit, result) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return this.unlimited(rejection);
      this.recovered();
      const headers = rateLimitHeaders(limit, rejection);
      headers['Retry-After'] = String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      return { allowed: false, headers };
    }
  }

  /** The key's allowance as it stands, without taking from it (for answers refused earlier). */
  async peek(keyId: string, limit: RateLimit): Promise<Record<string, string>> {
    try {
      return rateLimitHeaders(limit, await (await this.limiterFor(limit)).get(keyId));
    } catch {
      return {};
    }
  }

  /**
   * Seconds until the allowance has room again, 0 when it has room now (without taking from it):
   * for counters of failures, such as sign-in attempts. 0 too while the counter store is away.
   */
  async blockedFor(keyId: string, limit: RateLimit): Promise<number> {
    try {
      const result = await (await this.limiterFor(limit)).get(keyId);
      if (!result || result.consumedPoints < limit.requests) return 0;
      return Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    } catch (error) {
      this.unlimited(error);
      return 0;
    }
  }

  /** Resolves once Redis is connected (at once without Redis): until then, requests are not limited. */
  async connected(): Promise<void> {
    if (!this.redis) return;
    const redis = await this.redis;
    if (redis.status === 'ready') return;
    await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    const redis = await this.redis;
    await redis.quit().catch(() => redis.disconnect());
  }

  private unlimited(error: unknown): RateLimitState {
    if (!this.degraded) {
      this.degraded = true;
      this.log?.warn(
        { reason: (error as Error)?.message },
        'rate limits are not enforced: the counter store is unreachable',
      );
    }
    return { allowed: true, headers: {} };
  }

  private recovered(): void {
    if (this.degraded) {
      this.degraded = false;
      this.log?.info('rate limits are enforced again');
    }
  }
}

function rateLimitHeaders(limit: RateLimit, result: RateLimiterRes | null): Record<string, string> {
  const remaining = result ? Math.max(0, result.remainingPoints) : limit.requests;
  const resetSeconds = result ? Math.max(0, Math.ceil(result.msBeforeNext / 1000)) : limit.perSeconds;
  return {
    'RateLimit-Policy': `"default";q=${limit.requests};w=${limit.perSeconds}`,
    RateLimit: `"default";r=${remaining};t=${resetSeconds}`,
  };
}
