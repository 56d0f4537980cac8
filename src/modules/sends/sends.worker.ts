/**
 * The send worker of one node (CONTRACT §16): takes due sends from the store's queue under a lease
 * (so one node pushes each), pushes them to LINE with their retry key, and keeps what LINE took.
 *
 * - Exactly once: every attempt of a send carries the same `X-Line-Retry-Key`, so LINE takes it at
 *   most once (a 409 says it already did, with the ids). The messages are stored (as `You`, under
 *   LINE's ids: `line:<id>`, as a webhook's would be) in the transaction that marks the send sent;
 *   a crash before it leaves the send pending, and the next attempt gets the 409 and its ids.
 * - In order: the store leases only a contact's oldest unfinished send.
 * - 429 waits as LINE's Retry-After says; 5xx and network errors back off (RETRY_DELAYS_MS) for up
 *   to RETRY_FOR_MS after the send was accepted; another 4xx, or the monthly limit, fails with
 *   LINE's words, and nothing is stored.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SecretBox } from '../../lib/secrets.js';
import type { IngestOperation, LeasedSend, SendSettlement, Store } from '../../store/store.js';
import { pushMessages } from './line-push.js';
import { renderedOf } from './sends.usecases.js';

/** A lease outlasts its push (timeoutMs) by this much: the storing of its messages and the settle. */
const LEASE_MARGIN_MS = 15_000;
export const RETRY_DELAYS_MS = [1e3, 5e3, 3e4, 12e4, 6e5, 18e5, 36e5] as const;
const RETRY_EVERY_MS = 36e5;
export const RETRY_FOR_MS = 24 * 36e5;
const SWEEP_MS = 2_000;
/** Pauses before a failed store call of a leased send is made again (whileLeased). */
const STORE_RETRY_MS = [200, 500, 1_000, 2_000] as const;
/** A store call is not begun again this close to its lease's end. */
const STORE_RETRY_MARGIN_MS = 3_000;
/**
 * Pushes at once on a node, by default. LINE answers a push in tens of ms, so 200 sends a second
 * need about 15 in flight; LINE's own limit is 2,000 push requests a second a channel.
 */
const CONCURRENCY = 32;
/** Free slots that make the worker lease again before all are free (each lease is a write). */
const REFILL_AT = 8;

export interface SendWorkerOptions {
  store: Pick<Store, 'hubs' | 'sends'>;
  secrets: SecretBox;
  log: FastifyBaseLogger;
  /** LINE_API_BASE_URL. */
  lineApiBaseUrl: string;
  /** A push LINE has not answered within this is tried again later (CHATLOG_SEND_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Pushes at once on this node. */
  concurrency?: number;
  clock?: () => number;
  sweepMs?: number;
  /** Told of each attempt's outcome (metrics). */
  onOutcome?: (outcome: SendSettlement['state']) => void;
}

export class SendWorker {
  private readonly clock: () => number;
  private readonly concurrency: number;
  private inFlight = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly pushes = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private soonTimer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(private readonly options: SendWorkerOptions) {
    this.clock = options.clock ?? Date.now;
    this.concurrency = options.concurrency ?? CONCURRENCY;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.kick();
  }

  /** Stops taking work and waits for the pushes under way (their outcomes are kept). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.soonTimer);
    await this.running;
    await Promise.all(this.pushes);
  }

  /** Look for work now (a send was accepted, or one ended). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'send worker pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.kick();
        } else this.sleep();
      });
  }

  /** A pass in a moment, for the slots freed since the last (unless one comes first). */
  private soon(): void {
    if (this.soonTimer || this.stopped) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.kick();
    }, 20).unref();
  }

  /** Until the next send is due, or the sweep (sends accepted by other nodes, leases that lapsed). */
  private sleep(): void {
    const sweep = this.options.sweepMs ?? SWEEP_MS;
    clearTimeout(this.timer);
    void this.options.store.sends
      .nextDue()
      .catch(() => undefined)
      .then((next) => {
        if (this.stopped || this.running) return;
        const wait = next === undefined ? sweep : Math.max(0, next - this.clock());
        clearTimeout(this.timer);
        // A due send that could not be leased (its contact's earlier one is under way) waits for
        // that one's end (a kick) or the sweep.
        this.timer = setTimeout(() => this.kick(), Math.min(sweep, wait === 0 ? sweep : wait)).unref();
      });
  }

  private async pass(): Promise<void> {
    const free = this.concurrency - this.inFlight;
    if (free <= 0 || this.stopped) return;
    const now = this.clock();
    // Nothing due: the lease finds nothing (one statement, as a look for what is due would be).
    const leaseMs = (this.options.timeoutMs ?? 30_000) + LEASE_MARGIN_MS;
    const leased = await this.options.store.sends.lease(now, now + leaseMs, free);
    for (const send of leased) {
      this.inFlight += 1;
      const push: Promise<void> = this.push(send)
        .catch((error: unknown) => this.options.log.warn({ err: error, send: send.id }, 'a send failed'))
        .finally(() => {
          this.inFlight -= 1;
          this.pushes.delete(push);
          // Its contact's next send may be due now: leased with others once a few slots are free.
          if (
            this.concurrency - this.inFlight >= Math.min(REFILL_AT, this.concurrency) ||
            this.inFlight === 0
          )
            this.kick();
          else this.soon();
        });
      this.pushes.add(push);
    }
  }

  private async push(send: LeasedSend): Promise<void> {
    const result = await this.attempt(send);
    // Sent: already stored with its messages (attempt).
    if (result === undefined) return this.options.onOutcome?.('sent');
    const stored = await this.whileLeased(send, () => this.options.store.sends.settle(result, this.clock()));
    if (stored) this.options.onOutcome?.(result.state);
  }

  /**
   * A store call of a leased send, tried again after a moment while the lease lasts: a database
   * busy for a few seconds (a pool with no free connection, a statement timeout) would otherwise
   * leave the send to wait for its lease to run out, and every later send of its friend with it.
   */
  private async whileLeased<T>(send: LeasedSend, call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const pause = STORE_RETRY_MS[Math.min(attempt, STORE_RETRY_MS.length - 1)] as number;
        if (this.stopped || this.clock() + pause + STORE_RETRY_MARGIN_MS >= send.leasedUntil) throw error;
        this.options.log.warn({ err: error, send: send.id }, 'storing a send failed, trying again');
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** LINE's answer to one push: an outcome to store, or undefined once sent and stored. */
  private async attempt(send: LeasedSend): Promise<SendSettlement | undefined> {
    const key = { id: send.id, leasedUntil: send.leasedUntil };
    const hub = await this.whileLeased(send, () => this.options.store.hubs.get(send.hubId));
    if (!hub?.lineChannelAccessTokenEncrypted)
      return this.retry(send, 'the hub has no LINE channel access token');
    const token = this.options.secrets.decrypt(hub.lineChannelAccessTokenEncrypted);
    const answer = await pushMessages(this.options.lineApiBaseUrl, token, {
      to: send.lineId,
      messages: send.messages,
      retryKey: send.retryKey,
      timeoutMs: this.options.timeoutMs,
    });
    if (answer.kind === 'refused')
      return { ...key, state: 'failed', attempts: send.attempts + 1, lastError: answer.reason };
    if (answer.kind === 'retry') return this.retry(send, answer.reason, answer.retryAfterMs);
    // The messages stored and the send marked sent in one transaction: a crash before it sends
    // nothing again (the retry key: LINE's 409 gives the ids) and stores nothing twice. A send gone
    // meanwhile (its contact erased) stores nothing.
    const now = this.clock();
    const operations: IngestOperation[] = send.messages.map((message, i) => {
      const id = answer.messageIds[i] as string;
      return {
        kind: 'message',
        lineId: send.lineId,
        sender: 'You',
        ...renderedOf(message, id),
        createdAt: now,
        sourceId: `line:${id}`,
        id,
        sourceKind: 'user',
        sourceChatId: null,
      };
    });
    const sent = { ...key, state: 'sent' as const, messageIds: answer.messageIds };
    await this.whileLeased(send, () => this.options.store.sends.complete(sent, send.hubId, operations, now));
    return undefined;
  }

  /** Another try later, or failed once RETRY_FOR_MS have passed since the send was accepted. */
  private retry(send: LeasedSend, reason: string, retryAfterMs?: number): SendSettlement {
    const now = this.clock();
    const attempts = send.attempts + 1;
    const key = { id: send.id, leasedUntil: send.leasedUntil };
    if (now - send.createdAt >= RETRY_FOR_MS) return { ...key, state: 'failed', attempts, lastError: reason };
    const step = retryAfterMs ?? RETRY_DELAYS_MS[attempts - 1] ?? RETRY_EVERY_MS;
    const jitter = retryAfterMs === undefined ? 0.8 + 0.4 * Math.random() : 1;
    return {
      ...key,
      state: 'pending',
      attempts,
      nextAttemptAt: now + Math.round(step * jitter),
      lastError: reason,
    };
  }
}
