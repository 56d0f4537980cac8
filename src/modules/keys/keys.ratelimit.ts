/**
 * Per-key rate limits (CONTRACT §5): none unless the operator sets one on a key.
 * Counters live in this process; a later release shares them through Redis.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../../store/store.js';

export interface RateLimitState {
  allowed: boolean;
  headers: Record<string, string>;
}

export class RateLimiter {
  private readonly limiters = new Map<string, RateLimiterMemory>();

  private limiterFor(limit: RateLimit): RateLimiterMemory {
    const id = `${limit.requests}/${limit.perSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: limit.requests, duration: limit.perSeconds, keyPrefix: id });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  /** Takes one request from the key's allowance. */
  async consume(keyId: string, limit: RateLimit): Promise<RateLimitState> {
    try {
      const result = await this.limiterFor(limit).consume(keyId, 1);
      return { allowed: true, headers: rateLimitHeaders(limit, result) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const headers = rateLimitHeaders(limit, rejection);
      headers['Retry-After'] = String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      return { allowed: false, headers };
    }
  }

  /** The key's allowance as it stands, without taking from it (for answers refused earlier). */
  async peek(keyId: string, limit: RateLimit): Promise<Record<string, string>> {
    const result = await this.limiterFor(limit).get(keyId);
    return rateLimitHeaders(limit, result);
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
