/**
 * Long polls woken across nodes through PostgreSQL's LISTEN/NOTIFY: two nodes' listeners on one
 * database, a write committed by a third connection. Woken at commit, never for a rollback, never
 * by another schema's changes, and again after the listening connection is cut.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { postgresSql } from '../../src/store/postgres/postgres.sql.js';
import { announceChanges, PostgresWakeups } from '../../src/store/postgres/postgres.wakeups.js';
import { TEST_DATABASE_URL } from '../helpers.js';

const schema = `wakeups_${process.pid}`;
let nodeA: PostgresWakeups;
let nodeB: PostgresWakeups;
let writer: pg.Client;

before(async () => {
  nodeA = new PostgresWakeups({ connectionString: TEST_DATABASE_URL, schema });
  nodeB = new PostgresWakeups({ connectionString: TEST_DATABASE_URL, schema });
  await Promise.all([nodeA.start(), nodeB.start()]);
  writer = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await writer.connect();
});
after(async () => {
  await Promise.all([nodeA.close(), nodeB.close(), writer.end()]);
});

async function write(hubIds: string[], outcome: 'COMMIT' | 'ROLLBACK', inSchema = schema): Promise<void> {
  await writer.query('BEGIN');
  await announceChanges(postgresSql(writer), inSchema, hubIds);
  await writer.query(outcome);
}

test('a write committed on one node wakes the readers of that hub on every node, at commit', async () => {
  const a = nodeA.subscribe('7');
  const b = nodeB.subscribe('7');
  const elsewhere = nodeA.subscribe('8');
  const started = Date.now();
  const woken = Promise.all([a.wait(10_000), b.wait(10_000)]);
  await write(['7'], 'COMMIT');
  assert.deepEqual(await woken, [true, true]);
  assert.ok(Date.now() - started < 2_000, `woken after ${Date.now() - started} ms`);
  assert.equal(await elsewhere.wait(200), false);
  for (const waiter of [a, b, elsewhere]) waiter.cancel();
});

test('a rolled-back write wakes nobody, nor does another schema', async () => {
  const a = nodeA.subscribe('7');
  await write(['7'], 'ROLLBACK');
  await write(['7'], 'COMMIT', `${schema}_other`);
  assert.equal(await a.wait(400), false);
  a.cancel();
});

test('when the listening connection is cut, its readers look again and it listens again', async () => {
  const a = nodeA.subscribe('9');
  const waiting = a.wait(10_000);
  await writer.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'chatlog listen' AND pid <> pg_backend_pid()",
  );
  assert.equal(await waiting, true, 'woken to look again');
  a.cancel();
  // Listening again within the backoff: a later commit wakes a new reader.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const again = nodeA.subscribe('9');
  const woken = again.wait(10_000);
  await write(['9'], 'COMMIT');
  assert.equal(await woken, true);
  again.cancel();
});
