/**
 * The group commit when its transaction is lost under it: a request fails and even its savepoint
 * cannot be rolled back (SQLite undid the whole transaction after a disk error, say). The group must
 * fail whole, with the first error, rather than go on outside any transaction.
 */
// sqlite-only: drives applyGroup on a SQLite connection whose savepoint rollback is made to fail

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FeedClock } from '../../src/store/sql/changes.js';
import type { Transaction } from '../../src/store/sql/executor.js';
import { applyGroup, type IngestRequest } from '../../src/store/sql/ingest.js';
import { migrateSchema } from '../../src/store/sql/schema.js';
import { openDatabase } from '../../src/store/sqlite/sqlite.driver.js';
import { SQLITE_SEARCH } from '../../src/store/sqlite/sqlite.search.js';
import { sqliteSql } from '../../src/store/sqlite/sqlite.sql.js';
import { SQLITE_TYPES } from '../../src/store/sqlite/sqlite.store.js';

function message(hubId: string, sourceId: string): IngestRequest {
  return {
    hubId,
    now: 1,
    operations: [
      {
        kind: 'message',
        lineId: 'U1',
        sender: null,
        msg: 'hello',
        contentType: 'text',
        createdAt: 1,
        sourceId,
        sourceKind: 'user',
        sourceChatId: null,
      },
    ],
  };
}

async function lockedClock(tx: Transaction): Promise<FeedClock> {
  const clock = new FeedClock(tx);
  await clock.lock(['1', '2']);
  return clock;
}

test('a request whose savepoint cannot be undone fails the whole group with its own error', async () => {
  const db = openDatabase(':memory:');
  db.pragma('foreign_keys = ON');
  const tx = sqliteSql(db);
  db.exec('BEGIN');
  await migrateSchema(tx, SQLITE_TYPES, 'the test database');
  await tx.run("INSERT INTO hubs (id, created_at) VALUES ('1', 0)");
  db.exec('COMMIT');

  // Normally a bad request (a hub that does not exist) fails alone.
  db.exec('BEGIN');
  const outcomes = await applyGroup(tx, await lockedClock(tx), SQLITE_SEARCH, [
    message('2', 'a'),
    message('1', 'b'),
  ]);
  db.exec('COMMIT');
  assert.match(String((outcomes[0] as { failed: unknown }).failed), /FOREIGN KEY/);
  assert.equal((outcomes[1] as { stored: number }).stored, 1);

  // When its savepoint cannot be undone, nothing of the group goes on.
  const lost: Transaction = {
    ...tx,
    exec: async (text) => {
      if (text.startsWith('ROLLBACK TO')) throw new Error('disk I/O error');
      await tx.exec(text);
    },
  };
  db.exec('BEGIN');
  await assert.rejects(
    applyGroup(lost, await lockedClock(lost), SQLITE_SEARCH, [message('2', 'c'), message('1', 'd')]),
    /FOREIGN KEY/,
  );
  db.exec('ROLLBACK');
  assert.deepEqual(db.prepare('SELECT source_id FROM messages ORDER BY id').pluck().all(), ['b']);
  db.close();
});
