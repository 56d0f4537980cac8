/**
 * The outbox worker of one node (CONTRACT §10): turns each hub's new changes into deliveries, and
 * attempts the deliveries that are due, each under a lease so no other node attempts it meanwhile.
 *
 * - Dispatch runs when a change commits (the store's onChange: this node's commits, and every
 *   node's on PostgreSQL) and on a sweep every few seconds (changes another process committed to a
 *   SQLite file, notifications lost while a connection was down).
 * - Each endpoint with due deliveries has a loop of its own, with connections kept while it runs:
 *   lease a batch, send it (up to 64 at once), store the outcomes of those that ended while leasing
 *   the next, again until nothing is due; then sleep until the next retry is due or new work comes.
 *   A slow or failing endpoint holds only its own loop: never another endpoint's deliveries, and
 *   never the write path (webhooks and ingest do not wait for it).
 * - While the process is busy with clients, a backlog (deliveries due for over FRESH_MS) goes a
 *   couple at a time; new deliveries still go at once.
 * - A change deleted before its delivery (an unsend, an erasure) is not sent: its delivery is
 *   `skipped`. A retry of one change never holds back the next: each has its own schedule.
 */

import type http from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { formatTimestamp } from '../../lib/calendar.js';
import type { SecretBox } from '../../lib/secrets.js';
import type {
  Change,
  DeliverySettlement,
  LeasedDelivery,
  Store,
  WebhookEndpoint,
} from '../../store/store.js';
import { serializeChange } from '../changes/changes.serializer.js';
import { type AttemptResult, attemptDelivery, endpointAgent, retryDelayMs } from './webhooks.delivery.js';
import type { Resolve, UrlPolicy } from './webhooks.url.js';

/** Attempts one endpoint's loop makes at once. */
const IN_FLIGHT_PER_ENDPOINT = 64;
/** Free slots that make the loop lease again (and store the outcomes so far) before all are free. */
const REFILL_AT = 32;
/**
 * While the process is busy with clients: deliveries that came due within FRESH_MS go at once, and
 * a backlog IN_FLIGHT_WHEN_BUSY at a time every BUSY_PAUSE_MS. A loop that keeps up with a hub's
 * webhooks leases each delivery within a few ms of its change. At 1 s, the 20,000 deliveries of a
 * bulk ingest that ended just before 32 senders began still went at full speed for that second:
 * Q5 with them was 0.71-1.00 of Q5 alone on PostgreSQL, at 250 ms 0.82-1.01 (bench/feed.ts --parts 3).
 */
const FRESH_MS = 250;
const IN_FLIGHT_WHEN_BUSY = 2;
const BUSY_PAUSE_MS = 50;
/** An attempt's outcome is stored this soon after it ends, at most (with the outcomes of others). */
const SETTLE_WITHIN_MS = 250;
/** Changes turned into deliveries per dispatch transaction. */
const DISPATCH_MAX = 1000;
const SWEEP_MS = 2_000;
/**
 * A lease outlasts its attempt by this much (the time to store the outcome): a delivery is leased
 * only when it can be sent at once, so no other node takes one still being sent.
 */
const LEASE_MARGIN_MS = 10_000;

export interface WebhookWorkerOptions {
  store: Pick<Store, 'changes' | 'webhooks'>;
  secrets: SecretBox;
  policy: UrlPolicy;
  log: FastifyBaseLogger;
  timeoutMs: number;
  clock?: () => number;
  resolve?: Resolve;
  sweepMs?: number;
  /**
   * True while the process serves many requests: a backlog of deliveries then keeps few attempts
   * going, so webhook ingest and reads keep the process (it catches up when it is quieter).
   */
  busy?: () => boolean;
  /** Deliveries due for less than this long are new, not a backlog (FRESH_MS). */
  freshMs?: number;
}

export class WebhookWorker {
  private readonly clock: () => number;
  private readonly loops = new Map<string, Promise<void>>();
  /** Endpoints to look at again once their running loop ends. */
  private readonly again = new Set<string>();
  /** What wakes a running loop that waits for its attempts: a new delivery is leased at once. */
  private readonly wakers = new Map<string, () => void>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /**
   * Each endpoint's kept connections, across runs of its loop (at 200 changes a second a loop
   * often ends between two of them); idle connections close after a second (endpointAgent).
   */
  private readonly agents = new Map<string, { url: string; agent: http.Agent }>();
  private readonly dirtyHubs = new Set<string>();
  private dirtyAll = true;
  private dispatching: Promise<void> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private stopped = true;

  constructor(private readonly options: WebhookWorkerOptions) {
    this.clock = options.clock ?? Date.now;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unlisten = this.options.store.changes.onChange((hubId) => this.changed(hubId));
    this.sweep();
  }

  /** Stops taking work; resolves once the attempts in flight are settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    clearTimeout(this.sweepTimer);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.dispatching;
    await Promise.all(this.loops.values());
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  /** The endpoint's agent, made anew when its URL is not the one it was made for. */
  private agentOf(endpoint: WebhookEndpoint): http.Agent {
    const kept = this.agents.get(endpoint.id);
    if (kept?.url === endpoint.url) return kept.agent;
    kept?.agent.destroy();
    const agent = endpointAgent(endpoint.url, IN_FLIGHT_PER_ENDPOINT);
    this.agents.set(endpoint.id, { url: endpoint.url, agent });
    return agent;
  }

  private dropAgent(endpointId: string): void {
    this.agents.get(endpointId)?.agent.destroy();
    this.agents.delete(endpointId);
  }

  /** Look at this endpoint now (it was just added, or replayed). */
  kick(endpointId: string): void {
    if (this.stopped) return;
    if (this.loops.has(endpointId)) {
      this.again.add(endpointId);
      this.wakers.get(endpointId)?.();
      return;
    }
    clearTimeout(this.timers.get(endpointId));
    this.timers.delete(endpointId);
    const loop = this.runEndpoint(endpointId)
      .catch((error: unknown) => this.options.log.error({ err: error }, 'webhook delivery loop failed'))
      .finally(() => {
        this.loops.delete(endpointId);
        if (this.again.delete(endpointId)) this.kick(endpointId);
      });
    this.loops.set(endpointId, loop);
  }

  private changed(hubId: string | undefined): void {
    if (this.stopped) return;
    if (hubId === undefined) this.dirtyAll = true;
    else this.dirtyHubs.add(hubId);
    this.scheduleDispatch();
  }

  /** One dispatch at a time; changes that come meanwhile are taken by the next (coalesced). */
  private scheduleDispatch(): void {
    this.dispatching ??= new Promise<void>((next) => setImmediate(next))
      .then(() => this.dispatchDirty())
      .catch((error: unknown) => this.options.log.error({ err: error }, 'webhook dispatch failed'))
      .finally(() => {
        this.dispatching = undefined;
        if (!this.stopped && (this.dirtyAll || this.dirtyHubs.size > 0)) this.scheduleDispatch();
      });
  }

  private async dispatchDirty(): Promise<void> {
    const all = this.dirtyAll;
    const hubs = [...this.dirtyHubs];
    this.dirtyAll = false;
    this.dirtyHubs.clear();
    const { store } = this.options;
    const endpoints = all
      ? await store.webhooks.live()
      : (await Promise.all(hubs.map((hubId) => store.webhooks.live(hubId)))).flat();
    for (const endpoint of endpoints) {
      if (this.stopped) return;
      let moved = 0;
      do {
        moved = await store.webhooks.dispatch(endpoint, this.clock(), DISPATCH_MAX);
      } while (moved >= DISPATCH_MAX && !this.stopped);
      this.kick(endpoint.id);
    }
  }

  private sweep(): void {
    if (this.stopped) return;
    this.dirtyAll = true;
    this.changed(undefined);
    void this.options.store.webhooks
      .due(this.clock())
      .then((ids) => {
        for (const id of ids) this.kick(id);
      })
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'webhook sweep failed'))
      .finally(() => {
        if (this.stopped) return;
        // Never what keeps a process alive: the server is.
        this.sweepTimer = setTimeout(() => this.sweep(), this.options.sweepMs ?? SWEEP_MS).unref();
      });
  }

  /**
   * One endpoint's loop: keeps up to IN_FLIGHT_PER_ENDPOINT attempts going, leasing more as slots
   * free up (each leased delivery is sent at once, so one attempt's timeout bounds how long it is
   * held), and stores the outcomes that came in each time it leases again. Ends when nothing is due
   * and nothing is in flight, or at a 410.
   */
  private async runEndpoint(endpointId: string): Promise<void> {
    const { store } = this.options;
    const endpoint = await store.webhooks.get(endpointId);
    if (!endpoint || endpoint.disabledAt !== null) {
      this.dropAgent(endpointId);
      return;
    }
    const secret = this.options.secrets.decrypt(endpoint.secretEncrypted);
    // Connections kept between runs (each attempt still checks the addresses first).
    const agent = this.agentOf(endpoint);
    const leaseMs = this.options.timeoutMs + LEASE_MARGIN_MS;
    const settled: DeliverySettlement[] = [];
    let inFlight = 0;
    let gone = false;
    // What the loop waits for: an attempt's end, or a kick (a new delivery) when there is room to
    // lease it (else the attempts' ends make room first). One that comes while the loop is busy
    // elsewhere (storing, leasing) is kept for its next wait: never lost.
    let signalled = false;
    let backlogLeasedAt = 0;
    let wake: (() => void) | undefined;
    const signal = () => {
      signalled = true;
      wake?.();
    };
    this.wakers.set(endpointId, () => {
      if (IN_FLIGHT_PER_ENDPOINT - inFlight >= REFILL_AT) signal();
    });
    /** Until an attempt ends, a kick comes, or `ms` pass (at once if one came since the last wait). */
    const wait = async (ms: number) => {
      if (!signalled) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms).unref();
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      signalled = false;
    };
    /** Stores the outcomes so far; never throws (what it could not store is kept for the next). */
    const flush = async () => {
      if (settled.length === 0) return;
      const batch = settled.splice(0);
      try {
        await store.webhooks.settle(batch, this.clock());
      } catch (error) {
        settled.unshift(...batch);
        this.options.log.warn(
          { err: error, webhook: endpointId },
          'webhook delivery outcomes not stored yet',
        );
      }
    };
    const freshMs = this.options.freshMs ?? FRESH_MS;
    try {
      while (!this.stopped && !gone) {
        const free = IN_FLIGHT_PER_ENDPOINT - inFlight;
        if (inFlight === 0 || free >= REFILL_AT) {
          const now = this.clock();
          // While the process is busy with clients, new deliveries still go as they come, but a
          // backlog (deliveries due for over FRESH_MS: a catch-up, a replay) goes only a few at a
          // time every BUSY_PAUSE_MS, so that webhook ingest and reads keep the process.
          const busy = this.options.busy?.() ?? false;
          const backlogTurn = busy && now - backlogLeasedAt >= BUSY_PAUSE_MS;
          if (backlogTurn) backlogLeasedAt = now;
          const backlogMax = backlogTurn ? IN_FLIGHT_WHEN_BUSY : 0;
          const [, ...leases] = await Promise.allSettled([
            flush(),
            store.webhooks.lease(endpointId, now, now + leaseMs, free - backlogMax, busy ? now - freshMs : 0),
            backlogMax > 0 ? store.webhooks.lease(endpointId, now, now + leaseMs, backlogMax) : [],
          ]);
          // What one lease took is attempted even if the other failed (then the loop ends, below).
          const leased = leases.flatMap((lease) => (lease.status === 'fulfilled' ? lease.value : []));
          const failed = leases.find((lease) => lease.status === 'rejected');
          if (leased.length === 0 && inFlight === 0) {
            if (failed) throw failed.reason;
            if (!busy || backlogTurn) break;
            // Nothing new: the backlog's next turn (or the end, if it has none).
            await wait(BUSY_PAUSE_MS - (now - backlogLeasedAt));
            continue;
          }
          const changes = await this.changesOf(endpoint.hubId, leased);
          for (const delivery of leased) {
            inFlight += 1;
            void this.attempt(endpoint, secret, agent, delivery, changes.get(delivery.seq)).then((result) => {
              inFlight -= 1;
              if (result.lastStatus === 410 && result.state === 'failed') gone = true;
              settled.push(result);
              signal();
            });
          }
          if (failed) throw failed.reason;
        }
        // Until an attempt ends, a new delivery comes (kick), or a moment passes: an outcome is
        // stored within about that moment even while the other attempts go on (long before its
        // lease ends).
        if (inFlight > 0) await wait(SETTLE_WITHIN_MS);
        if (inFlight > 0 && IN_FLIGHT_PER_ENDPOINT - inFlight < REFILL_AT) await flush();
      }
    } finally {
      // Even when the loop failed: the attempts under way end (within the timeout) and their
      // outcomes are stored.
      while (inFlight > 0) await wait(SETTLE_WITHIN_MS);
      this.wakers.delete(endpointId);
      await flush();
    }
    if (gone) {
      this.dropAgent(endpointId);
      await store.webhooks.disable(endpoint.id, 'the endpoint answered 410 Gone', this.clock());
      this.options.log.warn({ webhook: endpoint.id }, 'webhook endpoint answered 410 Gone: disabled');
      return;
    }
    if (!this.stopped) this.sleepUntilDue(endpointId);
  }

  private sleepUntilDue(endpointId: string): void {
    void this.options.store.webhooks
      .nextDue(endpointId)
      .catch((error: unknown) => {
        // The sweep looks again in a few seconds.
        this.options.log.warn({ err: error, webhook: endpointId }, 'webhook next attempt not found');
        return undefined;
      })
      .then((next) => {
        if (next === undefined || this.stopped) return;
        // Later than the sweep: the sweep finds it.
        const delay = Math.max(0, next - this.clock());
        if (delay > (this.options.sweepMs ?? SWEEP_MS)) return;
        clearTimeout(this.timers.get(endpointId));
        this.timers.set(
          endpointId,
          setTimeout(() => {
            this.timers.delete(endpointId);
            this.kick(endpointId);
          }, delay).unref(),
        );
      });
  }

  private async changesOf(hubId: string, leased: readonly LeasedDelivery[]): Promise<Map<number, Change>> {
    const changes = new Map<number, Change>();
    if (leased.length === 0) return changes;
    for (const change of await this.options.store.changes.at(
      hubId,
      leased.map((delivery) => delivery.seq),
    )) {
      changes.set(change.seq, change);
    }
    return changes;
  }

  /** One attempt of one delivery; never throws. A change deleted first is not sent: skipped. */
  private async attempt(
    endpoint: WebhookEndpoint,
    secret: string,
    agent: http.Agent,
    delivery: LeasedDelivery,
    change: Change | undefined,
  ): Promise<DeliverySettlement> {
    if (!change)
      return settlement(delivery, 'skipped', delivery.attempts, 0, null, 'the change was deleted first');
    const body = `{"type":"${change.type}","timestamp":"${formatTimestamp(change.at)}","data":${serializeChange(change)}}`;
    const result = await attemptDelivery(
      { url: endpoint.url, secret },
      { id: `${endpoint.hubId}:${change.seq}`, body },
      {
        policy: this.options.policy,
        timeoutMs: this.options.timeoutMs,
        resolve: this.options.resolve,
        agent,
      },
    );
    return this.afterAttempt(delivery, result);
  }

  private afterAttempt(delivery: LeasedDelivery, result: AttemptResult): DeliverySettlement {
    const attempts = delivery.attempts + 1;
    const status = result.status ?? null;
    if (result.outcome === 'delivered') return settlement(delivery, 'delivered', attempts, 0, status, null);
    if (result.outcome === 'gone')
      return settlement(delivery, 'failed', attempts, 0, 410, 'answered 410 Gone');
    const delay = retryDelayMs(attempts);
    return delay === undefined
      ? settlement(delivery, 'failed', attempts, 0, status, result.reason)
      : settlement(delivery, 'pending', attempts, this.clock() + delay, status, result.reason);
  }
}

function settlement(
  delivery: LeasedDelivery,
  state: DeliverySettlement['state'],
  attempts: number,
  nextAttemptAt: number,
  lastStatus: number | null,
  lastError: string | null,
): DeliverySettlement {
  return {
    endpointId: delivery.endpointId,
    seq: delivery.seq,
    leasedUntil: delivery.leasedUntil,
    state,
    attempts,
    nextAttemptAt,
    lastStatus,
    lastError,
  };
}
