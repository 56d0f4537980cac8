/**
 * Publishes every message of a connected hub into its HubSpot inbox (CONTRACT §18), through
 * chatlog's custom channel: friends' messages as INCOMING, the account's as OUTGOING, on the
 * friend's thread (`integrationThreadId` = lineId) and under the message's own id
 * (`integrationIdempotencyId`).
 *
 * - Durable and once: a hub's connection keeps its place in the hub's feed, moved after each
 *   message HubSpot took; a node holds a hub under a lease, so a crash publishes again only the
 *   message whose answer it did not keep.
 * - In order: one node publishes a hub at a time, in feed order, one message after the other.
 * - Erased or deleted messages are not in the feed any more, so they are never published after.
 * - Tokens: refreshed when less than REFRESH_BEFORE_MS is left of them, and once more on a 401.
 * - 429 waits as Retry-After says, else backs off like 5xx and network errors; a message HubSpot
 *   refuses for good (400) is passed over with HubSpot's words kept as the connection's last error.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SecretBox } from '../../lib/secrets.js';
import type { Change, LeasedHubspotConnection, Store } from '../../store/store.js';
import {
  type DeliveryIdentifier,
  type HubspotAnswer,
  type OAuthClient,
  type PublishedMessage,
  publishMessage,
  refreshTokens,
  setMessageStatus,
} from './hubspot.api.js';

/** A token with less than this left is refreshed before the next call. */
export const REFRESH_BEFORE_MS = 5 * 60_000;
const RETRY_DELAYS_MS = [1e3, 5e3, 3e4, 12e4, 6e5, 18e5] as const;
const RETRY_EVERY_MS = 36e5;
/**
 * How long a node holds a hub, renewed with each message published; the hub of a node that died
 * is taken by another (or by the node started again) after this.
 */
const LEASE_MS = 20_000;
/** No new message is begun this close to the lease's end (HubSpot's call times out before). */
const LEASE_MARGIN_MS = 12_000;
const PAGE = 200;
const SWEEP_MS = 2_000;
/** Hubs published at once on a node (each one message at a time). */
const CONCURRENCY = 8;

/** The account's side of every message: the hub's own identifier on the channel. */
export function accountIdentifier(hubId: string): DeliveryIdentifier {
  return { type: 'CHANNEL_SPECIFIC_OPAQUE_ID', value: `chatlog-hub-${hubId}` };
}

type MessageCreated = Extract<Change, { type: 'message.created' }>;

/** The publish body of one message of the feed (§18's mapping). */
export function publishedMessage(
  channelAccountId: string,
  hubId: string,
  change: MessageCreated,
): PublishedMessage {
  const friend = {
    deliveryIdentifier: { type: 'CHANNEL_SPECIFIC_OPAQUE_ID', value: change.lineId } as DeliveryIdentifier,
    ...(change.name && { name: change.name }),
  };
  const account = { deliveryIdentifier: accountIdentifier(hubId) };
  const outgoing = change.message.sender === 'You';
  return {
    channelAccountId,
    messageDirection: outgoing ? 'OUTGOING' : 'INCOMING',
    senders: [outgoing ? account : friend],
    recipients: [outgoing ? friend : account],
    text: change.message.msg,
    timestamp: new Date(change.message.createdAt).toISOString(),
    attachments: [],
    integrationThreadId: change.lineId,
    integrationIdempotencyId: change.id,
    ...(/^[1-9]\d{0,17}$/.test(change.vid) && { associateWithContactId: Number(change.vid) }),
  };
}

export interface HubspotPublisherOptions {
  store: Pick<Store, 'hubspot' | 'changes'>;
  secrets: SecretBox;
  log: FastifyBaseLogger;
  /** HUBSPOT_API_BASE_URL. */
  apiBaseUrl: string;
  /** The app's OAuth client (token refresh). */
  client: OAuthClient;
  clock?: () => number;
  sweepMs?: number;
  /** Told of each message published (metrics). */
  onPublished?: () => void;
}

/** Why a hub stopped before its feed's end: to store with the connection. */
interface Stop {
  error: string;
  retryAfterMs?: number | undefined;
}

export class HubspotPublisher {
  private readonly clock: () => number;
  private readonly busy = new Set<string>();
  /** The hubs connected now, as the last pass read them (which changes kick a pass). */
  private connected = new Set<string>();
  private readonly publishing = new Set<Promise<void>>();
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;

  constructor(private readonly options: HubspotPublisherOptions) {
    this.clock = options.clock ?? Date.now;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Only a change of a connected hub (or a lost touch with the other nodes) is worth a pass: a
    // pass leases, a write, and every webhook of every hub commits a change.
    this.unlisten = this.options.store.changes.onChange((hubId) => {
      if (hubId === undefined || this.connected.has(hubId)) this.kick();
    });
    this.kick();
  }

  /** Stops taking hubs and waits for the messages under way (their marks are kept). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    clearTimeout(this.timer);
    await this.running;
    await Promise.all(this.publishing);
  }

  /** Look for hubs to publish now (a change committed, or a hub let go). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'HubSpot publisher pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.kick();
        } else {
          this.timer = setTimeout(() => this.kick(), this.options.sweepMs ?? SWEEP_MS).unref();
        }
      });
  }

  private async pass(): Promise<void> {
    const free = CONCURRENCY - this.busy.size;
    if (free <= 0) return;
    // A read first: with no hub connected (most stores), a pass writes nothing.
    this.connected = new Set(await this.options.store.hubspot.connectedHubs());
    if (this.connected.size === 0) return;
    const now = this.clock();
    const leased = await this.options.store.hubspot.lease(now, now + LEASE_MS, free);
    for (const connection of leased) {
      this.busy.add(connection.hubId);
      const run: Promise<void> = this.publishHub(connection)
        .catch((error: unknown) =>
          this.options.log.warn({ err: error, hubId: connection.hubId }, 'HubSpot publishing failed'),
        )
        .finally(() => {
          this.busy.delete(connection.hubId);
          this.publishing.delete(run);
          this.kick();
        });
      this.publishing.add(run);
    }
  }

  private repliesIn(hubId: string, page: readonly Change[]): Promise<Set<string>> {
    return repliesAmong(this.options.store, hubId, page);
  }

  /**
   * HubSpot told how each agent's reply of the hub ended (§18): SENT, or FAILED with LINE's words.
   * A reply HubSpot no longer knows (another 4xx) is told no more; 429, 5xx: the hub waits.
   */
  private async reportReplies(hubId: string, channelId: string, tokens: Tokens): Promise<Stop | undefined> {
    const { store } = this.options;
    for (const reply of await store.hubspot.unreported(hubId, PAGE)) {
      const status =
        reply.state === 'sent'
          ? ({ statusType: 'SENT' } as const)
          : ({ statusType: 'FAILED', errorMessage: reply.lastError ?? 'LINE refused it' } as const);
      const answer = await tokens.call((token) =>
        setMessageStatus(this.options.apiBaseUrl, token, channelId, reply.hubspotMessageId, status),
      );
      if (answer.kind === 'retry' || answer.kind === 'unauthorized') return { error: answer.reason };
      if (answer.kind === 'refused')
        this.options.log.warn({ hubId, send: reply.sendId }, `HubSpot's status of a reply: ${answer.reason}`);
      await store.hubspot.reported(reply.sendId);
    }
    return undefined;
  }

  /** The hub's messages after its mark, in order, until its feed's end or the lease's. */
  private async publishHub(connection: LeasedHubspotConnection): Promise<void> {
    const { store } = this.options;
    const { hubId } = connection;
    const lease = { until: connection.leasedUntil };
    const tokens = new Tokens(this.options, connection);
    const channelId = await store.hubspot.channelId();
    let outcome: Stop | 'lost' | undefined;
    if (channelId === undefined) {
      outcome = {
        error: 'chatlog has no HubSpot custom channel yet: run `chatlog hubspot channel register`',
      };
    } else {
      outcome = await this.reportReplies(hubId, channelId, tokens);
      const run = { connection, channelId, tokens, lease };
      // Messages stored since the connection first; then, with the lease's time left, the backfill.
      if (!outcome) outcome = await this.goThrough(run, 'live');
      const backfill = connection.backfill;
      if (!outcome && backfill && !backfill.done) outcome = await this.goThrough(run, 'backfill');
    }
    if (outcome === 'lost') return;
    if (!outcome) return store.hubspot.release(hubId, lease.until);
    const attempts = connection.attempts + 1;
    const now = this.clock();
    const step = outcome.retryAfterMs ?? RETRY_DELAYS_MS[attempts - 1] ?? RETRY_EVERY_MS;
    const jitter = outcome.retryAfterMs === undefined ? 0.8 + 0.4 * Math.random() : 1;
    this.options.log.warn({ hubId, attempts }, `HubSpot publishing paused: ${outcome.error}`);
    await store.hubspot.release(hubId, lease.until, {
      attempts,
      nextAttemptAt: now + Math.round(step * jitter),
      error: outcome.error,
      at: now,
    });
  }

  /**
   * Publishes the hub's feed in order from a mark: `live`, what was stored since the connection (to
   * the feed's end); `backfill`, what was stored before it and created in the backfill's days (to
   * the connection's seq). The mark moves after each message HubSpot took, the lease with it.
   * Resolves to why it stopped early ('lost': the lease passed to another node), or undefined.
   */
  private async goThrough(
    run: {
      connection: LeasedHubspotConnection;
      channelId: string;
      tokens: Tokens;
      lease: { until: number };
    },
    kind: 'live' | 'backfill',
  ): Promise<Stop | 'lost' | undefined> {
    const { store } = this.options;
    const { connection, channelId, tokens, lease } = run;
    const { hubId } = connection;
    const backfill = connection.backfill;
    const end = kind === 'live' ? Number.POSITIVE_INFINITY : connection.connectedSeq;
    const inDays = (createdAt: number) =>
      kind === 'live' ||
      (backfill !== undefined &&
        createdAt >= backfill.from &&
        (backfill.to === undefined || createdAt < backfill.to));
    const advance = async (seq: number, messages: number, skipped?: { error: string; at: number }) => {
      const renewedUntil = this.clock() + LEASE_MS;
      const mark = { hubId, leasedUntil: lease.until, renewedUntil, seq, messages };
      const moved =
        kind === 'live'
          ? await store.hubspot.advance({ ...mark, skipped })
          : await store.hubspot.advanceBackfill(mark);
      if (moved) lease.until = renewedUntil;
      return moved;
    };
    let mark = kind === 'live' ? connection.publishedThrough : (backfill?.through ?? end);
    while (!this.stopped && this.clock() < lease.until - LEASE_MARGIN_MS && mark < end) {
      const page = (await store.changes.page(hubId, mark, PAGE)).filter((change) => change.seq <= end);
      if (page.length === 0) {
        // The backfill's part of the feed is gone through (what is left of it was deleted).
        if (kind === 'backfill' && !(await advance(end, 0))) return 'lost';
        break;
      }
      const replies = await this.repliesIn(hubId, page);
      let passed = mark;
      for (const change of page) {
        if (this.stopped || this.clock() >= lease.until - LEASE_MARGIN_MS) break;
        // An agent's reply came from HubSpot: it is there already.
        if (
          change.type !== 'message.created' ||
          replies.has(change.id) ||
          !inDays(change.message.createdAt)
        ) {
          passed = change.seq;
          continue;
        }
        const body = publishedMessage(connection.channelAccountId, hubId, change);
        const answer = await tokens.call((token) =>
          publishMessage(this.options.apiBaseUrl, token, channelId, body),
        );
        if (answer.kind !== 'ok' && !(answer.kind === 'refused' && answer.status === 400)) {
          if (passed > mark && !(await advance(passed, 0))) return 'lost';
          return {
            error: answer.reason,
            retryAfterMs: answer.kind === 'retry' ? answer.retryAfterMs : undefined,
          };
        }
        const skipped =
          answer.kind === 'refused'
            ? { error: `message ${change.id}: ${answer.reason}`, at: this.clock() }
            : undefined;
        if (skipped) this.options.log.warn({ hubId, message: change.id }, skipped.error);
        if (!(await advance(change.seq, skipped ? 0 : 1, skipped))) return 'lost';
        if (!skipped) this.options.onPublished?.();
        mark = passed = change.seq;
      }
      // Changes that are not messages to publish, after the last one published.
      if (passed > mark) {
        if (!(await advance(passed, 0))) return 'lost';
        mark = passed;
      }
    }
    return undefined;
  }
}

/** Ids of the agents' replies (sent from HubSpot) among a page's messages from the account. */
async function repliesAmong(
  store: Pick<Store, 'hubspot'>,
  hubId: string,
  page: readonly Change[],
): Promise<Set<string>> {
  let since = Number.POSITIVE_INFINITY;
  for (const change of page) {
    if (change.type === 'message.created' && change.message.sender === 'You')
      since = Math.min(since, change.message.createdAt);
  }
  // A reply's messages are stored with the time its send ended (the send's own last change).
  return since === Number.POSITIVE_INFINITY ? new Set() : store.hubspot.replies(hubId, since - 1_000);
}

/**
 * A connection's tokens while its hub is published: refreshed before they run out, and once more
 * after a 401; each new pair kept at once (HubSpot may not take the old refresh token again).
 */
class Tokens {
  private access: string;
  private refresh: string;
  private expiresAt: number;
  private refreshedOn401 = false;

  constructor(
    private readonly options: HubspotPublisherOptions & { store: Pick<Store, 'hubspot'> },
    private readonly connection: LeasedHubspotConnection,
  ) {
    this.access = options.secrets.decrypt(connection.accessTokenEncrypted);
    this.refresh = options.secrets.decrypt(connection.refreshTokenEncrypted);
    this.expiresAt = connection.tokenExpiresAt;
  }

  async call<T>(request: (accessToken: string) => Promise<HubspotAnswer<T>>): Promise<HubspotAnswer<T>> {
    const clock = this.options.clock ?? Date.now;
    if (this.expiresAt - clock() < REFRESH_BEFORE_MS) {
      const renewed = await this.renew();
      if (renewed) return renewed;
    }
    const answer = await request(this.access);
    if (answer.kind !== 'unauthorized' || this.refreshedOn401) return answer;
    this.refreshedOn401 = true;
    const renewed = await this.renew();
    return renewed ?? request(this.access);
  }

  /** New tokens, kept; or why there are none (as an answer the publisher stops on). */
  private async renew(): Promise<HubspotAnswer<never> | undefined> {
    const clock = this.options.clock ?? Date.now;
    const answer = await refreshTokens(this.options.apiBaseUrl, this.options.client, this.refresh);
    if (answer.kind !== 'ok') {
      return answer.kind === 'retry'
        ? answer
        : { kind: 'retry', reason: `the HubSpot token could not be refreshed: ${answer.reason}` };
    }
    const { secrets } = this.options;
    this.access = answer.value.accessToken;
    this.refresh = answer.value.refreshToken;
    this.expiresAt = clock() + answer.value.expiresIn * 1000;
    await this.options.store.hubspot.setTokens(this.connection.hubId, {
      accessTokenEncrypted: secrets.encrypt(this.access),
      refreshTokenEncrypted: secrets.encrypt(this.refresh),
      tokenExpiresAt: this.expiresAt,
    });
    return undefined;
  }
}
