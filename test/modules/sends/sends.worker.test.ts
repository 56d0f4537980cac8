/**
 * The send worker when the store fails for a moment after LINE took a push (a database whose pool
 * had no free connection for a few seconds): the worker stores it again at once, within its lease,
 * so the send and the friend's next one do not wait for the lease to run out, and LINE is not
 * asked again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { createSecretBox } from '../../../src/lib/secrets.js';
import { SendService } from '../../../src/modules/sends/sends.usecases.js';
import { SendWorker } from '../../../src/modules/sends/sends.worker.js';
import type { Store } from '../../../src/store/store.js';
import { type FakeLinePush, startFakeLinePush } from '../../fixtures/fake-line-push.js';
import { createTestStore, message, storeMessages, TEST_SECRET, type TestStore } from '../../helpers.js';

const HUB = '4650';
const FRIEND = 'U4650aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
let t: TestStore;
let line: FakeLinePush;

before(async () => {
  t = await createTestStore();
  line = await startFakeLinePush();
  await t.hubs.add(HUB, { lineChannelAccessToken: line.token });
  await storeMessages(t.store, HUB, [
    message({ lineId: FRIEND, msg: 'hello', createdAt: Date.now() - 1_000 }),
  ]);
});

after(async () => {
  await line?.close();
  await t?.close();
});

test('a store call that fails after LINE took the push is made again within the lease, and LINE is asked once', async () => {
  let failuresLeft = 3;
  const failing = (): never => {
    throw new Error('timeout exceeded when trying to connect');
  };
  // The store as the worker sees it: the first three store calls after a push fail.
  const store = {
    hubs: t.store.hubs,
    sends: {
      ...t.store.sends,
      complete: (...args: Parameters<Store['sends']['complete']>) =>
        failuresLeft-- > 0 ? Promise.resolve().then(failing) : t.store.sends.complete(...args),
    },
  } satisfies Pick<Store, 'hubs' | 'sends'>;
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  const worker = new SendWorker({
    store,
    secrets: createSecretBox(TEST_SECRET),
    log,
    lineApiBaseUrl: line.base,
    // A lease of 5 s + 15 s: the store is tried again well before it runs out.
    timeoutMs: 5_000,
    sweepMs: 100,
  });
  const sends = new SendService({ store: t.store, clock: Date.now });
  const hub = await t.hubs.require(HUB);
  const first = (await sends.accept(hub, FRIEND, { messages: [{ type: 'text', text: 'one' }] })).send;
  const second = (await sends.accept(hub, FRIEND, { messages: [{ type: 'text', text: 'two' }] })).send;
  const started = Date.now();
  worker.start();
  try {
    for (;;) {
      const [a, b] = await Promise.all([sends.status(HUB, first.id), sends.status(HUB, second.id)]);
      if (a.status === 'sent' && b.status === 'sent') break;
      assert.ok(Date.now() - started < 10_000, `both sent in time: ${a.status}, ${b.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await worker.stop();
  }
  assert.deepEqual(
    line.pushes.map((p) => [p.messages[0]?.text, p.status]),
    [
      ['one', 200],
      ['two', 200],
    ],
    'each pushed once: no second push waited for a lease to run out',
  );
  assert.equal(warnings.filter((w) => w.includes('storing a send failed')).length, 3);
  assert.ok(!warnings.join('').includes(line.token), 'no token in the log');
});
