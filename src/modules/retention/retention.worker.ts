/**
 * Retention (CONTRACT §13) in the background: every minute this node leases a hub whose run is due
 * (one node per run: the store's lease), removes the messages created before the start of the day
 * `retentionDays` before today in the hub's zone (retention.usecases.ts purgeHub: short batches with
 * rests, so webhooks are never held behind a purge), and says so:
 * one log line per run with its counts, and metrics (runs by outcome, messages removed, the last
 * success and the last failure) that an alert can watch. A run stops after RUN_MS and is due again
 * at once (a large backlog goes in several runs); a run that ends is due again in an hour; one that
 * fails is retried in five minutes, and its failure is never silent.
 */
import type { FastifyBaseLogger } from 'fastify';
import { formatTimestamp } from '../../lib/calendar.js';
import type { Metrics } from '../../lib/metrics.js';
import type { RetentionRun, Store } from '../../store/store.js';
import { AGAIN_MS, purgeHub, retentionCutoff } from './retention.usecases.js';

const RUN_MS = 60_000;
const LEASE_MS = 10 * 60_000;
const EVERY_MS = 60_000;
const RETRY_MS = 5 * 60_000;

export interface RetentionDeps {
  store: Pick<Store, 'retention'>;
  log: FastifyBaseLogger;
  clock: () => number;
  metrics?: Metrics | undefined;
  /** Messages a batch removes (tests vary it). */
  batch?: number;
  /** How long one run works before handing over (tests vary it). */
  runMs?: number;
}

export interface RetentionOutcome {
  hubId: string;
  before: number;
  removed: number;
}

export class RetentionWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(private readonly deps: RetentionDeps) {}

  start(): void {
    this.stopping = false;
    const tick = () => {
      this.running = this.runDue()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.deps.log.error({ err: error }, 'retention: could not look for due runs'),
        )
        .finally(() => {
          this.running = undefined;
          if (!this.stopping) this.timer = setTimeout(tick, EVERY_MS).unref();
        });
    };
    this.timer = setTimeout(tick, 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Leases and runs the due hubs, one at a time, until none is due. Resolves their outcomes. */
  async runDue(): Promise<RetentionOutcome[]> {
    const outcomes: RetentionOutcome[] = [];
    while (!this.stopping) {
      const now = this.deps.clock();
      const [run] = await this.deps.store.retention.lease(now, now + LEASE_MS, 1);
      if (!run) break;
      const outcome = await this.run(run);
      if (outcome) outcomes.push(outcome);
    }
    return outcomes;
  }

  private async run(run: RetentionRun): Promise<RetentionOutcome | undefined> {
    const { store, clock, log, metrics } = this.deps;
    const started = clock();
    const before = retentionCutoff(started, run.retentionDays, run.timeZone);
    let removed = 0;
    try {
      removed = await purgeHub(this.deps, run.hubId, before, {
        until: started + (this.deps.runMs ?? RUN_MS),
        stopped: () => this.stopping,
        onBatch: (n) => {
          removed = n;
        },
      });
      const rest = await store.retention.preview(run.hubId, before);
      // More to remove (stopped by time or shutdown): due again at once; otherwise in an hour. The
      // files are made clean of what went (SQLite: the WAL, the search index) once nothing is left:
      // a 1M backlog's 2 s runs each asked for it and the index was rewritten over and over.
      const left = rest.messages > 0;
      await store.retention.finish(run.hubId, left ? clock() : clock() + AGAIN_MS, removed > 0 && !left);
      log.info(
        {
          hubId: run.hubId,
          retentionDays: run.retentionDays,
          before: formatTimestamp(before),
          removed,
          left: rest.messages,
          ms: clock() - started,
        },
        'retention run',
      );
      metrics?.retention('ok', removed, clock());
      return { hubId: run.hubId, before, removed };
    } catch (error) {
      log.error({ err: error, hubId: run.hubId, removed }, 'retention run failed; retried in 5 minutes');
      metrics?.retention('failed', removed, clock());
      await store.retention
        .finish(run.hubId, clock() + RETRY_MS, removed > 0)
        .catch((finishError: unknown) =>
          log.error({ err: finishError, hubId: run.hubId }, 'retention: could not release the run'),
        );
      return undefined;
    }
  }
}
