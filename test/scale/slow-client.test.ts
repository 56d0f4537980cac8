/** A client that stops reading an export is cut after the idle timeout, freeing its cursor. */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';

let server: TestServer;
let key: string;

before(async () => {
  server = await startTestServer({ logLevel: 'warn', idleTimeoutMs: 1000 });
  await server.hubs.add('71', {});
  key = (await server.keys.issue('71', 'read', '')).key;
  const long = 'x'.repeat(500);
  await storeMessages(
    server.store,
    '71',
    Array.from({ length: 20_000 }, (_, i) =>
      // A minute apart: a day holds 1,440 of them, so the other client's answer below is small and
      // starts well within the 1 s idle timeout even on a busy machine (all 20,000 in one day once
      // took a loaded CI machine over a second to begin, and the server rightly cut it).
      message({ lineId: `U${i % 10}`, msg: `${i} ${long}`, createdAt: i * 60_000 }),
    ),
  );
});
after(() => server?.close());

test('a stalled reader is disconnected, and the server keeps answering others', async () => {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET /api/line/71/messages?apikey=${key} HTTP/1.1\r\nHost: x\r\n\r\n`);
  // The answer's first bytes, then nothing more is read: the kernel buffers fill, the server cannot
  // write, the connection goes idle. (Waiting for the first bytes: on a loaded CI machine the answer
  // once began only after the pause below, was then read whole, and nothing was stalled.)
  const chunks: Buffer[] = [];
  chunks.push(
    await new Promise<Buffer>((resolve) =>
      socket.once('data', (chunk: Buffer) => {
        socket.pause();
        resolve(chunk);
      }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  // Now read what was sent before the server gave up: the answer stops short, and the socket ends.
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = await new Promise<boolean>((resolve) => {
    const giveUp = setTimeout(() => resolve(false), 15_000);
    // Cleared, or the timer would hold the test process open 15 s after the socket closed.
    socket.once('close', () => {
      clearTimeout(giveUp);
      resolve(true);
    });
    socket.resume();
  });
  assert.equal(ended, true, 'the server closed the stalled connection');
  const received = Buffer.concat(chunks).toString('utf8');
  assert.match(received, /^HTTP\/1\.1 200/);
  assert.doesNotMatch(received, /\]\}\]\r?\n?(0\r\n\r\n)?$/, 'the answer was cut short');
  const other = await server.request(`/api/line/71/messages?apikey=${key}&from=1970-01-01&to=1970-01-01`);
  assert.equal(other.status, 200);
  await other.arrayBuffer();
});
