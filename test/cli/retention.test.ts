/**
 * Retention from the command line (CONTRACT §13), run as an operator runs it: bin/chatlog in a child
 * process (built: `npm run build`). `hub add --retention-days`, its refusals, `hub purge --dry-run`
 * saying what would go without removing it, and `hub purge` removing it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { IngestOperation } from '../../src/store/store.js';
import { runChatlog } from '../fixtures/serve.js';
import { createTestStore, type TestStore } from '../helpers.js';

const HUB = '5301';
const DAY = 86_400_000;
let t: TestStore;

const chatlog = (args: string[]) => runChatlog(t.env, args);

function text(n: number, createdAt: number): IngestOperation {
  return {
    kind: 'message',
    lineId: 'Uretention',
    sender: null,
    msg: `message ${n}`,
    contentType: 'text',
    createdAt,
    sourceId: `ingest:cli-retention-${n}`,
    id: `cli-retention-${n}`,
    sourceKind: 'user',
    sourceChatId: null,
  };
}

let now: number;

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  now = Date.now();
  // Three from 40 days ago and more, two from today.
  await t.store.messages.ingest(
    HUB,
    [
      text(1, now - 60 * DAY),
      text(2, now - 50 * DAY),
      text(3, now - 40 * DAY),
      text(4, now - 1000),
      text(5, now),
    ],
    now,
  );
});
after(() => t.close());

test('hub add --retention-days: set, shown, and refused when not a number of days', () => {
  const refused = chatlog(['hub', 'add', HUB, '--retention-days', '-3']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /--retention-days: "-3" is not a whole number of days from 0/);
  const noHub = chatlog(['hub', 'purge', HUB, '--dry-run']);
  assert.equal(noHub.code, 1);
  assert.match(noHub.stderr, /keeps every message: set --retention-days first/);
  const set = chatlog(['hub', 'add', HUB, '--retention-days', '30']);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stderr, /messages kept 30 days/);
});

test('hub purge --dry-run says what would go and removes nothing; hub purge removes it', async () => {
  const dry = chatlog(['hub', 'purge', HUB, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  const said = JSON.parse(dry.stdout);
  assert.equal(said.messages, 3);
  assert.equal(said.dryRun, true);
  // Every time in one form: CONTRACT §3's 24 characters in UTC (never epoch milliseconds).
  assert.equal(said.oldest, new Date(now - 60 * DAY).toISOString());
  assert.equal(said.newest, new Date(now - 40 * DAY).toISOString());
  for (const time of [said.before, said.oldest, said.newest]) {
    assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  assert.match(
    dry.stderr,
    /would lose 3 messages created before .* \(the start of the day 30 days ago in Asia\/Tokyo\)/,
  );
  assert.equal((await t.store.retention.preview(HUB, Date.now())).messages, 5, 'nothing removed');

  const done = chatlog(['hub', 'purge', HUB]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(JSON.parse(done.stdout).removed, 3);
  assert.match(done.stderr, /3 messages removed/);
  assert.equal((await t.store.retention.preview(HUB, Date.now() + 1000)).messages, 2, 'today’s two are kept');
});
