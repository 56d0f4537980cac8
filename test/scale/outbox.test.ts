/**
 * CONTRACT §10, "delivery state survives restarts": `chatlog serve` is killed with SIGKILL while
 * deliveries are pending (some of them leased and in flight), started again on the same store, and
 * every change of the hub's feed reaches the endpoint, signed with its secret, under `<hubId>:<seq>`.
 * Runs on either store (a SQLite data directory, or a PostgreSQL schema).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { type Receiver, startReceiver } from '../fixtures/receiver.js';
import { killHard, startServe, stop } from '../fixtures/serve.js';
import { createTestStore, freePort, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '4101';
let t: TestStore;
let receiver: Receiver;
let admin = '';
let ingestKey = '';
let read = '';
const stderr: string[] = [];

function startNode(port: number, workers = 1, timeoutMs = 1000): Promise<ChildProcess> {
  const env = {
    ...withoutSettings(),
    ...t.env,
    CHATLOG_WEBHOOK_ALLOW_PRIVATE: 'true',
    // Leases last this plus 10 s.
    CHATLOG_WEBHOOK_TIMEOUT_MS: String(timeoutMs),
  };
  return startServe({ port, workers, env, stderr });
}

const call = (port: number, pathAndQuery: string, key: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${port}${pathAndQuery}`, {
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
  });

/** Ingests messages `from`..`to - 1`, ten per request; resolves to the numbers acknowledged 200. */
async function ingestRange(port: number, from: number, to: number): Promise<number[]> {
  const acknowledged: number[] = [];
  for (let start = from; start < to; start += 10) {
    const numbers = Array.from({ length: Math.min(10, to - start) }, (_, i) => start + i);
    const res = await call(port, `/ingest/line/${HUB}/messages`, ingestKey, {
      method: 'POST',
      body: JSON.stringify(numbers.map((n) => ({ lineId: 'U1', msg: `outbox ${n}`, id: `ob-${n}` }))),
    }).catch(() => undefined);
    if (res?.status === 200) acknowledged.push(...numbers);
    await res?.body?.cancel();
  }
  return acknowledged;
}

/** Every change of the hub's feed, from the start. */
async function feed(port: number): Promise<Array<{ seq: string; type: string; id?: string }>> {
  const changes: Array<{ seq: string; type: string; id?: string }> = [];
  let cursor = '';
  for (;;) {
    const res = await call(
      port,
      `/api/line/${HUB}/changes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      read,
    );
    assert.equal(res.status, 200);
    const page = (await res.json()) as { changes: typeof changes; cursor: string; hasMore: boolean };
    changes.push(...page.changes);
    cursor = page.cursor;
    if (!page.hasMore) return changes;
  }
}

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, {});
  admin = (await t.keys.issue(HUB, 'admin', '')).key;
  ingestKey = (await t.keys.issue(HUB, 'ingest', '')).key;
  read = (await t.keys.issue(HUB, 'read', '')).key;
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await t.close();
});

test('kill -9 while deliveries are pending: after a restart every change is delivered', async () => {
  const port = await freePort();
  let server = await startNode(port);
  try {
    const res = await call(port, `/api/line/${HUB}/webhooks`, admin, {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url }),
    });
    const endpoint = (await res.json()) as { secret: string };
    assert.equal(res.status, 201, JSON.stringify(endpoint));
    receiver.secret = endpoint.secret;
    // Failing, slowly: at the kill, attempts are in flight and deliveries are leased or waiting
    // for their retry.
    receiver.answer = 503;
    receiver.delayMs = 500;

    const acknowledged = await ingestRange(port, 0, 150);
    assert.equal(acknowledged.length, 150);
    for (let i = 0; i < 200 && receiver.attempts < 40; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(receiver.attempts > 0, 'the first node attempted deliveries before the kill');
    // Killed in the middle of a stream of writes: some after the last dispatch, maybe one half-sent.
    const during = ingestRange(port, 150, 200);
    await new Promise((r) => setTimeout(r, 30));
    await killHard(server);
    acknowledged.push(...(await during));
    assert.equal(receiver.received.length, 0, 'nothing was answered 2xx before the kill');

    server = await startNode(port);
    receiver.answer = 204;
    receiver.delayMs = 0;
    acknowledged.push(...(await ingestRange(port, 200, 220)));

    const changes = await feed(port);
    const created = changes.filter((c) => c.type === 'message.created');
    for (const n of acknowledged) {
      assert.ok(
        created.some((c) => c.id === `ob-${n}`),
        `acknowledged message ob-${n} is in the feed`,
      );
    }
    const wanted = new Set(changes.map((c) => `${HUB}:${c.seq}`));
    // Leases of the killed process end within 11 s; retries come about 5 s after a failure.
    const deadline = Date.now() + 45_000;
    const delivered = () => new Set(receiver.received.map((r) => r.id));
    while (Date.now() < deadline && [...wanted].some((id) => !delivered().has(id))) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const missing = [...wanted].filter((id) => !delivered().has(id));
    assert.deepEqual(missing, [], `${missing.length} of ${wanted.size} changes were never delivered`);

    for (const r of receiver.received) {
      assert.equal(r.verified, true, `delivery ${r.id} verifies with the endpoint's secret`);
      assert.equal(r.id, `${HUB}:${r.payload.data.seq}`);
      assert.equal(r.payload.type, r.payload.data.type);
    }
    // Nothing was delivered that is not a change of the feed.
    assert.deepEqual([...delivered()].sort(), [...wanted].sort());
    assert.deepEqual(
      new Set(
        receiver.received.filter((r) => r.payload.type === 'message.created').map((r) => r.payload.data.seq),
      ),
      new Set(created.map((c) => c.seq)),
    );
  } catch (error) {
    process.stderr.write(`chatlog serve said:\n${stderr.join('')}\n`);
    throw error;
  } finally {
    await stop(server);
  }
});

// `chatlog serve` runs one process per core by default, each with its own outbox worker: the same
// race as two nodes (test/scale/outbox-nodes.test.ts), on either store. A lease lasts
// CHATLOG_WEBHOOK_TIMEOUT_MS + 10 s, but a process leases up to 200 deliveries, sends them 32 at a
// time and settles them only once the whole batch is done; when that outlasts the lease, the other
// process leases the same unsettled rows and sends them again, and each one's settlement is dropped
// because the other took its lease over: the changes are sent again and again, without end.
test('two server processes, one slow endpoint (2xx within the timeout) with a backlog: each change is sent once', async () => {
  const hubId = '4102';
  await t.hubs.add(hubId, {});
  const hubAdmin = (await t.keys.issue(hubId, 'admin', '')).key;
  const hubIngest = (await t.keys.issue(hubId, 'ingest', '')).key;
  const port = await freePort();
  // Leases last 4 s + 10 s; the receiver answers 204 after 2.5 s, within the timeout.
  const server = await startNode(port, 2, 4000);
  try {
    receiver.received.length = 0;
    receiver.attempts = 0;
    receiver.attemptsById.clear();
    receiver.answer = 204;
    receiver.delayMs = 2500;
    const res = await call(port, `/api/line/${hubId}/webhooks`, hubAdmin, {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url }),
    });
    const endpoint = (await res.json()) as { secret: string };
    assert.equal(res.status, 201, JSON.stringify(endpoint));
    receiver.secret = endpoint.secret;
    // A backlog of 200 changes, committed at once: one batch of 7 rounds of 2.5 s.
    const written = await call(port, `/ingest/line/${hubId}/messages`, hubIngest, {
      method: 'POST',
      body: JSON.stringify(
        Array.from({ length: 200 }, (_, n) => ({ lineId: 'U1', msg: `slow ${n}`, id: `sl-${n}` })),
      ),
    });
    assert.equal(written.status, 200);
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && receiver.attemptsById.size < 200)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(receiver.attemptsById.size, 200, 'every change was sent');
    // Until every delivery could have been settled, and a little longer.
    while (Date.now() < deadline && receiver.received.length < 200)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 3000));
    for (const r of receiver.received) assert.equal(r.verified, true);
    const duplicated = [...receiver.attemptsById].filter(([, count]) => count > 1);
    assert.equal(duplicated.length, 0, `${duplicated.length} of 200 changes were sent more than once`);
    assert.equal(receiver.attempts, 200);
  } catch (error) {
    process.stderr.write(`chatlog serve said:\n${stderr.join('')}\n`);
    throw error;
  } finally {
    receiver.delayMs = 0;
    await stop(server);
  }
});
