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
