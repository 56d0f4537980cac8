/** What only the SQLite store promises: its query plan and its integrity check. */
// sqlite-only: SQLite's own query plan and integrity check; PostgreSQL has neither to test.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite.store.js';
import { tempDir } from '../helpers.js';

let store: SqliteStore;
before(async () => {
  store = new SqliteStore({ dataDir: tempDir() });
  await store.migrate();
});
after(() => store.close());

test('the range query walks indexes in answer order: no sort, no temporary b-tree', () => {
  const plan = store.explainStream().join('\n');
  assert.doesNotMatch(plan, /TEMP B-TREE/);
  assert.match(plan, /contacts_by_hub_in_first_seen_order/);
  assert.match(plan, /messages_by_contact_and_time/);
});

test('a fresh store passes its integrity check', () => {
  assert.equal(store.integrityCheck(), 'ok');
});

test('short ranges read by time and sorted give the very bytes of the walk over contacts', async () => {
  const fc = (await import('fast-check')).default;
  const { collectAnswer } = await import('../../src/modules/messages/messages.serializer.js');
  const { createSecretBox } = await import('../../src/lib/secrets.js');
  const { HubService } = await import('../../src/modules/hubs/hubs.usecases.js');
  const { message, storeMessages, TEST_SECRET } = await import('../helpers.js');
  const dir = tempDir();
  const byTime = new SqliteStore({ dataDir: dir, shortRangeMaxRows: 1_000_000 });
  await byTime.migrate();
  const walking = new SqliteStore({ dataDir: dir, shortRangeMaxRows: -1 });
  try {
    await new HubService(byTime, createSecretBox(TEST_SECRET)).add('9', {});
    await storeMessages(
      byTime,
      '9',
      Array.from({ length: 3000 }, (_, i) =>
        message({
          lineId: `U${(i * 7919) % 97}`,
          createdAt: (i * 104729) % 500_000,
          name: i % 5 ? '' : `n${i}`,
        }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -10, max: 510_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        async (from, length) => {
          const query = { hubId: '9', fromMs: from, toMsExclusive: from + length };
          const a = await collectAnswer(byTime.messages.stream(query));
          const b = await collectAnswer(walking.messages.stream(query));
          assert.deepEqual(a, b);
        },
      ),
      { numRuns: 100 },
    );
  } finally {
    await byTime.close();
    await walking.close();
  }
});

test('a writer thread that dies fails the writes in flight as "unavailable" (503), and the next write starts another', async () => {
  const { isStoreUnavailable } = await import('../../src/store/store.js');
  const { WRITER_LOST } = await import('../../src/store/sqlite/sqlite.writer-thread.js');
  const dir = tempDir();
  const own = new SqliteStore({ dataDir: dir });
  try {
    await own.migrate();
    await own.hubs.upsert('1', { timeZone: 'Asia/Tokyo' }, Date.now());
    // The thread, as the store holds it: killed as a crash of its own would kill it.
    const thread = (own as unknown as { thread: { worker: { terminate(): Promise<number> } | undefined } })
      .thread;
    // Another connection holds the write lock: the write waits for it (in flight) when the thread dies.
    const { openDatabase } = await import('../../src/store/sqlite/sqlite.driver.js');
    const blocker = openDatabase(own.file);
    blocker.exec('BEGIN IMMEDIATE');
    const inFlight = own.hubs.upsert('2', { timeZone: 'Asia/Tokyo' }, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await thread.worker?.terminate();
    blocker.exec('ROLLBACK');
    blocker.close();
    await assert.rejects(inFlight, (error: { code?: string }) => {
      assert.equal(error.code, WRITER_LOST);
      assert.ok(isStoreUnavailable(error));
      return true;
    });
    await own.hubs.upsert('3', { timeZone: 'Asia/Tokyo' }, Date.now());
    assert.ok(await own.hubs.get('1'));
    assert.equal(await own.hubs.get('2'), undefined);
    assert.ok(await own.hubs.get('3'));
    assert.equal(own.integrityCheck(), 'ok');
  } finally {
    await own.close();
  }
});
