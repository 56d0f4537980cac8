import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import {
  attemptDelivery,
  endpointAgent,
  RETRY_DELAYS_MS,
  retryDelayMs,
} from '../../../src/modules/webhooks/webhooks.delivery.js';
import { newWebhookSecret } from '../../../src/modules/webhooks/webhooks.signature.js';

/** A receiver that answers as its path says, and checks every delivery with the standardwebhooks library. */
const secret = newWebhookSecret();
const received: Array<{ path: string; verified: boolean; id: string | undefined }> = [];
let server: http.Server;
let base: string;

before(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        new Webhook(secret).verify(body, request.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const path = request.url ?? '';
      received.push({ path, verified, id: request.headers['webhook-id'] as string | undefined });
      if (path === '/ok') response.writeHead(204).end();
      else if (path === '/gone') response.writeHead(410).end();
      else if (path === '/fail') response.writeHead(500).end('no');
      else if (path === '/redirect') response.writeHead(302, { Location: '/ok' }).end();
      else if (path === '/slow') setTimeout(() => response.writeHead(200).end(), 1_000);
      else if (path === '/big') response.writeHead(200).end(Buffer.alloc(1024 * 1024));
      else response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const body = JSON.stringify({
  type: 'message.created',
  timestamp: '2026-11-23T00:00:00.000Z',
  data: { seq: '1' },
});
const open = { policy: { allowPrivate: true }, timeoutMs: 300 };

async function deliver(path: string, options = open) {
  received.length = 0;
  return attemptDelivery({ url: `${base}${path}`, secret }, { id: '42:1', body }, options);
}

test('a 2xx answer is delivered, and the receiver verifies the signature with the standardwebhooks library', async () => {
  assert.deepEqual(await deliver('/ok'), { outcome: 'delivered', status: 204 });
  assert.deepEqual(received, [{ path: '/ok', verified: true, id: '42:1' }]);
  assert.deepEqual(await deliver('/big'), { outcome: 'delivered', status: 200 });
});

test('410 asks to be disabled; another status, a redirect or a timeout is a failure to retry', async () => {
  assert.deepEqual(await deliver('/gone'), { outcome: 'gone', status: 410 });
  assert.deepEqual(await deliver('/fail'), { outcome: 'failed', status: 500, reason: 'answered 500' });
  assert.deepEqual(await deliver('/redirect'), {
    outcome: 'failed',
    status: 302,
    reason: 'a redirect (never followed)',
  });
  assert.deepEqual(
    received.map((r) => r.path),
    ['/redirect'],
    'the redirect was not followed',
  );
  assert.deepEqual(await deliver('/slow'), { outcome: 'failed', reason: 'no answer within 0.3 s' });
});

test('an address the URL rules refuse is never connected to', async () => {
  const result = await deliver('/ok', { ...open, policy: { allowPrivate: false } });
  assert.equal(result.outcome, 'failed');
  assert.match((result as { reason: string }).reason, /127\.0\.0\.1 is a private or loopback address/);
  assert.deepEqual(received, []);
  const closed = await attemptDelivery({ url: 'http://127.0.0.1:1/', secret }, { id: '42:1', body }, open);
  assert.match((closed as { reason: string }).reason, /could not connect \(ECONNREFUSED\)/);
});

test('retries come after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±20 %), then never', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 7 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (n, r) => {
        const delay = retryDelayMs(n, () => r) ?? -1;
        const base = RETRY_DELAYS_MS[n - 1] ?? 0;
        return delay >= base * 0.8 - 1 && delay <= base * 1.2 + 1;
      },
    ),
  );
  assert.equal(retryDelayMs(8), undefined);
  assert.deepEqual(
    RETRY_DELAYS_MS,
    [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  );
});

test('with an endpoint agent, attempts share a kept connection and each is still signed and checked', async () => {
  const agent = endpointAgent(base, 4);
  const sockets = new Set<unknown>();
  const count = (socket: unknown) => sockets.add(socket);
  server.on('connection', count);
  try {
    received.length = 0;
    for (const id of ['42:1', '42:2', '42:3']) {
      const result = await attemptDelivery({ url: `${base}/ok`, secret }, { id, body }, { ...open, agent });
      assert.deepEqual(result, { outcome: 'delivered', status: 204 });
    }
    assert.deepEqual(
      received.map((r) => [r.id, r.verified]),
      [
        ['42:1', true],
        ['42:2', true],
        ['42:3', true],
      ],
    );
    assert.equal(sockets.size, 1, 'one connection for the three attempts');
    // The name now resolves to a metadata address: refused before anything is sent, kept
    // connection or not.
    const port = new URL(base).port;
    let answer = ['127.0.0.1'];
    const resolve = async () => answer;
    const named = { url: `http://receiver.test:${port}/ok`, secret };
    assert.equal(
      (await attemptDelivery(named, { id: '42:4', body }, { ...open, agent, resolve })).outcome,
      'delivered',
    );
    answer = ['169.254.169.254'];
    received.length = 0;
    const refused = await attemptDelivery(named, { id: '42:5', body }, { ...open, agent, resolve });
    assert.equal(refused.outcome, 'failed');
    assert.match(
      (refused as { reason: string }).reason,
      /receiver\.test: 169\.254\.169\.254 is a link-local, metadata/,
    );
    assert.deepEqual(received, []);
  } finally {
    server.off('connection', count);
    agent.destroy();
  }
});

test('a kept connection the receiver closed meanwhile is tried again once on a new one', async () => {
  // Answers the first request of each connection and keeps it open; a second request on the
  // same connection is dropped unread (the kernel resets it), as a receiver that timed it out.
  const ids: string[] = [];
  const raw = net.createServer((socket) => {
    let requests = 0;
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      if (!buffered.includes('\r\n\r\n')) return;
      requests += 1;
      if (requests > 1) {
        socket.resetAndDestroy();
        return;
      }
      ids.push(/webhook-id: (\S+)/i.exec(buffered)?.[1] ?? '');
      buffered = '';
      socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`;
  const agent = endpointAgent(url, 4);
  try {
    for (const id of ['42:1', '42:2']) {
      assert.deepEqual(await attemptDelivery({ url, secret }, { id, body }, { ...open, agent }), {
        outcome: 'delivered',
        status: 204,
      });
    }
    assert.deepEqual(ids, ['42:1', '42:2']);
  } finally {
    agent.destroy();
    raw.close();
  }
});
