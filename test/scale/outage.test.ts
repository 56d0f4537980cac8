/**
 * PostgreSQL unreachable (simulated by cutting a TCP proxy between chatlog and the database):
 * answers are 503 `unavailable` with Retry-After, /readyz fails while /healthz answers, webhooks
 * are refused with 503 so LINE redelivers them, and the node serves again once the database is back.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSecretBox } from '../../src/lib/secrets.js';
import { HubService } from '../../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../../src/modules/keys/keys.usecases.js';
import type { PostgresStore } from '../../src/store/postgres/postgres.store.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { freePort, TEST_DATABASE_URL, TEST_SECRET, testPostgresStore, waitForStderr } from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
const CHANNEL_SECRET = 'outage-channel-secret-0001';
const schema = `chatlog_test_outage_${process.pid}`;
const target = new URL(TEST_DATABASE_URL);

/** A TCP proxy to PostgreSQL that the test can cut and restore. */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  constructor(readonly port: number) {}
  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
  }
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

let proxy: CuttableProxy;
let node: ChildProcess;
let url: string;
let key: string;
let store: PostgresStore;

before(async () => {
  store = testPostgresStore({ schema });
  await store.migrate();
  const secrets = createSecretBox(TEST_SECRET);
  await new HubService(store, secrets).add('41', { lineChannelSecret: CHANNEL_SECRET });
  key = (await new KeyService(store, secrets).issue('41', 'read', '')).key;

  proxy = new CuttableProxy(await freePort());
  await proxy.open();
  const viaProxy = new URL(TEST_DATABASE_URL);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  node = spawn(process.execPath, [BIN, 'serve', '--workers', '1', '--port', String(port)], {
    env: {
      ...process.env,
      DATABASE_URL: viaProxy.toString(),
      CHATLOG_PG_SCHEMA: schema,
      CHATLOG_PG_CONNECT_TIMEOUT_MS: '1000',
      CHATLOG_PG_STATEMENT_TIMEOUT_MS: '2000',
      CHATLOG_SECRET: TEST_SECRET,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForStderr(node, 'listening on');
});

after(async () => {
  await new Promise((resolve) => {
    node.once('exit', resolve);
    node.kill('SIGTERM');
  });
  await proxy.cut().catch(() => undefined);
  await store.dropSchema();
  await store.close();
});

test('503 while the database is away, and serving again without a restart when it is back', async () => {
  const read = () => fetch(`${url}/api/line/41/messages?apikey=${key}`);
  // A short range (read by time) and the whole hub (walked by contact): both stream pools in use.
  assert.equal(
    (await fetch(`${url}/api/line/41/messages?apikey=${key}&from=2020-01-01&to=2020-01-01`)).status,
    200,
  );
  assert.equal((await read()).status, 200);

  await proxy.cut();
  const started = Date.now();
  const refused = await read();
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('retry-after'), '2');
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'unavailable');
  assert.ok(Date.now() - started < 10_000, 'answered within the timeouts');
  assert.equal((await fetch(`${url}/readyz`)).status, 503);
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  const raw = body([messageEvent({ id: 'during-outage', type: 'text', text: 'LINE will redeliver this' })]);
  const webhook = await fetch(`${url}/webhooks/line/41`, {
    method: 'POST',
    headers: signed(CHANNEL_SECRET, raw),
    body: raw,
  });
  assert.equal(webhook.status, 503, 'a webhook that cannot be stored is refused so that LINE redelivers it');

  await proxy.open();
  let status = 0;
  for (let i = 0; i < 50 && status !== 200; i++) {
    status = (await read()).status;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(status, 200);
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  // The redelivery after the outage is stored.
  assert.equal(
    (
      await fetch(`${url}/webhooks/line/41`, {
        method: 'POST',
        headers: signed(CHANNEL_SECRET, raw),
        body: raw,
      })
    ).status,
    200,
  );
});
