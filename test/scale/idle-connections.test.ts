/**
 * 1,000 connections that hold the server without finishing a request: some send nothing, some
 * send their headers a byte at a time, some their body a byte at a time (never idle, so the idle
 * timeout alone would not end them). Meanwhile other clients are served, and each of the 1,000 is
 * closed by its timeout (headers, whole request, or idle) without the server losing anything.
 */
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

let server: TestServer;
let port: number;

/** 1,000, or fewer when this process may not open two sockets for each (its own end and the server's). */
function connectionCount(): number {
  const limit = Number(execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim());
  return Number.isFinite(limit) ? Math.min(1000, Math.floor((limit - 200) / 2)) : 1000;
}

before(async () => {
  server = await startTestServer({
    logLevel: 'error',
    idleTimeoutMs: 3000,
    headersTimeoutMs: 1000,
    requestTimeoutMs: 2000,
  });
  port = Number(new URL(server.url).port);
  await server.hubs.add('4242', { lineChannelSecret: 'idle-connections-channel-secret' });
});
after(() => server?.close());

type Kind = 'silent' | 'slow-headers' | 'slow-body';

interface Held {
  kind: Kind;
  closed: Promise<{ answer: string; bytesSent: number }>;
  stop(): void;
}

function hold(kind: Kind): Held {
  // allowHalfOpen: the client keeps its own side open after the server's answer, as a hostile one would.
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  let answer = '';
  let bytesSent = 0;
  let timer: NodeJS.Timeout | undefined;
  const trickle = (text: string) => {
    let i = 0;
    timer = setInterval(() => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(text[i % text.length] ?? ' ');
      bytesSent += 1;
      i += 1;
    }, 150);
  };
  socket.on('connect', () => {
    if (kind === 'slow-headers') {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      trickle('X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    } else if (kind === 'slow-body') {
      socket.write(
        'POST /webhooks/line/4242 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'X-Line-Signature: c2lnbmF0dXJl\r\nContent-Length: 100000\r\n\r\n',
      );
      trickle('{"events":[]}');
    }
  });
  socket.on('data', (chunk) => {
    answer += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  // The server ended it: its FIN arrived (the client keeps its own side open), or the socket died.
  const closed = new Promise<{ answer: string; bytesSent: number }>((resolve) => {
    const done = () => {
      clearInterval(timer);
      resolve({ answer, bytesSent });
    };
    socket.once('end', done);
    socket.once('close', done);
  });
  return { kind, closed, stop: () => socket.destroy() };
}

test('1,000 connections that never finish a request: others are served, and each is closed by its timeout', async (t) => {
  const count = connectionCount();
  const kinds: Kind[] = ['silent', 'slow-headers', 'slow-body'];
  const held = Array.from({ length: count }, (_, i) => hold(kinds[i % 3] as Kind));
  try {
    // Let them all connect and start trickling, then ask as ordinary clients.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const served = await Promise.all(
      Array.from({ length: 20 }, () => rawRequest(server.url, 'GET', '/healthz', { connection: 'close' })),
    );
    assert.deepEqual(
      served.map((r) => r.status),
      Array(20).fill(200),
    );

    const deadline = new Promise<'deadline'>((resolve) =>
      setTimeout(() => resolve('deadline'), 20_000).unref(),
    );
    const outcomes = await Promise.race([Promise.all(held.map((h) => h.closed)), deadline]);
    assert.notEqual(outcomes, 'deadline', 'some connections were still open 20 s later');
    if (outcomes === 'deadline') return;
    for (const [i, outcome] of outcomes.entries()) {
      const kind = held[i]?.kind;
      // A request that never arrived whole is refused with 408 (or the connection simply closed).
      if (outcome.answer !== '')
        assert.match(outcome.answer, /^HTTP\/1\.1 408 /, `${kind}: ${outcome.answer}`);
      if (kind === 'slow-body') assert.ok(outcome.bytesSent < 100_000);
    }
    // And the server let go of them all: none is left half-open on its side.
    let open = await server.openConnections();
    for (let i = 0; i < 10 && open > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      open = await server.openConnections();
    }
    assert.equal(open, 0, 'connections the server still holds');
    const trickled = outcomes.filter((o, i) => held[i]?.kind !== 'silent' && o.bytesSent > 3);
    assert.ok(trickled.length > 0, 'the slow clients kept sending past the idle checks');

    // And the server is as it was.
    assert.equal((await rawRequest(server.url, 'GET', '/healthz', { connection: 'close' })).status, 200);
    t.diagnostic(`${count} held connections, all closed by the server's timeouts`);
  } finally {
    for (const h of held) h.stop();
  }
});

test('the timeouts are settings: 15 s for headers and 120 s for a whole request by default, headers never longer', () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.headersTimeoutMs, defaults.requestTimeoutMs], [15_000, 120_000]);
  const set = loadConfig({ CHATLOG_HEADERS_TIMEOUT_MS: '2000', CHATLOG_REQUEST_TIMEOUT_MS: '3000' });
  assert.deepEqual([set.headersTimeoutMs, set.requestTimeoutMs], [2000, 3000]);
  assert.throws(
    () => loadConfig({ CHATLOG_HEADERS_TIMEOUT_MS: '5000', CHATLOG_REQUEST_TIMEOUT_MS: '3000' }),
    /must not be longer than CHATLOG_REQUEST_TIMEOUT_MS/,
  );
  assert.throws(() => loadConfig({ CHATLOG_REQUEST_TIMEOUT_MS: 'soon' }), /whole number/);
});
