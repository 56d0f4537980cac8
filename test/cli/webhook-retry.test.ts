/**
 * `chatlog webhook retry <hubId> [<endpointId>]` (issue 42): a delivery parked for minutes after
 * failed attempts is attempted at once by the running server, with the settings that server runs
 * with now (CHATLOG_WEBHOOK_ALLOW_PRIVATE changed by a restart: read at each attempt). On either
 * store, as an operator runs it: bin/chatlog next to `chatlog serve`, a receiver on this machine.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { type Receiver, startReceiver } from '../fixtures/receiver.js';
import { runChatlog, startServe, stop } from '../fixtures/serve.js';
import { createTestStore, freePort, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '4301';
let t: TestStore;
let receiver: Receiver;
let port: number;
let server: ChildProcess | undefined;
const stderr: string[] = [];

const serve = (allowPrivate: boolean) =>
  startServe({
    port,
    env: { ...withoutSettings(), ...t.env, CHATLOG_WEBHOOK_ALLOW_PRIVATE: String(allowPrivate) },
    stderr,
  });

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms\n${stderr.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, {});
  receiver = await startReceiver();
  port = await freePort();
});
after(async () => {
  if (server) await stop(server);
  await receiver?.close();
  await t?.close();
});

test('a delivery parked after failed attempts is sent at once by webhook retry, with the setting the server runs with now', async () => {
  // Added where private addresses are allowed; served, first, where they are not.
  const added = runChatlog({ ...t.env, CHATLOG_WEBHOOK_ALLOW_PRIVATE: 'true' }, [
    'webhook',
    'add',
    HUB,
    `${receiver.url}/chatlog`,
  ]);
  assert.equal(added.code, 0, added.stderr);
  const [endpointId = '', secret = ''] = added.stdout.trim().split('\t');
  receiver.secret = secret;
  server = await serve(false);
  const ingestKey = (await t.keys.issue(HUB, 'ingest', '')).key;
  const res = await fetch(`http://127.0.0.1:${port}/ingest/line/${HUB}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ lineId: 'U1', msg: 'parked', id: 'parked-1' }]),
  });
  assert.equal(res.status, 200);

  // Refused twice (a private address): the next attempt is minutes away.
  const parked = await until('two failed attempts', async () => {
    const [delivery] = await t.store.webhooks.recent(endpointId, 10);
    return delivery && delivery.attempts >= 2 ? delivery : undefined;
  });
  assert.equal(parked.state, 'pending');
  assert.match(parked.lastError ?? '', /private/);
  assert.ok(parked.nextAttemptAt - Date.now() > 60_000, 'parked for minutes');
  assert.equal(receiver.attempts, 0, 'nothing reached the receiver');

  // Allowed now (a restart reads the setting); the parked delivery still waits its turn...
  await stop(server);
  server = await serve(true);
  // ...until retried: then it goes within seconds, signed as ever.
  const retried = runChatlog(t.env, ['webhook', 'retry', HUB]);
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal(retried.stdout, `${endpointId}\t1\n`);
  assert.match(retried.stderr, /1 delivery of hub 4301 to be attempted now/);
  const [delivered] = await receiver.waitFor(1, 60_000);
  assert.equal(delivered?.verified, true);
  assert.equal(delivered?.payload.type, 'message.created');
  const settled = await until('the delivery settled', async () => {
    const [delivery] = await t.store.webhooks.recent(endpointId, 10);
    return delivery?.state === 'delivered' ? delivery : undefined;
  });
  assert.equal(settled.attempts, 3);

  // Nothing left to retry; the endpoint named alone; refusals are one line.
  assert.equal(runChatlog(t.env, ['webhook', 'retry', HUB, endpointId]).stdout, `${endpointId}\t0\n`);
  const unknown = runChatlog(t.env, ['webhook', 'retry', HUB, 'whe_nope']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^chatlog: error: this hub has no webhook endpoint whe_nope\n$/);
  const noHub = runChatlog(t.env, ['webhook', 'retry', '4399']);
  assert.equal(noHub.code, 1);
  assert.match(noHub.stderr, /^chatlog: error: .*4399/);
});
