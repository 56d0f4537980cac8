/**
 * Long-poll wake-ups across nodes through PostgreSQL's LISTEN/NOTIFY. A write transaction calls
 * `announceChanges` before it commits: PostgreSQL delivers the notification to every listening node
 * at commit, and never for a transaction that rolls back, so a reader is woken only for data it can
 * read. Each node keeps one connection listening; when it is lost, every waiter is woken (it reads
 * again, and waits again if nothing came) and the connection is made again, with backoff.
 */
import pg from 'pg';
import type { Transaction } from '../sql/executor.js';
import { type ChangeListener, LocalWakeups, type Wakeups } from '../sql/wakeups.js';
import type { Waiter } from '../store.js';
import { withLiterals } from './postgres.sql.js';

/** One channel for every schema; the payload names the schema, then the hub. */
const CHANNEL = 'chatlog_changes';
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;

const NOTIFY_SQL = `SELECT pg_notify('${CHANNEL}', ?) AS sent`;
const payloadOf = (schema: string | undefined, hubId: string) => `${schema ?? 'public'}\n${hubId}`;

/** Tells every node, at commit, that these hubs changed (call inside the write transaction). */
export async function announceChanges(tx: Transaction, schema: string | undefined, hubIds: Iterable<string>) {
  for (const hubId of hubIds) await tx.get(NOTIFY_SQL, [payloadOf(schema, hubId)]);
}

/** announceChanges' statements with their values written in, to send with others in one round trip. */
export const announcementStatements = (schema: string | undefined, hubIds: Iterable<string>): string[] =>
  [...hubIds].map((hubId) => withLiterals(NOTIFY_SQL, [payloadOf(schema, hubId)]));

export interface PostgresWakeupsOptions {
  connectionString: string;
  schema?: string | undefined;
  /** Told when the listening connection fails (it is made again on its own). */
  onError?: (error: Error) => void;
}

export class PostgresWakeups implements Wakeups {
  private readonly local = new LocalWakeups();
  private readonly prefix: string;
  private client: pg.Client | undefined;
  private reconnectMs = RECONNECT_FIRST_MS;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private listening: Promise<void> | undefined;

  constructor(private readonly options: PostgresWakeupsOptions) {
    this.prefix = `${options.schema ?? 'public'}\n`;
  }

  /** Starts listening; resolves once this node hears every notification from now on. */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.listening ??= this.connect();
    return this.listening;
  }

  subscribe(hubId: string): Waiter {
    void this.start();
    return this.local.subscribe(hubId);
  }

  listen(listener: ChangeListener): () => void {
    void this.start();
    return this.local.listen(listener);
  }

  wake(hubIds: Iterable<string>): void {
    this.local.wake(hubIds);
  }

  /** Readers waiting on this node. */
  get waiting(): number {
    return this.local.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.local.wakeAll();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: 'chatlog listen',
    });
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      if (message.channel === CHANNEL && payload.startsWith(this.prefix)) {
        this.local.wake([payload.slice(this.prefix.length)]);
      }
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the listening connection ended')));
    // The connection of this node now: events of an older one are ignored.
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.closed || this.client !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    this.reconnectMs = RECONNECT_FIRST_MS;
    // Whatever committed while this node was not listening: every waiter looks again.
    this.local.wakeAll();
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.options.onError?.(error);
    client.end().catch(() => undefined);
    this.local.wakeAll();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.listening = this.connect();
    }, this.reconnectMs);
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
  }
}
