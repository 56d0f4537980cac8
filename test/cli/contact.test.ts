/**
 * `chatlog contact erase` (CONTRACT §13), run as an operator runs it: bin/chatlog in a child process
 * (built: `npm run build`) over a test store holding two contacts' messages.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import type { IngestOperation } from '../../src/store/store.js';
import { BIN } from '../fixtures/serve.js';
import { createTestStore, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '5201';
const TARGET = 'U0e1d2c3b4a5968778695a4b3c2d1e0f9';
const OTHER = 'U11112222333344445555666677778888';
let t: TestStore;

function chatlog(args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...withoutSettings(), ...t.env, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function text(lineId: string, n: number): IngestOperation {
  return {
    kind: 'message',
    lineId,
    sender: null,
    msg: `message ${n}`,
    contentType: 'text',
    createdAt: 1_700_000_000_000 + n,
    sourceId: `ingest:cli-erase-${n}`,
    id: `cli-erase-${n}`,
    sourceKind: 'user',
    sourceChatId: null,
  };
}

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, {});
  await t.store.messages.ingest(HUB, [text(TARGET, 1), text(TARGET, 2), text(OTHER, 3)], Date.now());
});
after(async () => {
  await t.close();
});

test('contact erase: the contact and its messages gone, the other contact kept; a second time is an error', async () => {
  const erased = chatlog(['contact', 'erase', HUB, TARGET]);
  assert.equal(erased.code, 0, erased.stderr);
  assert.deepEqual(JSON.parse(erased.stdout), { erased: { messages: 2 } });
  assert.match(erased.stderr, new RegExp(`contact ${TARGET} of hub ${HUB} erased with 2 messages`));
  assert.equal(await t.store.contacts.get(HUB, TARGET), undefined);
  assert.ok(await t.store.contacts.get(HUB, OTHER));

  const again = chatlog(['contact', 'erase', HUB, TARGET]);
  assert.equal(again.code, 1);
  assert.equal(again.stdout, '');
  assert.match(
    again.stderr,
    /^chatlog: error: hub 5201 has no contact U0e1d2c3b4a5968778695a4b3c2d1e0f9 \(nothing erased\)\n$/,
  );

  const noHub = chatlog(['contact', 'erase', '5299', TARGET]);
  assert.equal(noHub.code, 1);
  assert.match(noHub.stderr, /5299/);
});
