/**
 * Retention (CONTRACT §13) on SQLite and (CHATLOG_TEST_STORE=postgres) on PostgreSQL: the worker
 * removes exactly the messages created before the start of the day `retentionDays` before today in
 * the hub's zone (across New York's change to daylight saving time, and in Tokyo), in batches, with
 * their search entries, media and feed entries, and one `retention.applied` per run; a run is
 * leased by one node; a failing run says so in a log line and a metric; other hubs are untouched.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../src/lib/logger.js';
import { Metrics } from '../../src/lib/metrics.js';
import { retentionCutoff } from '../../src/modules/retention/retention.usecases.js';
import { RetentionWorker } from '../../src/modules/retention/retention.worker.js';
import type { IngestOperation, Store } from '../../src/store/store.js';
import { createTestStore, LogCapture, type TestStore } from '../helpers.js';

let t: TestStore;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

/** The local calendar day of an instant in a zone, as Intl writes it (the oracle). */
const localDay = (epochMs: number, timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    epochMs,
  );

test('the cutoff is the first instant of the day `days` before today, in the hub zone', () => {
  const zones = [
    'UTC',
    'Asia/Tokyo',
    'America/New_York',
    'Europe/London',
    'Australia/Lord_Howe',
    'America/Santiago',
    'Asia/Kolkata',
  ];
  fc.assert(
    fc.property(
      fc.constantFrom(...zones),
      fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
      fc.integer({ min: 0, max: 400 }),
      (zone, now, days) => {
        const cutoff = retentionCutoff(now, days, zone);
        const today = localDay(now, zone);
        const [y, m, d] = today.split('-').map(Number) as [number, number, number];
        const expected = new Date(Date.UTC(y, m - 1, d - days)).toISOString().slice(0, 10);
        assert.equal(localDay(cutoff, zone), expected, 'the cutoff is on that day');
        assert.ok(localDay(cutoff - 1, zone) < expected, 'and is its first instant');
      },
    ),
    { numRuns: 2000 },
  );
});

let sequence = 0;
function text(
  lineId: string,
  createdAt: number,
  msg: string,
  extra: Partial<IngestOperation & { kind: 'message' }> = {},
): IngestOperation {
  sequence += 1;
  return {
    kind: 'message',
    lineId,
    sender: null,
    msg,
    contentType: 'text',
    createdAt,
    sourceId: `ingest:retention-${sequence}`,
    id: `retention-${sequence}`,
    sourceKind: 'user',
    sourceChatId: null,
    ...extra,
  };
}

async function feedOf(store: Store, hubId: string) {
  const changes = [];
  let after = 0;
  for (;;) {
    const page = await store.changes.page(hubId, after, 1000);
    changes.push(...page);
    const last = page.at(-1);
    if (!last || page.length < 1000) return changes;
    after = last.seq;
  }
}

function worker(
  store: Store,
  now: number,
  options: { batch?: number; runMs?: number; metrics?: Metrics; logs?: LogCapture } = {},
) {
  return new RetentionWorker({
    store,
    log: createLogger('info', options.logs ?? new LogCapture()),
    clock: () => now,
    metrics: options.metrics,
    batch: options.batch ?? 2,
    runMs: options.runMs,
  });
}

test("New York across the change to daylight saving time: the day before yesterday's last millisecond goes, yesterday stays", async () => {
  const hub = '7810001';
  const tokyo = '7810002';
  // 2026-03-08 is the day New York moved to EDT (02:00 → 03:00). "Now" is the next day, noon.
  const now = Date.parse('2026-03-09T16:00:00Z');
  const startOfMarch8 = Date.parse('2026-03-08T05:00:00Z'); // midnight EST
  await t.hubs.add(hub, { timeZone: 'America/New_York', retentionDays: 1 });
  await t.hubs.add(tokyo, { timeZone: 'Asia/Tokyo' });
  const times = [
    Date.parse('2026-03-01T12:00:00Z'),
    Date.parse('2026-03-07T10:00:00Z'),
    startOfMarch8 - 1,
    startOfMarch8,
    Date.parse('2026-03-08T07:30:00Z'), // 03:30 EDT
    now - 60_000,
  ];
  await t.store.messages.ingest(
    hub,
    times.map((createdAt, i) =>
      text(
        i % 2 ? 'Ub' : 'Ua',
        createdAt,
        `予約 ${i}`,
        i === 0
          ? {
              contentType: 'image',
              msg: '[Image]\nID: 1',
              content: { lineMessageId: '1', kind: 'image', fileName: null },
            }
          : {},
      ),
    ),
    now,
  );
  await t.store.messages.ingest(tokyo, [text('Ua', times[0]!, 'tokyo 予約')], now);
  const versionBefore = (await t.store.messages.versions(hub)).history;
  const removedIds = (await feedOf(t.store, hub))
    .filter((change) => change.type === 'message.created')
    .slice(0, 3)
    .map((change) => (change as { id: string }).id);

  const outcomes = await worker(t.store, now).runDue();
  assert.deepEqual(outcomes, [{ hubId: hub, before: startOfMarch8, removed: 3 }]);
  const left = await t.store.search.page({ hubId: hub, terms: ['予約'], limit: 10 });
  assert.deepEqual(
    left.hits.map((hit) => hit.message.createdAt).sort(),
    times.slice(3).sort(),
    'kept: from midnight of March 8 on (EST), nothing before',
  );
  const feed = await feedOf(t.store, hub);
  const applied = feed.filter((change) => change.type === 'retention.applied');
  assert.deepEqual(
    applied.map((change) => (change as { before: number }).before),
    [startOfMarch8],
    'one retention.applied, batches of 2 notwithstanding',
  );
  for (const id of removedIds) {
    assert.ok(!feed.some((change) => (change as { id?: string }).id === id), `${id} left the feed`);
  }
  assert.equal(await t.store.content.get(hub, '1'), undefined, 'the media item went with its message');
  assert.ok((await t.store.messages.versions(hub)).history > versionBefore, 'cached answers are stale');
  assert.equal(
    (await t.store.search.page({ hubId: tokyo, terms: ['予約'], limit: 10 })).hits.length,
    1,
    'Tokyo untouched',
  );

  // Due again in an hour, not now; a shorter retention makes it due at once.
  assert.deepEqual(await worker(t.store, now + 60_000).runDue(), []);
  await t.hubs.add(hub, { retentionDays: 0 });
  assert.deepEqual(
    await t.store.retention.lease(now + 2 * 3_600_000, now + 3 * 3_600_000, 10),
    [],
    '0 keeps everything',
  );
});

test('in Tokyo the same instants give another cutoff; a bounded run hands over and the next goes on', async () => {
  const hub = '7810003';
  const now = Date.parse('2026-11-24T20:00:00Z'); // 05:00 on the 25th in Tokyo
  await t.hubs.add(hub, { timeZone: 'Asia/Tokyo', retentionDays: 30 });
  const cutoff = Date.parse('2026-10-25T15:00:00Z'); // midnight of 10-26 in Tokyo
  await t.store.messages.ingest(
    hub,
    Array.from({ length: 9 }, (_, i) =>
      text('Ut', cutoff - (9 - i) * 3_600_000 + (i === 8 ? 3_600_000 : 0), `m${i}`),
    ),
    now,
  );
  // runMs 0: each run removes one batch and is due again at once; runDue goes on until none is due.
  const outcomes = await worker(t.store, now, { batch: 3, runMs: 0 }).runDue();
  assert.deepEqual(
    outcomes.map((o) => o.removed),
    [3, 3, 2],
  );
  assert.ok(outcomes.every((o) => o.before === cutoff));
  const feed = await feedOf(t.store, hub);
  assert.equal(feed.filter((change) => change.type === 'retention.applied').length, 3, 'one per run');
  assert.equal(feed.filter((change) => change.type === 'message.created').length, 1);
});

test('a run is leased by one node; a dead node’s lease passes after it expires', async () => {
  const hub = '7810004';
  const now = Date.parse('2026-06-01T00:00:00Z');
  await t.hubs.add(hub, { retentionDays: 7 });
  const first = await t.store.retention.lease(now, now + 600_000, 10);
  assert.ok(first.some((run) => run.hubId === hub));
  const second = await t.store.retention.lease(now + 1000, now + 601_000, 10);
  assert.ok(!second.some((run) => run.hubId === hub), 'not while the lease holds');
  const later = await t.store.retention.lease(now + 600_000, now + 1_200_000, 10);
  assert.ok(
    later.some((run) => run.hubId === hub),
    'taken over once it passed',
  );
  await t.store.retention.finish(hub, now + 3_600_000, false);
});

test('a failing run is logged and counted for an alert, and retried later', async () => {
  const hub = '7810005';
  const now = Date.parse('2026-06-01T00:00:00Z');
  await t.hubs.add(hub, { retentionDays: 1 });
  await t.store.messages.ingest(hub, [text('Uf', now - 10 * 86_400_000, 'old')], now);
  const failing: Store = {
    ...t.store,
    retention: {
      ...t.store.retention,
      purgeBatch: async () => {
        throw new Error('disk full');
      },
    },
  };
  const metrics = new Metrics();
  const logs = new LogCapture();
  assert.deepEqual(await worker(failing, now, { metrics, logs }).runDue(), []);
  assert.match(logs.text, /retention run failed; retried in 5 minutes/);
  assert.match(logs.text, /disk full/);
  const exposition = (await metrics.render()).body;
  assert.match(exposition, /chatlog_retention_runs_total\{outcome="failed"\} 1/);
  assert.match(exposition, new RegExp(`chatlog_retention_last_failure_timestamp_seconds ${now / 1000}`));
  // Not due again before five minutes; then it runs and removes the message.
  assert.deepEqual(await worker(t.store, now + 60_000).runDue(), []);
  const outcomes = await worker(t.store, now + 5 * 60_000, { metrics }).runDue();
  assert.deepEqual(
    outcomes.map((o) => [o.hubId, o.removed]),
    [[hub, 1]],
  );
  assert.match((await metrics.render()).body, /chatlog_retention_messages_removed_total 1/);
});

test("a run takes the hub's sends settled before the cutoff with its messages; a pending one and a newer one stay", async () => {
  const hub = '7810006';
  const now = Date.parse('2026-11-24T20:00:00Z'); // 05:00 on the 25th in Tokyo
  const cutoff = Date.parse('2026-10-25T15:00:00Z'); // midnight of 10-26 in Tokyo
  await t.hubs.add(hub, { timeZone: 'Asia/Tokyo', retentionDays: 30 });
  await t.store.messages.ingest(hub, [text('Us', cutoff - 3_600_000, 'old')], now);
  const sendAt = async (id: string, createdAt: number) =>
    t.store.sends.create(
      {
        id,
        hubId: hub,
        lineId: 'Us',
        messages: [{ type: 'text', text: `reply ${id}` }],
        retryKey: `00000000-0000-4000-8000-00000000000${id.length}`,
        idempotencyKey: null,
        createdAt,
      },
      86_400_000,
    );
  await sendAt('s-old-failed', cutoff - 2 * 3_600_000);
  await sendAt('s-old-pending', cutoff - 60_000);
  await sendAt('s-new', cutoff + 60_000);
  // The oldest is leased and refused by LINE; the other two are still pending.
  const [leased] = await t.store.sends.lease(cutoff, cutoff + 60_000, 1);
  assert.equal(leased?.id, 's-old-failed');
  await t.store.sends.settle(
    {
      id: 's-old-failed',
      leasedUntil: leased.leasedUntil,
      state: 'failed',
      attempts: 1,
      lastError: 'refused',
    },
    cutoff,
  );

  const outcomes = await worker(t.store, now).runDue();
  assert.deepEqual(
    outcomes.filter((o) => o.hubId === hub),
    [{ hubId: hub, before: cutoff, removed: 1 }],
  );
  assert.equal(await t.store.sends.get(hub, 's-old-failed'), undefined, 'its text is gone');
  assert.equal((await t.store.sends.get(hub, 's-old-pending'))?.state, 'pending', 'still to be sent');
  assert.equal((await t.store.sends.get(hub, 's-new'))?.state, 'pending');
});
