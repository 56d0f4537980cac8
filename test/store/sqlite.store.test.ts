/** What only the SQLite store promises: its query plan, its integrity check, its FTS5 index's upkeep. */
// sqlite-only: SQLite's own query plan, integrity check and FTS5 segments; PostgreSQL has none of them to test.
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

test('writes made in one turn travel to the writer thread together; one that cannot cross fails alone', async () => {
  const own = new SqliteStore({ dataDir: tempDir() });
  try {
    await own.migrate();
    const upsert = (hubId: string, timeZone: unknown) =>
      own.hubs.upsert(hubId, { timeZone } as { timeZone: string }, Date.now());
    // A function cannot be cloned to the thread: that write fails, those beside it are made.
    const results = await Promise.allSettled([
      upsert('11', 'Asia/Tokyo'),
      upsert('12', () => 'Asia/Tokyo'),
      upsert('13', 'Asia/Tokyo'),
    ]);
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /could not be cloned/);
    assert.ok(await own.hubs.get('11'));
    assert.equal(await own.hubs.get('12'), undefined);
    assert.ok(await own.hubs.get('13'));
    // Many writes of one turn, in order: each gets its own result.
    await Promise.all(Array.from({ length: 200 }, (_, i) => upsert(String(100 + i), 'Asia/Tokyo')));
    for (let i = 0; i < 200; i += 37) assert.ok(await own.hubs.get(String(100 + i)));
  } finally {
    await own.close();
  }
});

test("the writer thread's outbox: what a turn pushes goes as one message, in order; a later push waits for the next turn", async () => {
  const { Outbox } = await import('../../src/store/sqlite/sqlite.writer-thread.js');
  const sent: number[][] = [];
  const outbox = new Outbox<number>(
    {
      postMessage: (items) => {
        sent.push(items);
        if (items[0] === 1) outbox.push(4);
      },
    },
    () => assert.fail('every item can be sent'),
  );
  outbox.push(1);
  outbox.push(2);
  await Promise.resolve();
  outbox.push(3);
  assert.deepEqual(sent, [], 'nothing before the turn ends');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(sent, [[1, 2, 3]]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(sent, [[1, 2, 3], [4]]);
  outbox.push(5);
  outbox.flush();
  outbox.flush();
  assert.deepEqual(sent.at(-1), [5], 'flush sends at once, and nothing when empty');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sent.length, 3);
});

test('a write of the writer thread has woken its hub when it resolves, for every write of one turn', async () => {
  const own = new SqliteStore({ dataDir: tempDir() });
  try {
    await own.migrate();
    const hubs = ['21', '22', '23', '24', '25'];
    for (const hubId of hubs) await own.hubs.upsert(hubId, { timeZone: 'UTC' }, Date.now());
    const woken = new Set<string | undefined>();
    own.changes.onChange((hubId) => woken.add(hubId));
    const writes = Array.from({ length: 40 }, (_, i) => {
      const hubId = hubs[i % hubs.length] as string;
      return own.messages
        .ingest(
          hubId,
          [
            {
              kind: 'message',
              lineId: `U${i % 3}`,
              sender: null,
              msg: `m${i}`,
              contentType: 'text',
              createdAt: 1_700_000_000_000 + i,
              sourceId: `w${i}`,
              sourceKind: 'user',
              sourceChatId: null,
            },
          ],
          Date.now(),
        )
        .then(() =>
          assert.ok(
            woken.has(hubId) || woken.has(undefined),
            `hub ${hubId} woken before write ${i} resolved`,
          ),
        );
    });
    await Promise.all(writes);
  } finally {
    await own.close();
  }
});

/** The index's rows that only mark deleted messages (FTS5 tombstone pages), read from the file. */
async function searchIndexFile(file: string): Promise<{ tombstonePages: number; deletemerge: unknown }> {
  const { openDatabase } = await import('../../src/store/sqlite/sqlite.driver.js');
  const db = openDatabase(file, { readonly: true });
  try {
    const pages = db
      .prepare('SELECT COUNT(*) AS n FROM message_search_data WHERE id >= 9007199254740992')
      .get() as { n: number };
    const setting = db.prepare("SELECT v FROM message_search_config WHERE k = 'deletemerge'").get() as
      | { v: unknown }
      | undefined;
    return { tombstonePages: pages.n, deletemerge: setting?.v };
  } finally {
    db.close();
  }
}

async function storeWithTwoContacts(perImport = 500): Promise<SqliteStore> {
  const { createSecretBox } = await import('../../src/lib/secrets.js');
  const { HubService } = await import('../../src/modules/hubs/hubs.usecases.js');
  const { message, storeMessages, TEST_SECRET } = await import('../helpers.js');
  const s = new SqliteStore({ dataDir: tempDir() });
  await s.migrate();
  await new HubService(s, createSecretBox(TEST_SECRET)).add('9', {});
  // Several imports: several FTS5 segments, the erased messages in each.
  for (let part = 0; part < 6; part++) {
    await storeMessages(
      s,
      '9',
      Array.from({ length: perImport }, (_, i) =>
        message({
          lineId: i % 10 === 0 ? 'Ugone' : 'Ukept',
          createdAt: part * 10_000 + i,
          msg: i % 10 === 0 ? `予約 ZQXMARK ${part}-${i}` : `予約の確認 ${part}-${i}`,
        }),
      ),
    );
  }
  return s;
}

test('an erasure: the search index is rewritten without the erased messages, never inside the deleting transaction', async () => {
  const s = await storeWithTwoContacts();
  try {
    // Migration 14: no FTS5 merge inside a deletion (a retention batch once rewrote most of the index).
    assert.equal(Number((await searchIndexFile(s.file)).deletemerge), 0);
    assert.equal(await s.contacts.erase('9', 'Ugone', Date.now()), 300);
    await s.search.compacted();
    assert.equal(
      (await searchIndexFile(s.file)).tombstonePages,
      0,
      'no page of the index marks an erased message',
    );
    const found = await s.search.page({ hubId: '9', terms: ['予約'], limit: 1000 });
    assert.equal(found.hits.length, 1000);
    assert.ok(found.hits.every((hit) => !JSON.stringify(hit).includes('ZQXMARK')));
    assert.equal((await s.search.page({ hubId: '9', terms: ['zqxmark'], limit: 10 })).hits.length, 0);
  } finally {
    await s.close();
  }
});

test('deleted messages the index still marks (a rewrite cut short) are rewritten away when a server starts it again', async () => {
  const s = await storeWithTwoContacts();
  try {
    // A retention batch without the run's end: what a kill -9 between the two leaves.
    for (const announce of [true, false]) {
      assert.equal(await s.retention.purgeBatch('9', 20_000, 250, Date.now(), announce), 250);
    }
    assert.ok(
      (await searchIndexFile(s.file)).tombstonePages > 0,
      'the deleted messages are marked, not yet gone',
    );
    await s.search.resumeCompaction();
    await s.search.compacted();
    assert.equal((await searchIndexFile(s.file)).tombstonePages, 0);
  } finally {
    await s.close();
  }
});

test('after a retention run the index is rewritten only when enough of it is deleted messages', async () => {
  const s = await storeWithTwoContacts(10_000);
  try {
    // A few deletions: not worth a pass.
    assert.equal(await s.retention.purgeBatch('9', 60_000, 10, Date.now(), true), 10);
    assert.equal(await s.retention.purgeBatch('9', 60_000, 10, Date.now(), false), 10);
    await s.retention.finish('9', Date.now() + 3_600_000, true);
    await s.search.compacted();
    assert.ok(
      (await searchIndexFile(s.file)).tombstonePages > 0,
      'twenty of 60,000 deleted: the index is left as it is',
    );
    // A third of the hub: the pass pays, and leaves no deleted message in the index.
    assert.equal(await s.retention.purgeBatch('9', 60_000, 20_000, Date.now(), false), 20_000);
    await s.retention.finish('9', Date.now() + 3_600_000, true);
    await s.search.compacted();
    assert.equal((await searchIndexFile(s.file)).tombstonePages, 0);
  } finally {
    await s.close();
  }
});
