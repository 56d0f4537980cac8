/** CHATLOG_CHANGES_KEEP_DAYS: deletions and contact changes are dropped once past keeping, messages never. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { ChangesPruner } from '../../../src/modules/changes/changes.pruner.js';
import { createTestStore, type TestStore } from '../../helpers.js';

const DAY = 24 * 60 * 60 * 1000;
let t: TestStore;

before(async () => {
  t = await createTestStore();
});
after(() => t.close());

test('changes past CHATLOG_CHANGES_KEEP_DAYS are dropped; a message stays as long as it does', async () => {
  await t.hubs.add('31', {});
  const at = Date.UTC(2026, 0, 1);
  const message = (id: string) => ({
    kind: 'message' as const,
    lineId: 'Uk',
    sender: null,
    msg: id,
    contentType: 'text',
    createdAt: at,
    sourceId: `line:${id}`,
    id,
    sourceKind: null,
    sourceChatId: null,
  });
  await t.store.messages.ingest('31', [message('1'), message('2')], at);
  await t.store.contacts.upsert('31', 'Uk', { name: 'Kei' }, at);
  await t.store.messages.ingest('31', [{ kind: 'unsend', sourceId: 'line:2', at }], at);
  const types = async () => (await t.store.changes.page('31', 0, 100)).map((c) => c.type);
  assert.deepEqual(await types(), ['message.created', 'contact.updated', 'message.deleted']);

  let now = at + 89 * DAY;
  const pruner = new ChangesPruner({
    store: t.store,
    keepDays: 90,
    log: pino({ level: 'silent' }),
    clock: () => now,
  });
  assert.equal(await pruner.pruneNow(), 0, 'kept for 90 days');
  now = at + 91 * DAY;
  assert.equal(await pruner.pruneNow(), 2);
  assert.deepEqual(await types(), ['message.created']);
  const position = await t.store.changes.position('31');
  assert.ok(position && position.droppedThrough > 0, 'cursors before what was dropped are expired');
});
