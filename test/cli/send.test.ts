/**
 * `./bin/chatlog send` (CONTRACT §16 from the command line), as an operator runs it on a store no
 * server serves: the reply is queued, pushed from the command's own process to a fake LINE (which
 * checks it against LINE's definition) and printed once LINE took it; LINE's refusal is exit 1 with
 * LINE's words; an unknown contact is exit 1 and nothing is queued.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { type FakeLinePush, startFakeLinePush } from '../fixtures/fake-line-push.js';
import { BIN } from '../fixtures/serve.js';
import { createTestStore, message, storeMessages, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '4602';
const FRIEND = 'U4602aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
let t: TestStore;
let line: FakeLinePush;

before(async () => {
  t = await createTestStore();
  line = await startFakeLinePush();
  await t.hubs.add(HUB, { lineChannelAccessToken: line.token });
  await storeMessages(t.store, HUB, [
    message({ lineId: FRIEND, msg: '営業時間は?', createdAt: Date.now() - 1_000 }),
  ]);
});

after(async () => {
  await line?.close();
  await t?.close();
});

/** The command in its own process, this one's event loop free meanwhile (the fake LINE answers from it). */
function send(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'send', ...args],
      {
        env: { ...withoutSettings(), ...t.env, LINE_API_BASE_URL: line.base, LOG_LEVEL: 'warn' },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('chatlog send: pushed once, printed as sent, kept as You', async () => {
  const sent = await send(HUB, FRIEND, '10時から19時までです 🕙');
  assert.equal(sent.code, 0, sent.stderr);
  const { send: view } = JSON.parse(sent.stdout) as { send: { status: string; messageIds: string[] } };
  assert.equal(view.status, 'sent');
  assert.equal(view.messageIds.length, 1);
  assert.deepEqual(line.delivered.get(FRIEND), [{ type: 'text', text: '10時から19時までです 🕙' }]);
  const stored: string[] = [];
  for await (const rows of t.store.messages.stream({ hubId: HUB })) {
    for (const row of rows) if (row.sender === 'You') stored.push(row.msg);
  }
  assert.deepEqual(stored, ['10時から19時までです 🕙']);
  // The same idempotency key twice: one push.
  for (let i = 0; i < 2; i++)
    assert.equal((await send(HUB, FRIEND, '一度だけ', '--idempotency-key', 'k1')).code, 0);
  assert.equal(line.pushes.filter((p) => p.messages[0]?.text === '一度だけ').length, 1);
  assert.deepEqual(line.violations, []);
});

test("chatlog send: LINE's refusal is exit 1 with LINE's words; an unknown contact queues nothing", async () => {
  line.misbehave.push({ status: 400, message: 'The request body has 1 error(s)' });
  const refused = await send(HUB, FRIEND, '断られる');
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /the send failed: LINE answered 400: The request body has 1 error\(s\)/);
  const before = line.pushes.length;
  const unknown = await send(HUB, 'Unobody', 'だれ?');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no contact Unobody/);
  assert.equal(line.pushes.length, before);
});
