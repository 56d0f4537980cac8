/** `chatlog serve --workers 2`: two processes share the port, the store and the rate-limit counters. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestStore, freePort, type TestStore, waitForStderr } from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
let t: TestStore;

before(async () => {
  t = await createTestStore();
  await t.hubs.add('61', {});
});
after(() => t.close());

/** A request on a new connection each time, so the kernel spreads them over the workers. */
function get(port: number, pathAndQuery: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(
        { host: '127.0.0.1', port, path: pathAndQuery, agent: false, headers: { connection: 'close' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      )
      .on('error', reject);
  });
}

test('workers share the rate limit of a key, and all stop on SIGTERM', async () => {
  const { key, summary } = await t.keys.issue('61', 'read', '');
  await t.keys.setRateLimit(summary.id, { requests: 5, perSeconds: 60 });
  const port = await freePort();
  const server = spawn(process.execPath, [BIN, 'serve', '--workers', '2', '--port', String(port)], {
    env: { ...process.env, ...t.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForStderr(server, 'listening on');
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push(await get(port, `/api/line/61/messages?apikey=${key}`));
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
  } finally {
    server.kill('SIGTERM');
  }
  assert.equal(await exited, 0);
});
