/**
 * The audit (CONTRACT §13) off the request path: each authorised API request becomes a record when
 * its answer is done (app.ts's onResponse hook), kept in memory and written to the store in one
 * transaction a second (or at 500), so recording adds no store round trip to any request. The query
 * is kept without `apikey`; a key is never recorded, only its id. A store that cannot take them is
 * told in a log line and the records wait (at most 20,000, then the oldest are dropped and counted);
 * the records left are written when the server stops. And once a day, records older than
 * CHATLOG_AUDIT_KEEP_DAYS are deleted.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { readableQuery } from '../../lib/http.js';
import type { AuditRecord, Store } from '../../store/store.js';

const FLUSH_MS = 1000;
const FLUSH_AT = 500;
const MAX_WAITING = 20_000;
const PRUNE_MS = 24 * 3_600_000;
const QUERY_CHARS = 2000;

/**
 * The query string as the audit keeps it: without `apikey` (every spelling of it), readable (`q=予約`,
 * lib/http.ts readableQuery), bounded (never cut inside a %XX or a character).
 */
export function auditedQuery(rawUrl: string): string {
  const at = rawUrl.indexOf('?');
  if (at === -1) return '';
  const params = new URLSearchParams(rawUrl.slice(at + 1));
  params.delete('apikey');
  const query = readableQuery(params.toString());
  if (query.length <= QUERY_CHARS) return query;
  let cut = QUERY_CHARS;
  if (/[\uDC00-\uDFFF]/.test(query[cut] ?? '')) cut -= 1;
  const percent = query.lastIndexOf('%', cut - 1);
  if (percent > cut - 3) cut = percent;
  return query.slice(0, cut);
}

export class AuditRecorder {
  private waiting: AuditRecord[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pruner: NodeJS.Timeout | undefined;
  private firstPrune: NodeJS.Timeout | undefined;
  private dropped = 0;

  constructor(
    private readonly deps: {
      store: Pick<Store, 'audit'>;
      log: FastifyBaseLogger;
      clock: () => number;
      keepDays: number;
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS).unref();
    const prune = () =>
      this.deps.store.audit
        .prune(this.deps.clock() - this.deps.keepDays * 86_400_000)
        .then((n) => {
          if (n > 0) this.deps.log.info({ removed: n, keepDays: this.deps.keepDays }, 'audit records pruned');
        })
        .catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not prune the audit log'));
    this.pruner = setInterval(prune, PRUNE_MS).unref();
    this.firstPrune = setTimeout(prune, 5000).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.pruner);
    clearTimeout(this.firstPrune);
    await this.flush();
  }

  /** The onResponse hook: a record of the request when its key check passed. */
  onResponse(request: FastifyRequest, reply: FastifyReply): void {
    const slot = request.audit;
    if (!slot?.keyId || !slot.hubId) return;
    const written = request.raw.socket?.bytesWritten;
    this.record({
      at: this.deps.clock(),
      hubId: slot.hubId,
      keyId: slot.keyId,
      endpoint: `${request.method} ${request.routeOptions.url ?? ''}`,
      query: auditedQuery(request.raw.url ?? ''),
      status: reply.statusCode,
      messages: slot.messages ?? null,
      bytes: written === undefined ? null : written - slot.bytesAtStart,
      client: request.ip,
    });
  }

  record(entry: AuditRecord): void {
    if (this.waiting.length >= MAX_WAITING) {
      this.waiting.shift();
      this.dropped += 1;
    }
    this.waiting.push(entry);
    if (this.waiting.length >= FLUSH_AT) void this.flush();
  }

  /** Writes what waits; resolves when it is written (or failed and waits again). */
  flush(): Promise<void> {
    if (!this.flushing) {
      if (this.waiting.length === 0 && this.dropped === 0) return Promise.resolve();
      // `finally` is attached once the promise is ours, so it always runs after this assignment
      // (an async function with nothing to await ran its own `finally` first and left a settled
      // promise here for good: no record was written again).
      this.flushing = this.writeWaiting().finally(() => {
        this.flushing = undefined;
      });
    }
    return this.flushing;
  }

  private async writeWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        await this.deps.store.audit.append(batch);
      } catch (error) {
        this.deps.log.warn(
          { err: error, waiting: batch.length },
          'could not write audit records; trying again',
        );
        this.waiting = [...batch, ...this.waiting].slice(-MAX_WAITING);
        return;
      }
    }
    if (this.dropped > 0) {
      this.deps.log.error(
        { dropped: this.dropped },
        'audit records dropped: the store did not take them in time',
      );
      this.dropped = 0;
    }
  }
}
