/** The Store contract, run on SQLite and (CHATLOG_TEST_STORE=postgres) on PostgreSQL. */

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { answerVersion } from '../../src/modules/messages/messages.usecases.js';
import { openDatabase } from '../../src/store/sqlite/sqlite.driver.js';
import type { IngestOperation } from '../../src/store/store.js';
import {
  assertStoreSound,
  createTestStore,
  message,
  reopenTestStore,
  storeMessages,
  type TestStore,
} from '../helpers.js';

let t: TestStore;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

test('migrations are versioned and safe to run again', async () => {
  await t.store.migrate();
  await t.store.migrate();
  assert.equal(await t.store.ready(), true);
});

/**
 * Runs statements on the test store's database beside the store (its own connection), and then
 * `query`: its first row's first value. `of`: another test store.
 */
async function onDatabase(statements: string, query?: string, of: TestStore = t): Promise<unknown> {
  if (of.env.DATABASE_URL) {
    const client = new pg.Client({
      connectionString: of.env.DATABASE_URL,
      options: `-c search_path=${of.env.CHATLOG_PG_SCHEMA}`,
    });
    await client.connect();
    try {
      if (statements !== '') await client.query(statements);
      return query ? Object.values((await client.query(query)).rows[0] ?? {})[0] : undefined;
    } finally {
      await client.end();
    }
  }
  const db = openDatabase(path.join(of.dir, 'chatlog.db'));
  try {
    if (statements !== '') db.exec(statements);
    return query ? Object.values((db.prepare(query).get() as object | undefined) ?? {})[0] : undefined;
  } finally {
    db.close();
  }
}

/** A LINE message from Ua, as a webhook brings it. */
const live = (sourceId: string, msg: string): IngestOperation => ({
  kind: 'message',
  lineId: 'Ua',
  sender: null,
  msg,
  contentType: 'text',
  createdAt: Date.now(),
  sourceId,
  sourceKind: 'user',
  sourceChatId: null,
});

test('a message unsent by a later request of its group leaves no search entry, and its row id given again is the new message', async () => {
  // On SQLite, a store without its writer thread: requests made in one turn of the event loop are
  // then one group for sure (through the thread, each arrives on its own).
  const own = await createTestStore({ writerThread: false });
  const store = own.store;
  try {
    await store.hubs.upsert('17', {}, Date.now());
    const unsend = (sourceId: string): IngestOperation => ({ kind: 'unsend', sourceId, at: Date.now() });
    // Once the queue is indexed, one index entry for each stored message, none for those taken back.
    const count = async (table: string) => Number(await onDatabase('', `SELECT COUNT(*) FROM ${table}`, own));
    const assertEntries = async () => {
      await store.search.indexQueued();
      if (!t.env.DATABASE_URL) assert.equal(await count('search_pending'), 0);
      assert.equal(
        await count(t.env.DATABASE_URL ? 'message_search' : 'message_search_docsize'),
        await count('messages'),
      );
    };
    await store.messages.ingest('17', [live('s0', 'kept before')], Date.now());
    // Sent at once: one group, in this order. The second time, the new message takes the row id
    // the unsent one had (SQLite gives the highest again).
    await Promise.all([
      store.messages.ingest('17', [live('s1', 'ZQXGONE 予約')], Date.now()),
      store.messages.ingest('17', [unsend('s1')], Date.now()),
    ]);
    await assertEntries();
    await Promise.all([
      store.messages.ingest('17', [live('s2', 'ZQXGONE 予約')], Date.now()),
      store.messages.ingest('17', [unsend('s2')], Date.now()),
      store.messages.ingest('17', [live('s3', 'ZQXNEW 予約')], Date.now()),
    ]);
    const found = async (term: string) =>
      (await store.search.page({ hubId: '17', terms: [term], limit: 10, scanFirst: 0 })).hits.map(
        (hit) => hit.message.msg,
      );
    assert.deepEqual(await found('zqxgone'), []);
    assert.deepEqual(await found('zqxnew'), ['ZQXNEW 予約']);
    assert.deepEqual(await found('予約'), ['ZQXNEW 予約']);
    await assertEntries();
  } finally {
    await own.close();
  }
});

test('a live message is found at once, indexed a moment later by itself (SQLite); a stop leaves the queue to the next start', async () => {
  const own = await createTestStore();
  try {
    await own.store.hubs.upsert('18', {}, Date.now());
    // SQLite queues live messages for the index; PostgreSQL indexes them in their transaction (the
    // queue stays empty there, and everything below holds all the same).
    const queued = async () =>
      own.env.DATABASE_URL ? 0 : Number(await onDatabase('', 'SELECT COUNT(*) FROM search_pending', own));
    const found = async (store: typeof own.store, term: string) =>
      (await store.search.page({ hubId: '18', terms: [term], limit: 10, scanFirst: 0 })).hits.map(
        (hit) => hit.message.msg,
      );
    await own.store.messages.ingest('18', [live('q1', 'QUEUED 予約')], Date.now());
    // Answered: searchable, from the queue.
    assert.deepEqual(await found(own.store, 'queued'), ['QUEUED 予約']);
    // A moment later the indexer took it, unasked.
    const emptied = async () => {
      for (const deadline = Date.now() + 10_000; (await queued()) > 0 && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 50));
      return queued();
    };
    assert.equal(await emptied(), 0, 'indexed within a few seconds');
    assert.deepEqual(await found(own.store, 'queued'), ['QUEUED 予約']);
    // Queued and then stopped before the indexer ran: the next start indexes it.
    await own.store.messages.ingest('18', [live('q2', 'LEFTOVER 予約')], Date.now());
    await own.store.close();
    const again = reopenTestStore(own);
    try {
      await again.migrate();
      assert.deepEqual(await found(again, 'leftover'), ['LEFTOVER 予約'], 'found from the queue');
      await again.search.resumeCompaction();
      assert.equal(await emptied(), 0, 'indexed after the start');
      assert.deepEqual(await found(again, '予約'), ['LEFTOVER 予約', 'QUEUED 予約']);
    } finally {
      await again.close();
    }
  } finally {
    await own.close();
  }
});

test('an upgrade from a store whose search index holds the tokens before migration 16 indexes every message again', async () => {
  await t.hubs.add('16', {});
  const texts = ['予約をお願いします', 'Can I change my booking?', '駐車場', 'ｶﾀｶﾅ and 🍣'];
  await storeMessages(
    t.store,
    '16',
    texts.map((msg, i) => message({ msg, createdAt: i + 1 })),
  );
  // By the index alone (no first look at the newest messages without it).
  const found = async (store: typeof t.store, term: string) =>
    (await store.search.page({ hubId: '16', terms: [term], limit: 10, scanFirst: 0 })).hits.map(
      (hit) => hit.message.msg,
    );
  assert.deepEqual(await found(t.store, '予約'), ['予約をお願いします']);
  await t.store.search.indexQueued();
  // The store as version 15 left it: each message's index row held `u`/`b` and 6 hex digits a
  // code point, which no query of today's asks for (and no queue of messages to index, no sends, no
  // HubSpot inbox).
  await onDatabase(
    t.env.DATABASE_URL
      ? `UPDATE message_search SET tokens = 'u00004e b00004e000041'::tsvector;
         DROP TABLE sends;
         DROP TABLE hubspot_oauth_states;
         DROP TABLE hubspot_connections;
         DROP TABLE hubspot_settings;
         DELETE FROM schema_migrations WHERE version >= 16;`
      : `INSERT INTO message_search (message_search) VALUES ('delete-all');
         INSERT INTO message_search (rowid, tokens) SELECT id, 'u00004e b00004e000041' FROM messages;
         DROP TRIGGER search_pending_leaves;
         DROP TABLE search_pending;
         DROP TABLE sends;
         DROP TABLE hubspot_oauth_states;
         DROP TABLE hubspot_connections;
         DROP TABLE hubspot_settings;
         DELETE FROM schema_migrations WHERE version >= 16;`,
  );
  const upgraded = reopenTestStore(t);
  try {
    await upgraded.migrate();
    assert.deepEqual(await found(upgraded, '予約'), ['予約をお願いします']);
    assert.deepEqual(await found(upgraded, 'booking'), ['Can I change my booking?']);
    assert.deepEqual(await found(upgraded, '場'), ['駐車場'], 'a last character, by prefix');
    assert.deepEqual(await found(upgraded, 'カタカナ'), ['ｶﾀｶﾅ and 🍣'], 'half-width kana, normalised');
    assert.deepEqual(await found(upgraded, '🍣'), ['ｶﾀｶﾅ and 🍣']);
    assert.deepEqual(await found(upgraded, 'zz'), []);
    await assertStoreSound(upgraded);
  } finally {
    await upgraded.close();
  }
});

test('an import that fails half-way leaves nothing behind', async () => {
  await t.hubs.add('1', {});
  async function* failing() {
    yield [message({ createdAt: 1 })];
    throw new Error('disk on fire');
  }
  await assert.rejects(t.store.messages.importAll('1', failing(), 0), /disk on fire/);
  const rows = [];
  for await (const batch of t.store.messages.stream({ hubId: '1' })) rows.push(...batch);
  assert.equal(rows.length, 0);
  await storeMessages(t.store, '1', [message({ createdAt: 2 })]);
  await assertStoreSound(t.store);
});

test('a reader that stops early gives its connection back', async () => {
  await t.hubs.add('2', {});
  await storeMessages(
    t.store,
    '2',
    Array.from({ length: 2000 }, (_, i) => message({ lineId: `U${i % 7}`, createdAt: i })),
  );
  for (let round = 0; round < 50; round++) {
    for await (const batch of t.store.messages.stream({ hubId: '2' })) {
      assert.ok(batch.length > 0);
      break;
    }
  }
  let count = 0;
  for await (const batch of t.store.messages.stream({ hubId: '2' })) count += batch.length;
  assert.equal(count, 2000);
});

test('a long read hands the event loop back between batches', async () => {
  await t.hubs.add('3', {});
  await storeMessages(
    t.store,
    '3',
    Array.from({ length: 5000 }, (_, i) => message({ createdAt: i })),
  );
  let batchesBeforeOtherWork = 0;
  let otherWorkRan = false;
  setImmediate(() => {
    otherWorkRan = true;
  });
  for await (const _batch of t.store.messages.stream({ hubId: '3' })) {
    if (!otherWorkRan) batchesBeforeOtherWork += 1;
  }
  assert.ok(otherWorkRan);
  assert.ok(batchesBeforeOtherWork <= 2, `other work waited for ${batchesBeforeOtherWork} batches`);
});

test('concurrent live writes commit together, and a bad request fails alone', async () => {
  await t.hubs.add('4', {});
  const op = (id: string, lineId = 'Ulive') => ({
    kind: 'message' as const,
    lineId,
    sender: null,
    msg: `live ${id}`,
    contentType: 'text',
    createdAt: 1000,
    sourceId: `live:${id}`,
    sourceKind: 'user' as const,
    sourceChatId: null,
  });
  const results = await Promise.allSettled([
    t.store.messages.ingest('4', [op('a'), op('b', 'Uother')], 1),
    t.store.messages.ingest('no-such-hub', [op('c')], 1),
    t.store.messages.ingest('4', [op('a'), op('d')], 1),
  ]);
  assert.equal(results[0].status, 'fulfilled');
  assert.equal(results[1].status, 'rejected');
  assert.equal(results[2].status, 'fulfilled');
  if (results[0].status === 'fulfilled')
    assert.deepEqual(results[0].value, {
      stored: 2,
      duplicates: 0,
      removed: 0,
      contactsCreated: ['Ulive', 'Uother'],
    });
  if (results[2].status === 'fulfilled')
    assert.deepEqual(results[2].value, { stored: 1, duplicates: 1, removed: 0, contactsCreated: [] });
  const stored: string[] = [];
  for await (const batch of t.store.messages.stream({ hubId: '4' }))
    stored.push(...batch.map((row) => row.msg));
  assert.deepEqual(stored, ['live a', 'live d', 'live b']);
});

test('accounts: created once, password replaced, hubs granted once; sessions expire and end', async () => {
  for (const hubId of ['40', '7', '300']) await t.hubs.add(hubId, {});
  const first = await t.store.accounts.upsert('a@example.com', 'hash-1', 1000);
  assert.equal(first.created, true);
  const again = await t.store.accounts.upsert('a@example.com', 'hash-2', 2000);
  assert.deepEqual(again, { account: { ...first.account, passwordHash: 'hash-2' }, created: false });
  assert.deepEqual(await t.store.accounts.findByEmail('a@example.com'), again.account);
  assert.deepEqual(await t.store.accounts.findById(first.account.id), again.account);
  assert.equal(await t.store.accounts.findByEmail('b@example.com'), undefined);
  for (const hubId of ['300', '7', '40', '7']) await t.store.accounts.grantHub(first.account.id, hubId);
  assert.deepEqual(await t.store.accounts.hubsOf(first.account.id), ['7', '40', '300']);

  const session = {
    idHash: Buffer.alloc(32, 1),
    accountId: first.account.id,
    createdAt: 5000,
    expiresAt: 9000,
  };
  await t.store.sessions.create(session, 5000);
  assert.deepEqual(await t.store.sessions.find(session.idHash, 8999), session);
  assert.equal(await t.store.sessions.find(session.idHash, 9000), undefined, 'expired');
  assert.equal(await t.store.sessions.find(Buffer.alloc(32, 2), 6000), undefined);
  // Creating a session forgets the expired ones.
  const later = { ...session, idHash: Buffer.alloc(32, 3), createdAt: 10_000, expiresAt: 20_000 };
  await t.store.sessions.create(later, 10_000);
  assert.equal(await t.store.sessions.find(session.idHash, 0), undefined);
  await t.store.sessions.delete(later.idHash);
  assert.equal(await t.store.sessions.find(later.idHash, 10_001), undefined);
});

test('contacts: created once, linked, named; a LINE name never replaces one already set', async () => {
  await t.hubs.add('5', {});
  const before = await t.store.messages.versions('5');
  const first = await t.store.contacts.upsert('5', 'Ua', { vid: '42' }, 10);
  assert.deepEqual(first, { contact: { lineId: 'Ua', vid: '42', name: '' }, created: true });
  const again = await t.store.contacts.upsert('5', 'Ua', { name: 'Aiko' }, 11);
  assert.deepEqual(again, { contact: { lineId: 'Ua', vid: '42', name: 'Aiko' }, created: false });
  const fromLine = await t.store.contacts.upsert('5', 'Ua', { name: 'LINE name', onlyIfNameEmpty: true }, 12);
  assert.equal(fromLine.contact.name, 'Aiko');
  const named = await t.store.contacts.upsert('5', 'Ub', { name: 'Ben', onlyIfNameEmpty: true }, 13);
  assert.deepEqual(named.contact, { lineId: 'Ub', vid: '', name: 'Ben' });
  // Every write counts as a change of the hub's data; each that changed a contact, as a change of its
  // history: a cached answer naming the contact is not served again, whatever its range.
  const after = await t.store.messages.versions('5');
  assert.equal(after.all, before.all + 4);
  assert.equal(after.history, before.history + 3);
  assert.equal(after.appendFloor, null);
  await assert.rejects(t.store.contacts.upsert('no such hub', 'Ua', {}, 14));
});

test('answer versions: appended messages leave earlier ranges as they were; anything else changes them all', async () => {
  await t.hubs.add('7', {});
  const day = (n: number) => Date.UTC(2024, 0, n);
  const op = (id: string, createdAt: number) => ({
    kind: 'message' as const,
    lineId: 'Uv',
    sender: null,
    msg: id,
    contentType: 'text',
    createdAt,
    sourceId: `test:${id}`,
    sourceKind: null,
    sourceChatId: null,
  });
  const version = async (toMsExclusive?: number) =>
    answerVersion(await t.store.messages.versions('7'), toMsExclusive);
  await t.store.messages.ingest('7', [op('a', day(1))], 0);
  // A newer message, more than a day later: the floor moves up to it, and the first day's range is
  // stable from there on.
  await t.store.messages.ingest('7', [op('a2', day(3))], 0);
  const januaryFirst = await version(day(2));
  const whole = await version();
  assert.notEqual(januaryFirst, whole);
  await t.store.messages.ingest('7', [op('b', day(3) + 3_600_000)], 0);
  assert.equal(await version(day(2)), januaryFirst);
  assert.notEqual(await version(), whole);
  // A message a little out of order (concurrent webhooks) but after the floor is still an append.
  await t.store.messages.ingest('7', [op('b0', day(3) + 1_000)], 0);
  assert.equal(await version(day(2)), januaryFirst);
  // A range that reaches the new message changes.
  assert.notEqual(await version(day(4)), await version(day(2)));
  // An older message than the newest is a change of history: every range changes.
  await t.store.messages.ingest('7', [op('c', day(1) + 5)], 0);
  assert.notEqual(await version(day(2)), januaryFirst);
  const afterOld = await version(day(2));
  // So is a deletion, and a contact's new name.
  await t.store.messages.ingest('7', [{ kind: 'unsend', sourceId: 'test:c', at: 0 }], 0);
  const afterUnsend = await version(day(2));
  assert.notEqual(afterUnsend, afterOld);
  await t.store.contacts.upsert('7', 'Uv', { name: 'V' }, 0);
  assert.notEqual(await version(day(2)), afterUnsend);
  // A redelivery changes nothing an answer shows... and leaves earlier ranges alone.
  const settled = await version(day(2));
  await t.store.messages.ingest('7', [op('b', day(3) + 3_600_000)], 0);
  assert.equal(await version(day(2)), settled);
});

test('answer versions: concurrent webhooks just after a change of history, stored out of order, leave past ranges alone', async () => {
  await t.hubs.add('8', {});
  const now = Date.UTC(2026, 10, 26, 12);
  const op = (id: string, createdAt: number) => ({
    kind: 'message' as const,
    lineId: 'Uw',
    sender: null,
    msg: id,
    contentType: 'text',
    createdAt,
    sourceId: `test:8:${id}`,
    sourceKind: null,
    sourceChatId: null,
  });
  const version = async (toMsExclusive?: number) =>
    answerVersion(await t.store.messages.versions('8'), toMsExclusive);
  await t.store.messages.ingest('8', [op('old', Date.UTC(2024, 1, 5))], 0);
  await t.store.messages.ingest('8', [op('first', now)], 0);
  // A change of history (a contact's new name): every range changes once.
  await t.store.contacts.upsert('8', 'Uw', { name: 'W' }, 0);
  const pastDay = await version(Date.UTC(2024, 1, 6));
  // Then webhooks sent at once, each stored when its turn comes: milliseconds out of order.
  for (const [i, at] of [now + 300, now + 100, now + 200, now + 50, now - 1_000].entries()) {
    await t.store.messages.ingest('8', [op(`w${i}`, at)], 0);
    assert.equal(await version(Date.UTC(2024, 1, 6)), pastDay, `after webhook ${i}`);
  }
  // A message older than the newest by more than a few minutes is still a change of history.
  await t.store.messages.ingest('8', [op('late', now - 3_600_000)], 0);
  assert.notEqual(await version(Date.UTC(2024, 1, 6)), pastDay);
});

test('answer versions: a hub whose newest message is ahead of the webhooks arriving keeps its past ranges after the first', async () => {
  // A hub imported with messages dated later than now (a whole "today", an import ahead of the
  // clock): the webhooks arriving now are older than its newest message. The first changes every
  // range once; the rest, even a little out of order among themselves, leave yesterday alone.
  await t.hubs.add('9', {});
  const now = Date.UTC(2026, 10, 26, 3);
  const op = (id: string, createdAt: number) => ({
    kind: 'message' as const,
    lineId: 'Ux',
    sender: null,
    msg: id,
    contentType: 'text',
    createdAt,
    sourceId: `test:9:${id}`,
    sourceKind: null,
    sourceChatId: null,
  });
  const version = async (toMsExclusive?: number) =>
    answerVersion(await t.store.messages.versions('9'), toMsExclusive);
  const yesterdayEnds = Date.UTC(2026, 10, 26);
  await t.store.messages.ingest(
    '9',
    [op('yesterday', yesterdayEnds - 3_600_000), op('ahead', now + 20 * 3_600_000)],
    0,
  );
  await t.store.messages.ingest('9', [op('w0', now)], 0);
  const yesterday = await version(yesterdayEnds);
  for (const [i, at] of [now + 300, now + 100, now + 200, now + 1_000, now + 50].entries()) {
    await t.store.messages.ingest('9', [op(`w${i + 1}`, at)], 0);
    assert.equal(await version(yesterdayEnds), yesterday, `after webhook ${i + 1}`);
  }
  // The whole history still changes with each of them.
  const whole = await version();
  await t.store.messages.ingest('9', [op('w9', now + 2_000)], 0);
  assert.notEqual(await version(), whole);
});

test('answer versions (property): an answer read again under the same version is the same answer', async () => {
  // The answer cache serves the bytes it kept while an answer's version is unchanged: whatever the
  // writes (messages at any time and in any order, unsends, a contact's new name), equal versions
  // must mean equal answers. Each run on a hub of its own; the answers are the store's own reads.
  const T0 = Date.UTC(2026, 0, 10);
  const MINUTE = 60_000;
  const ends = [-8, -2, -1, 0, 1, 2, 8].map((days) => T0 + days * 86_400_000);
  const write = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('message' as const),
        minutes: fc.integer({ min: -6000, max: 6000 }),
        who: fc.integer({ min: 0, max: 2 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('unsend' as const), which: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('rename' as const), who: fc.integer({ min: 0, max: 2 }) }),
    },
  );
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 25 }), async (writes) => {
      const hubId = `90${run++}`;
      await t.hubs.add(hubId, {});
      const seen = new Map<string, string>();
      const sourceIds: string[] = [];
      const check = async () => {
        const versions = await t.store.messages.versions(hubId);
        for (const to of [...ends, undefined]) {
          const rows = [];
          for await (const batch of t.store.messages.stream({ hubId, toMsExclusive: to }))
            rows.push(...batch);
          const key = `${to}:${answerVersion(versions, to)}`;
          const answer = JSON.stringify(rows);
          const before = seen.get(key);
          if (before !== undefined)
            assert.equal(answer, before, `the answer up to ${to} changed under ${key}`);
          seen.set(key, answer);
        }
      };
      await check();
      for (const [i, w] of writes.entries()) {
        if (w.kind === 'message') {
          const sourceId = `p:${hubId}:${i}`;
          sourceIds.push(sourceId);
          await t.store.messages.ingest(
            hubId,
            [
              {
                kind: 'message',
                lineId: `U${w.who}`,
                sender: null,
                msg: `m${i}`,
                contentType: 'text',
                createdAt: T0 + w.minutes * MINUTE,
                sourceId,
                sourceKind: null,
                sourceChatId: null,
              },
            ],
            0,
          );
        } else if (w.kind === 'unsend') {
          const sourceId = sourceIds[w.which % Math.max(1, sourceIds.length)];
          if (sourceId) await t.store.messages.ingest(hubId, [{ kind: 'unsend', sourceId, at: 0 }], 0);
        } else {
          await t.store.contacts.upsert(hubId, `U${w.who}`, { name: `name ${i}` }, 0);
        }
        await check();
      }
    }),
    { numRuns: 40 },
  );
});

test('reads never see a write that has not committed', async () => {
  await t.hubs.add('6', {});
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let firstStored!: () => void;
  const stored = new Promise<void>((resolve) => {
    firstStored = resolve;
  });
  async function* slow() {
    yield [message({ lineId: 'Uslow', name: 'Slow', createdAt: 1 })];
    // Asked for the next batch: the first one is written, inside the import's transaction.
    firstStored();
    await held;
  }
  const importing = t.store.messages.importAll('6', slow(), 0);
  // The import's transaction holds a new contact and a message, not committed yet.
  await stored;
  assert.equal(await t.store.contacts.get('6', 'Uslow'), undefined);
  const versionDuring = (await t.store.messages.versions('6')).history;
  release();
  await importing;
  assert.deepEqual(await t.store.contacts.get('6', 'Uslow'), { lineId: 'Uslow', vid: '', name: 'Slow' });
  assert.equal((await t.store.messages.versions('6')).history, versionDuring + 1);
});

test('webhook outbox: a lease takes each due delivery once, soonest first, and `dueSince` only the newly due', async () => {
  await t.hubs.add('41', {});
  const endpoint = await t.store.webhooks.add({
    id: 'we_lease',
    hubId: '41',
    url: 'https://receiver.example/hooks',
    events: null,
    secretEncrypted: Buffer.from('not a real secret'),
    createdAt: 1,
  });
  await storeMessages(
    t.store,
    '41',
    Array.from({ length: 6 }, (_, i) => message({ createdAt: 1000 + i })),
  );
  // Three dispatched at 10,000 (a backlog by 20,000), three at 19,500 (new by then).
  await t.store.webhooks.dispatch(endpoint, 10_000, 3);
  await t.store.webhooks.dispatch(endpoint, 19_500, 3);
  const seqs = (leased: Array<{ seq: number }>) => leased.map((delivery) => delivery.seq);

  const fresh = await t.store.webhooks.lease(endpoint.id, 20_000, 30_000, 10, 19_000);
  assert.equal(fresh.length, 3, 'only the three due since 19,000');
  const backlog = await t.store.webhooks.lease(endpoint.id, 20_000, 30_000, 2);
  assert.equal(backlog.length, 2);
  assert.ok(Math.max(...seqs(backlog)) < Math.min(...seqs(fresh)), 'the backlog is the older changes');
  assert.deepEqual(
    seqs(backlog),
    [...seqs(backlog)].sort((a, b) => a - b),
    'soonest due first',
  );
  // Leased rows are not leased again until the lease ends; then they are.
  const rest = await t.store.webhooks.lease(endpoint.id, 20_000, 30_000, 10);
  assert.equal(rest.length, 1);
  assert.equal(new Set([...seqs(fresh), ...seqs(backlog), ...seqs(rest)]).size, 6);
  assert.equal((await t.store.webhooks.lease(endpoint.id, 29_999, 40_000, 10)).length, 0);
  const again = await Promise.all([
    t.store.webhooks.lease(endpoint.id, 30_000, 40_000, 4),
    t.store.webhooks.lease(endpoint.id, 30_000, 40_000, 4),
  ]);
  assert.equal(again.flat().length, 6, 'two leases at once take every row once');
  assert.equal(new Set(again.flat().map((delivery) => delivery.seq)).size, 6);
  // The sweep finds the endpoint once a delivery is due, and never once it is removed.
  assert.deepEqual(await t.store.webhooks.due(9_999), []);
  assert.deepEqual(await t.store.webhooks.due(10_000), [endpoint.id]);
  await t.store.webhooks.remove('41', endpoint.id, 40_000);
  assert.deepEqual(await t.store.webhooks.due(40_000), []);
});
