/** SIGTERM: stop accepting, let an in-flight streaming export finish, close the store, exit 0. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  createTestStore,
  freePort,
  message,
  storeMessages,
  type TestStore,
  waitForStderr,
} from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
const COUNT = 30_000;
let t: TestStore;
let key: string;

before(async () => {
  t = await createTestStore();
  await t.hubs.add('51', {});
  key = (await t.keys.issue('51', 'read', '')).key;
  const long = 'この文章は長めのメッセージです。'.repeat(10);
  await storeMessages(
    t.store,
    '51',
    Array.from({ length: COUNT }, (_, i) =>
      message({ lineId: `U${i % 40}`, msg: `${i} ${long}`, createdAt: i }),
    ),
  );
});
after(() => t.close());

test('an export in flight when SIGTERM arrives completes, new connections are refused, exit code 0', async () => {
  const port = await freePort();
  const server = spawn(process.execPath, [BIN, 'serve', '--workers', '1', '--port', String(port)], {
    env: { ...process.env, ...t.env, LOG_LEVEL: 'silent', CHATLOG_SHUTDOWN_GRACE_MS: '30000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForStderr(server, 'listening on');
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));

  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${port}/api/line/51/messages?apikey=${key}`, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', (first: Buffer) => {
          chunks.push(first);
          // Hold the answer half-read while the server is told to stop.
          res.pause();
          server.kill('SIGTERM');
          void (async () => {
            // The signal is handled at the server's next turn, a moment later on a busy machine:
            // from then on, no new connection is taken.
            let refused = false;
            for (const deadline = Date.now() + 15_000; !refused && Date.now() < deadline; ) {
              await new Promise((wait) => setTimeout(wait, 100));
              refused = await fetch(`http://127.0.0.1:${port}/healthz`).then(
                () => false,
                () => true,
              );
            }
            assert.ok(refused, 'no new connections while draining');
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', resolve);
            res.on('error', reject);
            res.resume();
          })().catch(reject);
        });
      })
      .on('error', reject);
  });
  await done;
  const contacts = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ messages: unknown[] }>;
  assert.equal(
    contacts.reduce((n, c) => n + c.messages.length, 0),
    COUNT,
  );
  assert.equal(await exited, 0);
});

test('an export still running when the grace period ends is cut, and the server still exits 0', async () => {
  const port = await freePort();
  const server = spawn(process.execPath, [BIN, 'serve', '--workers', '1', '--port', String(port)], {
    env: { ...process.env, ...t.env, LOG_LEVEL: 'silent', CHATLOG_SHUTDOWN_GRACE_MS: '1000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForStderr(server, 'listening on');
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  const request = http.get(`http://127.0.0.1:${port}/api/line/51/messages?apikey=${key}`, (res) => {
    res.once('data', () => {
      res.pause(); // and never read again
      server.kill('SIGTERM');
    });
  });
  request.on('error', () => undefined);
  const started = Date.now();
  assert.equal(await exited, 0);
  assert.ok(Date.now() - started < 15_000);
  request.destroy();
});
