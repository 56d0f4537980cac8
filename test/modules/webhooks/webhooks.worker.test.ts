/**
 * The outbox worker while the process is busy with clients (CONTRACT §10; issue 16's wake-up goal):
 * a backlog of deliveries waits for a quieter moment, a few at a time, but a change that happens
 * now is delivered now. On the store under test, with a real receiver verifying signatures.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLogger } from '../../../src/lib/logger.js';
import { createSecretBox } from '../../../src/lib/secrets.js';
import { WebhookService } from '../../../src/modules/webhooks/webhooks.usecases.js';
import { WebhookWorker } from '../../../src/modules/webhooks/webhooks.worker.js';
import { type Received, type Receiver, startReceiver } from '../../fixtures/receiver.js';
import {
  createTestStore,
  LogCapture,
  message,
  storeMessages,
  TEST_SECRET,
  type TestStore,
} from '../../helpers.js';

const HUB = '4701';
const BACKLOG = 300;
let t: TestStore;
let receiver: Receiver;

before(async () => {
  t = await createTestStore();
  receiver = await startReceiver();
});
after(async () => {
  await receiver?.close();
  await t?.close();
});

test('while the process is busy, a backlog goes a few at a time but a new change goes at once', async () => {
  await t.hubs.add(HUB, {});
  const secrets = createSecretBox(TEST_SECRET);
  const policy = { allowPrivate: true };
  const webhooks = new WebhookService({ store: t.store, secrets, policy, clock: Date.now });
  const endpoint = await webhooks.add(HUB, { url: `${receiver.url}/hooks` });
  receiver.secret = endpoint.secret;
  // The backlog: changes that came due a minute ago (an endpoint back after an outage, say).
  await storeMessages(
    t.store,
    HUB,
    Array.from({ length: BACKLOG }, (_, i) => message({ createdAt: 1000 + i, msg: `backlog ${i}` })),
  );
  const stored = await t.store.webhooks.get(endpoint.id);
  assert.ok(stored);
  await t.store.webhooks.dispatch(stored, Date.now() - 60_000, BACKLOG);

  let busy = true;
  const worker = new WebhookWorker({
    store: t.store,
    secrets,
    policy,
    log: createLogger('warn', new LogCapture()),
    timeoutMs: 5_000,
    busy: () => busy,
    // New for 30 s (1 s in production): a slow machine's stall does not make the new one old.
    freshMs: 30_000,
  });
  worker.start();
  try {
    await receiver.waitFor(2);
    const started = performance.now();
    await storeMessages(t.store, HUB, [message({ createdAt: 5000, msg: 'the new one' })]);
    const arrived = (await waitForMessage('the new one')) - started;
    const backlogSoFar = receiver.received.filter((r) => msgOf(r).startsWith('backlog')).length;
    assert.ok(arrived < 5_000, `the new change arrived ${arrived.toFixed(0)} ms after it was stored`);
    assert.ok(
      backlogSoFar < BACKLOG / 2,
      `the backlog waits while busy: ${backlogSoFar} of ${BACKLOG} sent by the time the new one arrived`,
    );
    // Quiet again: the rest of the backlog goes at full speed.
    busy = false;
    const all = await receiver.waitFor(BACKLOG + 1, 20_000);
    assert.equal(new Set(all.map((r) => r.id)).size, BACKLOG + 1, 'each change once');
    assert.ok(all.every((r) => r.verified));
  } finally {
    await worker.stop();
  }
});

const msgOf = (received: Received) => String((received.payload.data.message as { msg?: unknown })?.msg);

/** When the delivery of the message arrived (after 20 s, the test fails). */
async function waitForMessage(msg: string): Promise<number> {
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    if (receiver.received.some((r) => msgOf(r) === msg)) return performance.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`"${msg}" was not delivered in 20 s`);
}

test('outcomes that could not be stored once are stored later: every change delivered once, none left pending', async () => {
  const hub = '4702';
  await t.hubs.add(hub, {});
  const secrets = createSecretBox(TEST_SECRET);
  const policy = { allowPrivate: true };
  const webhooks = new WebhookService({ store: t.store, secrets, policy, clock: Date.now });
  const own = await startReceiver();
  try {
    const endpoint = await webhooks.add(hub, { url: `${own.url}/hooks` });
    own.secret = endpoint.secret;
    own.delayMs = 100;
    await storeMessages(
      t.store,
      hub,
      Array.from({ length: 50 }, (_, i) => message({ createdAt: 1000 + i, msg: `m${i}` })),
    );
    // The store refuses the first write of outcomes (a dropped connection, say), while leases go on.
    const webhooksStore = t.store.webhooks;
    const settle = webhooksStore.settle.bind(webhooksStore);
    let refused = 0;
    webhooksStore.settle = async (results, now) => {
      if (refused === 0 && results.length > 0) {
        refused = results.length;
        throw new Error('connection lost');
      }
      return settle(results, now);
    };
    const logs = new LogCapture();
    const worker = new WebhookWorker({
      store: t.store,
      secrets,
      policy,
      log: createLogger('warn', logs),
      timeoutMs: 5_000,
    });
    worker.start();
    try {
      await own.waitFor(50);
      const deadline = Date.now() + 20_000;
      let pending = 50;
      while (pending > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        pending = (await t.store.webhooks.recent(endpoint.id, 100)).filter(
          (d) => d.state !== 'delivered',
        ).length;
      }
      assert.ok(refused > 0, 'the fault happened');
      assert.equal(pending, 0, 'every outcome stored');
      assert.deepEqual([...new Set(own.attemptsById.values())], [1], 'each change sent once');
      assert.match(logs.text, /webhook delivery outcomes not stored yet/);
      assert.doesNotMatch(logs.text, /whsec_/);
    } finally {
      webhooksStore.settle = settle;
      await worker.stop();
    }
  } finally {
    await own.close();
  }
});
