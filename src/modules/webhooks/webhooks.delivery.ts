/**
 * One delivery attempt of an outgoing webhook (CONTRACT §10), and when to try again. The outbox
 * worker that calls it is webhooks.worker.ts; what it stores between attempts, ../../store/sql/webhooks.ts.
 *
 * An attempt is one signed POST: a 2xx answer within the time limit is delivered; 410 Gone means the
 * endpoint asks to be disabled; anything else (another status, a redirect, which is never followed,
 * a refused address, a timeout, a network error) is a failure to retry. The connection goes only to
 * an address the URL rules allow (guardedLookup), made afresh for each attempt.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { signDelivery } from './webhooks.signature.js';
import { addressProblem, guardedLookup, type Resolve, resolveAll, type UrlPolicy } from './webhooks.url.js';

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure; then the change is marked failed. */
export const RETRY_DELAYS_MS = [5e3, 3e5, 1.8e6, 7.2e6, 1.8e7, 3.6e7, 3.6e7] as const;
const JITTER = 0.2;
/** An answer's body is read (and dropped) up to this much, so a connection can end cleanly. */
const ANSWER_BYTES_READ = 64 * 1024;

/** How long to wait after the `failures`-th failed attempt (1 for the first), or undefined: give up. */
export function retryDelayMs(failures: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_DELAYS_MS[failures - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

export interface DeliveryTarget {
  url: string;
  /** The endpoint's secret (`whsec_...`), decrypted for this attempt only. */
  secret: string;
}

export interface DeliveryOptions {
  policy: UrlPolicy;
  /** 15 s in production (§10); tests shorten it. */
  timeoutMs?: number;
  /** The attempt's time, for webhook-timestamp. */
  now?: () => Date;
  resolve?: Resolve;
}

export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone'; status: 410 }
  | { outcome: 'failed'; status?: number; reason: string };

/** POSTs `body` (the exact bytes signed) as webhook `id` to the target, once. Never throws. */
export function attemptDelivery(
  target: DeliveryTarget,
  message: { id: string; body: string },
  options: DeliveryOptions,
): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return Promise.resolve({ outcome: 'failed', reason: 'the endpoint URL is not a URL' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return Promise.resolve({ outcome: 'failed', reason: 'the endpoint URL is not http or https' });
  }
  const scheme = url.protocol;
  // Node connects to an address written in the URL without a look-up: check it here.
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const refused = net.isIP(literal) ? addressProblem(literal, scheme, options.policy) : undefined;
  if (refused) return Promise.resolve({ outcome: 'failed', reason: refused });
  const headers = signDelivery(
    target.secret,
    message.id,
    (options.now ?? (() => new Date()))(),
    message.body,
  );
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (scheme === 'https:' ? https : http).request(url, {
      method: 'POST',
      // A connection of its own: a pooled one would skip the address check.
      agent: false,
      lookup: guardedLookup(scheme, options.policy, options.resolve ?? resolveAll),
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(message.body),
        'User-Agent': 'chatlog-webhooks',
        ...headers,
      },
    });
    // The whole attempt, connection and answer included, within the limit.
    const timer = setTimeout(() => {
      finish({ outcome: 'failed', reason: `no answer within ${timeoutMs / 1000} s` });
      request.destroy();
    }, timeoutMs);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > ANSWER_BYTES_READ) response.destroy();
      });
      const settle = () => {
        if (status >= 200 && status < 300) finish({ outcome: 'delivered', status });
        else if (status === 410) finish({ outcome: 'gone', status: 410 });
        else if (status >= 300 && status < 400)
          finish({ outcome: 'failed', status, reason: 'a redirect (never followed)' });
        else finish({ outcome: 'failed', status, reason: `answered ${status}` });
      };
      response.on('end', settle);
      response.on('close', settle);
      response.on('error', settle);
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        outcome: 'failed',
        reason:
          error.code === 'ECHATLOGREFUSED'
            ? error.message
            : `could not connect (${error.code ?? error.message})`,
      }),
    );
    request.end(message.body);
  });
}
