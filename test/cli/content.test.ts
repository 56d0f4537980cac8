/**
 * `chatlog content status|retry` (CONTRACT §11), run as a user runs them: bin/chatlog in a child
 * process (built: `npm run build`) over a test store whose downloads stand as a server's worker
 * would have left them (queued with the messages, then leased and settled through the store).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ContentKind, IngestOperation } from '../../src/store/store.js';
import { runChatlog } from '../fixtures/serve.js';
import { createTestStore, type TestStore } from '../helpers.js';

const HUB = '5101';
const NO_TOKEN_HUB = '5102';
const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);
let t: TestStore;

const chatlog = (args: string[]) => runChatlog(t.env, args);

/** Exit 1 with exactly one line on stderr, `chatlog: error: ...`, nothing on stdout. */
function assertUserError(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^chatlog: error: \S[^\n]*\n$/, 'one line');
  assert.match(result.stderr, pattern);
}

function media(n: number, kind: ContentKind = 'image'): IngestOperation {
  const id = String(800_000_000_000_000_000n + BigInt(n));
  return {
    kind: 'message',
    lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
    sender: null,
    msg: `[${kind}]`,
    contentType: kind,
    createdAt: 1_700_000_000_000 + n,
    sourceId: `line:${id}`,
    id,
    content: { lineMessageId: id, kind, fileName: kind === 'file' ? 'a.pdf' : null },
    sourceKind: 'user',
    sourceChatId: null,
  };
}

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, { lineChannelAccessToken: 'cli-test-channel-access-token' });
  await t.hubs.add(NO_TOKEN_HUB, {});
  const now = Date.now();
  // Six messages with content: two kept (one blob of 100 bytes held twice, one of 250), one gone
  // from LINE, two failed for good, one still pending.
  await t.store.messages.ingest(
    HUB,
    [media(1), media(2), media(3), media(4, 'video'), media(5, 'file'), media(6)],
    now - 60_000,
  );
  await t.store.messages.ingest(NO_TOKEN_HUB, [media(7)], now - 60_000);
  const leased = await t.store.content.lease(now, now + 15_000, 5, 10);
  assert.equal(leased.length, 5, 'the hub without a token has nothing to lease');
  const outcomes = [
    { state: 'done', sha256: SHA_A, mediaType: 'image/jpeg', size: 100 },
    { state: 'done', sha256: SHA_A, mediaType: 'image/jpeg', size: 100 },
    { state: 'done', sha256: SHA_B, mediaType: 'image/png', size: 250 },
    { state: 'gone', attempts: 1, lastError: 'LINE no longer has it (404)' },
    { state: 'failed', attempts: 1, lastError: 'LINE could not prepare it' },
  ] as const;
  const byAge = [...leased].sort((a, b) => a.createdAt - b.createdAt);
  for (const [i, item] of byAge.entries()) {
    const key = { hubId: item.hubId, messageId: item.messageId, leasedUntil: item.leasedUntil };
    assert.equal(await t.store.content.settle({ ...key, ...outcomes[i]! }, now), true);
  }
  // A second failure: the pending one, leased and given up on.
  const last = await t.store.content.lease(now, now + 15_000, 5, 10);
  assert.equal(last.length, 1);
  const item = last[0]!;
  const key = { hubId: item.hubId, messageId: item.messageId, leasedUntil: item.leasedUntil };
  assert.equal(
    await t.store.content.settle(
      { ...key, state: 'failed', attempts: 9, lastError: 'larger than 1 GiB' },
      now,
    ),
    true,
  );
  // And one more message still to download.
  await t.store.messages.ingest(HUB, [media(8)], now);
});

after(async () => {
  await t.close();
});

test('content status: kept (with their bytes, each blob once), pending, failed, gone; --json', () => {
  const text = chatlog(['content', 'status', HUB]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, `hub ${HUB}: 3 kept (350 bytes), 1 pending, 2 failed, 1 gone from LINE\n`);
  const json = chatlog(['content', 'status', HUB, '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    hubId: HUB,
    done: 3,
    pending: 1,
    failed: 2,
    gone: 1,
    bytes: 350,
    accessToken: true,
  });
});

test('content retry: the failed downloads are queued again, and it says how many', async () => {
  const retried = chatlog(['content', 'retry', HUB]);
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal(retried.stderr, `chatlog: 2 failed downloads of hub ${HUB} queued again\n`);
  const status = JSON.parse(chatlog(['content', 'status', HUB, '--json']).stdout);
  assert.deepEqual(
    { pending: status.pending, failed: status.failed, done: status.done, gone: status.gone },
    { pending: 3, failed: 0, done: 3, gone: 1 },
    'gone stays gone: LINE no longer has it',
  );
  // Due now, from the first attempt on (a running server takes them within seconds).
  const due = await t.store.content.lease(Date.now() + 1000, Date.now() + 15_000, 10, 10);
  assert.equal(due.length, 3);
  assert.ok(due.every((item) => item.state === 'pending'));
  const again = chatlog(['content', 'retry', HUB]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, `chatlog: 0 failed downloads of hub ${HUB} queued again\n`);
});

test('a hub without a LINE access token: status says nothing is downloaded until one is set', () => {
  const text = chatlog(['content', 'status', NO_TOKEN_HUB]);
  assert.equal(text.code, 0, text.stderr);
  const [figures, advice, ...rest] = text.stdout.split('\n');
  assert.equal(figures, `hub ${NO_TOKEN_HUB}: 0 kept (0 bytes), 1 pending, 0 failed, 0 gone from LINE`);
  assert.match(advice ?? '', /no LINE channel access token: nothing is downloaded until one is set/);
  assert.deepEqual(rest, ['']);
  assert.equal(JSON.parse(chatlog(['content', 'status', NO_TOKEN_HUB, '--json']).stdout).accessToken, false);
});

test('an unknown hub is an error: exit 1, one line', () => {
  assertUserError(chatlog(['content', 'status', '5199']), /5199/);
  assertUserError(chatlog(['content', 'status', '5199', '--json']), /5199/);
  assertUserError(chatlog(['content', 'retry', '5199']), /5199/);
});
