/**
 * Retention's one operation (CONTRACT §13), for the background worker (retention.worker.ts) and
 * `chatlog hub purge` alike: where a hub's cutoff falls, what a purge would remove, and the purge
 * itself, batch after batch, each its own short transaction with a rest after it.
 */
import { daysBefore, localDayAt, startOfDayInZone } from '../../lib/calendar.js';
import type { Hub, RetentionPreview, Store } from '../../store/store.js';

/** Messages removed per transaction. */
export const RETENTION_BATCH = 200;
/**
 * After each batch the purge rests twice as long as the batch took (at least 5 ms): on SQLite a
 * batch holds the event loop and the one writer, so webhooks get two thirds of the time whatever
 * the machine (500 a batch with 5 ms rests left Q5 at 0.22 of its rate during a 1M purge).
 */
const REST_FACTOR = 2;
const MIN_REST_MS = 5;
/** A run that removed everything due is due again in an hour. */
export const AGAIN_MS = 60 * 60_000;

/**
 * The first instant kept: the start (in `timeZone`) of the day `days` before the day of `now`.
 * Messages created before it are more than `days` days old as the hub counts days.
 */
export function retentionCutoff(now: number, days: number, timeZone: string): number {
  return startOfDayInZone(daysBefore(localDayAt(now, timeZone), days), timeZone);
}

export interface PurgeDeps {
  store: Pick<Store, 'retention'>;
  clock: () => number;
  /** Messages a batch removes (tests vary it). */
  batch?: number | undefined;
}

/** Removes what a run removes, batch after batch; `stopped()` ends it between two batches. */
export async function purgeHub(
  deps: PurgeDeps,
  hubId: string,
  before: number,
  options: { until?: number; stopped?: () => boolean; onBatch?: (removed: number) => void } = {},
): Promise<number> {
  const batch = deps.batch ?? RETENTION_BATCH;
  let removed = 0;
  for (;;) {
    const started = performance.now();
    const n = await deps.store.retention.purgeBatch(hubId, before, batch, deps.clock(), removed === 0);
    const took = performance.now() - started;
    removed += n;
    options.onBatch?.(removed);
    if (n < batch || options.stopped?.() || (options.until !== undefined && deps.clock() >= options.until)) {
      return removed;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(MIN_REST_MS, REST_FACTOR * took)));
  }
}

/** What a purge of `hub` now would remove: its cutoff and the messages before it. */
export async function previewPurge(
  deps: PurgeDeps,
  hub: Pick<Hub, 'id' | 'retentionDays' | 'timeZone'>,
): Promise<{ before: number; preview: RetentionPreview }> {
  const before = retentionCutoff(deps.clock(), hub.retentionDays, hub.timeZone);
  return { before, preview: await deps.store.retention.preview(hub.id, before) };
}

/**
 * A hub's purge now, to its end (`chatlog hub purge`, after previewPurge gave `before`): what a
 * background run removes, without its time limit; the hub's next run is due in an hour, as after a
 * run that ended. The messages removed.
 */
export async function purgeNow(
  deps: PurgeDeps,
  hubId: string,
  before: number,
  onBatch?: (removed: number) => void,
): Promise<number> {
  const removed = await purgeHub(deps, hubId, before, onBatch ? { onBatch } : {});
  await deps.store.retention.finish(hubId, deps.clock() + AGAIN_MS, removed > 0);
  return removed;
}
