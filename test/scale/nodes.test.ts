/**
 * Several nodes over one PostgreSQL and one Redis behave as one: migrations are safe when nodes
 * start together, a revocation through one is seen by the other at its next request, a rate limit
 * is shared, and what one node's webhook stored the other reads.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSecretBox } from '../../src/lib/secrets.js';
import { HubService } from '../../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../../src/modules/keys/keys.usecases.js';
import type { PostgresStore } from '../../src/store/postgres/postgres.store.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { freePort, TEST_SECRET, testPostgresEnv, testPostgresStore, waitForStderr } from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
const REDIS_URL = process.env.CHATLOG_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CHANNEL_SECRET = 'two-nodes-channel-secret-01';
const schema = `chatlog_test_nodes_${process.pid}`;
let store: PostgresStore;
let keys: KeyService;
const nodes: ChildProcess[] = [];
const urls: string[] = [];

async function startNode(): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--workers', '1', '--port', String(port)], {
    env: {
      ...process.env,
      ...testPostgresEnv(schema),
      REDIS_URL,
      CHATLOG_SECRET: TEST_SECRET,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  nodes.push(child);
  await waitForStderr(child, 'listening on');
  return `http://127.0.0.1:${port}`;
}

before(async () => {
  // Both nodes start on an empty schema at the same moment: both try to migrate.
  urls.push(...(await Promise.all([startNode(), startNode()])));
  store = testPostgresStore({ schema });
  const secrets = createSecretBox(TEST_SECRET);
  await new HubService(store, secrets).add('31', { lineChannelSecret: CHANNEL_SECRET });
  keys = new KeyService(store, secrets);
});

after(async () => {
  await Promise.all(
    nodes.map(
      (child) =>
        new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGTERM');
        }),
    ),
  );
  await store.dropSchema();
  await store.close();
});

const get = (node: number, pathAndQuery: string) => fetch(`${urls[node] ?? ''}${pathAndQuery}`);

test('both nodes came up on one schema, migrated once', async () => {
  assert.equal(await store.ready(), true);
  for (const node of [0, 1]) assert.equal((await get(node, '/readyz')).status, 200);
});

test('migrations go to the primary, whatever the read replica is', async () => {
  // A replica that refuses every connection: a migration there would fail (or, on a writable
  // replica, change the wrong database).
  const own = `chatlog_test_replica_${process.pid}`;
  const node = testPostgresStore({
    readConnectionString: 'postgres://postgres@127.0.0.1:9/nowhere',
    schema: own,
  });
  try {
    await node.migrate();
    const primary = testPostgresStore({ schema: own });
    try {
      assert.equal(await primary.ready(), true);
    } finally {
      await primary.dropSchema();
      await primary.close();
    }
  } finally {
    await node.close();
  }
});

test('a key revoked through one node answers 401 on the other at its next request', async () => {
  const { key, summary } = await keys.issue('31', 'read', 'rotating');
  assert.equal((await get(1, `/api/line/31/messages?apikey=${key}`)).status, 200);
  assert.equal((await get(0, `/api/line/31/messages?apikey=${key}`)).status, 200);
  // Revoked through the command line of "node 0" (same database).
  const revoked = spawn(process.execPath, [BIN, 'key', 'revoke', summary.id], {
    env: {
      ...process.env,
      ...testPostgresEnv(schema),
      CHATLOG_SECRET: TEST_SECRET,
    },
  });
  assert.equal(await new Promise((resolve) => revoked.once('exit', resolve)), 0);
  assert.equal((await get(1, `/api/line/31/messages?apikey=${key}`)).status, 401);
  assert.equal((await get(0, `/api/line/31/messages?apikey=${key}`)).status, 401);
});

test('a rate limit is shared by the nodes', async () => {
  const { key, summary } = await keys.issue('31', 'read', 'limited');
  await keys.setRateLimit(summary.id, { requests: 4, perSeconds: 60 });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await get(i % 2, `/api/line/31/messages?apikey=${key}`)).status);
  assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  const last = await get(1, `/api/line/31/messages?apikey=${key}`);
  assert.equal(last.headers.get('ratelimit-policy'), '"default";q=4;w=60');
  assert.match(last.headers.get('retry-after') ?? '', /^\d+$/);
});

test("one node's webhook and the other node's read agree", async () => {
  const { key } = await keys.issue('31', 'read', 'reader');
  const raw = body([messageEvent({ id: 'two-nodes-1', type: 'text', text: 'stored by node 0' })]);
  const stored = await fetch(`${urls[0]}/webhooks/line/31`, {
    method: 'POST',
    headers: signed(CHANNEL_SECRET, raw),
    body: raw,
  });
  assert.equal(stored.status, 200);
  const answer = (await (await get(1, `/api/line/31/messages?apikey=${key}`)).json()) as Array<{
    messages: Array<{ msg: string }>;
  }>;
  assert.deepEqual(
    answer.flatMap((c) => c.messages.map((m) => m.msg)),
    ['stored by node 0'],
  );
});
