/**
 * kill -9 in the middle of work: nothing acknowledged is lost, nothing half-written appears, the
 * store passes its integrity check and the next start serves.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { MessageRow } from '../../src/store/store.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import {
  assertStoreSound,
  createTestStore,
  freePort,
  reopenTestStore,
  type TestStore,
  waitForStderr,
} from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
const CHANNEL_SECRET = 'crash-test-channel-secret-0001';
let t: TestStore;

function env(port: number) {
  return { ...process.env, ...t.env, PORT: String(port), LOG_LEVEL: 'silent' };
}

async function startServe(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--workers', '1'], {
    env: env(port),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForStderr(child, 'listening on');
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function readAll(hubId: string): Promise<MessageRow[]> {
  const store = reopenTestStore(t);
  try {
    await store.migrate();
    await assertStoreSound(store);
    const rows: MessageRow[] = [];
    for await (const batch of store.messages.stream({ hubId })) rows.push(...batch);
    return rows;
  } finally {
    await store.close();
  }
}

before(async () => {
  t = await createTestStore();
  await t.hubs.add('1001', { lineChannelSecret: CHANNEL_SECRET });
  await t.hubs.add('1002', {});
});
after(() => t.close());

test('kill -9 during a stream of webhook requests loses nothing that was answered 200', async () => {
  const port = await freePort();
  const server = await startServe(port);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const acknowledged: number[] = [];
  let next = 0;
  let stop = false;
  const send = (n: number) =>
    new Promise<number>((resolve) => {
      // Two messages per request: after the crash, a request is there whole or not at all.
      const raw = body([
        messageEvent(
          { id: `crash-${n}-a`, type: 'text', text: `request ${n} a` },
          { timestamp: 1_700_000_000_000 + n },
        ),
        messageEvent(
          { id: `crash-${n}-b`, type: 'text', text: `request ${n} b` },
          { timestamp: 1_700_000_000_000 + n },
        ),
      ]);
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/webhooks/line/1001',
          method: 'POST',
          agent,
          headers: { ...signed(CHANNEL_SECRET, raw), 'content-length': Buffer.byteLength(raw) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(raw);
    });
  const sender = async () => {
    while (!stop) {
      const n = next++;
      if ((await send(n)) === 200) acknowledged.push(n);
    }
  };
  const senders = Array.from({ length: 16 }, sender);
  while (acknowledged.length < 300) await new Promise((resolve) => setTimeout(resolve, 5));
  await killHard(server);
  stop = true;
  await Promise.all(senders);
  agent.destroy();

  const rows = await readAll('1001');
  const stored = new Set(rows.map((r) => r.msg));
  for (const n of acknowledged) {
    assert.ok(
      stored.has(`request ${n} a`) && stored.has(`request ${n} b`),
      `acknowledged request ${n} was lost`,
    );
  }
  for (let n = 0; n < next; n++) {
    assert.equal(stored.has(`request ${n} a`), stored.has(`request ${n} b`), `request ${n} is half-stored`);
  }

  const restarted = await startServe(port);
  try {
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
  } finally {
    restarted.kill('SIGTERM');
    await new Promise((resolve) => restarted.once('exit', resolve));
  }
});

test('kill -9 during an import leaves nothing of it behind', async () => {
  const file = path.join(t.dir, 'big.ndjson');
  const line = (i: number) =>
    JSON.stringify({
      lineId: `U${i % 50}`,
      msg: `imported ${i} ${'x'.repeat(200)}`,
      createdAt: new Date(1_600_000_000_000 + i).toISOString(),
    });
  fs.writeFileSync(file, `${Array.from({ length: 200_000 }, (_, i) => line(i)).join('\n')}\n`);
  const child = spawn(process.execPath, [BIN, 'import', '1002', file], {
    env: env(0),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('import: storing 80%')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`import ended before it could be killed (${code}): ${seen}`)),
    );
  });
  await killHard(child);
  assert.deepEqual(await readAll('1002'), []);
});
