/**
 * One delivery attempt of an outgoing webhook (CONTRACT §10), and when to try again. The outbox
 * worker that calls it is webhooks.worker.ts; what it stores between attempts, ../../store/sql/webhooks.ts.
 *
 * An attempt is one signed POST: a 2xx answer within the time limit is delivered; 410 Gone means the
 * endpoint asks to be disabled; anything else (another status, a redirect, which is never followed,
 * a refused address, a timeout, a network error) is a failure to retry. Every attempt checks the URL's
 * addresses first (the name is resolved again); a connection goes only to an address so checked
 * (guardedLookup, or the addresses just checked). An endpoint's loop may pass a keep-alive agent of
 * its own: the attempt is still checked first, and then may reuse a connection the loop opened to a
 * checked address; a kept connection that the receiver closed meanwhile is tried again once, anew.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type SignedHeaders, signDelivery } from './webhooks.signature.js';
import {
  addressProblem,
  checkedAddresses,
  guardedLookup,
  pinnedLookup,
  type Resolve,
  resolveAll,
  type UrlPolicy,
} from './webhooks.url.js';

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
  /**
   * Connections kept between the attempts of one endpoint (endpointAgent); without it each
   * attempt makes a connection of its own.
   */
  agent?: http.Agent;
}

/** Keep-alive connections for one endpoint's attempts; idle ones close after a second. */
export function endpointAgent(url: string, maxSockets: number): http.Agent {
  const options = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: 1_000 };
  return url.startsWith('https:') ? new https.Agent(options) : new http.Agent(options);
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
  const headers = signDelivery(
    target.secret,
    message.id,
    (options.now ?? (() => new Date()))(),
    message.body,
  );
  const timeoutMs = options.timeoutMs ?? 15_000;
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!options.agent) {
    // Node connects to an address written in the URL without a look-up: check it here.
    const refused = net.isIP(literal) ? addressProblem(literal, scheme, options.policy) : undefined;
    if (refused) return Promise.resolve({ outcome: 'failed', reason: refused });
    const lookup = guardedLookup(scheme, options.policy, options.resolve ?? resolveAll);
    return post(url, { agent: false, lookup }, message.body, headers, timeoutMs).then(notStale);
  }
  const agent = options.agent;
  return checkedAddresses(literal, scheme, options.policy, options.resolve ?? resolveAll).then(
    async (checked) => {
      if (!checked.ok) return { outcome: 'failed', reason: checked.reason } as const;
      const connection = { agent, lookup: pinnedLookup(checked.addresses) };
      const first = await post(url, connection, message.body, headers, timeoutMs);
      // A kept connection the receiver had closed: once more, on a new one.
      return first.outcome === 'stale'
        ? notStale(await post(url, connection, message.body, headers, timeoutMs))
        : first;
    },
  );
}

const notStale = (result: AttemptResult | { outcome: 'stale' }): AttemptResult =>
  result.outcome === 'stale' ? { outcome: 'failed', reason: 'could not connect (ECONNRESET)' } : result;

type Connection = Pick<http.RequestOptions, 'agent' | 'lookup'>;

/** One POST; 'stale' when a reused connection failed before any answer. Never throws. */
function post(
  url: URL,
  connection: Connection,
  body: string,
  signature: SignedHeaders,
  timeoutMs: number,
): Promise<AttemptResult | { outcome: 'stale' }> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult | { outcome: 'stale' }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      ...connection,
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
        'User-Agent': 'chatlog-webhooks',
        ...signature,
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
      finish(
        request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')
          ? { outcome: 'stale' }
          : {
              outcome: 'failed',
              reason:
                error.code === 'ECHATLOGREFUSED'
                  ? error.message
                  : `could not connect (${error.code ?? error.message})`,
            },
      ),
    );
    request.end(body);
  });
}
