/**
 * PostgreSQL's path for groups of webhook messages (src/store/postgres/postgres.fast-ingest.ts):
 * a group over several hubs is stored by it, each hub numbered and told apart; a group it cannot
 * store goes the shared way, and an unexpected cause is told to the operator once a minute at
 * most, with how many groups. PostgreSQL pass only (it opens a test store for its schema).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IngestOperation } from '../../src/store/store.js';
import { createTestStore, TEST_STORE_KIND, testPostgresStore } from '../helpers.js';

const message = (sourceId: string, createdAt = 1_700_000_000_000): IngestOperation => ({
  kind: 'message',
  lineId: 'Ufast',
  sender: null,
  msg: `fast ${sourceId}`,
  contentType: 'text',
  createdAt,
  sourceId,
  sourceKind: 'user',
  sourceChatId: null,
});

test('a group over several hubs takes the fast path; one it cannot store goes the shared way and is told', {
  skip: TEST_STORE_KIND !== 'postgres' && 'PostgreSQL pass only',
}, async () => {
  const t = await createTestStore();
  const told: Array<{ code: string | undefined; groups: number }> = [];
  const store = testPostgresStore({
    connectionString: t.env.DATABASE_URL ?? '',
    schema: t.env.CHATLOG_PG_SCHEMA,
    onFastPathFailure: (error, groups) => told.push({ code: (error as { code?: string }).code, groups }),
  });
  try {
    for (const hubId of ['11', '12', '13']) await store.hubs.upsert(hubId, {}, 1);
    const before = await Promise.all(['11', '12', '13'].map((hubId) => store.changes.position(hubId)));
    // Sent in one turn: one group, three hubs (two requests for the second).
    const outcomes = await Promise.all([
      store.messages.ingest('12', [message('line:a'), message('line:b')], 1),
      store.messages.ingest('11', [message('line:a')], 1),
      store.messages.ingest('12', [message('line:b'), message('line:c')], 1),
      store.messages.ingest('13', [message('line:a')], 1),
    ]);
    assert.deepEqual(
      outcomes.map((o) => [o.stored, o.duplicates, o.contactsCreated]),
      [
        [2, 0, ['Ufast']],
        [1, 0, ['Ufast']],
        [1, 1, []],
        [1, 0, ['Ufast']],
      ],
    );
    assert.equal(store.fastPathFallbacks, 0, 'stored by the fast path');
    const after = await Promise.all(['11', '12', '13'].map((hubId) => store.changes.position(hubId)));
    // Every operation is numbered (a redelivery leaves a gap, which the feed allows).
    assert.deepEqual(
      after.map((p, i) => (p?.lastSeq ?? 0) - (before[i]?.lastSeq ?? 0)),
      [1, 4, 1],
    );
    for (const [hubId, texts] of [
      ['11', ['fast line:a']],
      ['12', ['fast line:a', 'fast line:b', 'fast line:c']],
      ['13', ['fast line:a']],
    ] as const) {
      const page = await store.changes.page(hubId, 0, 10);
      assert.deepEqual(
        page.map((c) => (c.type === 'message.created' ? c.message.msg : c.type)),
        texts,
        `hub ${hubId}`,
      );
    }

    // An empty request (the ingest API's `[]`) has nothing for either path, and is no failure.
    assert.deepEqual(await store.messages.ingest('11', [], 1), {
      stored: 0,
      duplicates: 0,
      removed: 0,
      contactsCreated: [],
    });
    assert.equal(store.fastPathFallbacks, 0);

    // A time beyond what the column holds fails the fast path for a cause nobody expects, and the
    // shared way fails the request alone: told once, then counted until a minute has passed.
    const tooLate = 2 ** 63;
    for (let i = 0; i < 3; i++) {
      await assert.rejects(store.messages.ingest('11', [message(`line:late${i}`, tooLate)], 1));
    }
    assert.equal(store.fastPathFallbacks, 3);
    assert.deepEqual(told, [{ code: '22003', groups: 1 }]);
    // A request for a hub that does not exist is expected: counted, not told.
    await assert.rejects(store.messages.ingest('99', [message('line:z')], 1));
    assert.equal(store.fastPathFallbacks, 4);
    assert.equal(told.length, 1);
  } finally {
    await store.close();
    await t.close();
  }
});
