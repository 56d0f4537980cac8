/**
 * `chatlog contact export` and `chatlog contact erase` (CONTRACT §13), run as an operator runs them:
 * bin/chatlog in a child process (built: `npm run build`) over a test store holding two contacts'
 * messages. (Media in the export: test/browser/conversations-access.test.ts, on both stores.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { IngestOperation } from '../../src/store/store.js';
import { runChatlog } from '../fixtures/serve.js';
import { readZip } from '../fixtures/zip.js';
import { createTestStore, type TestStore } from '../helpers.js';

const HUB = '5201';
const TARGET = 'U0e1d2c3b4a5968778695a4b3c2d1e0f9';
const OTHER = 'U11112222333344445555666677778888';
let t: TestStore;

const chatlog = (args: string[]) => runChatlog(t.env, args);

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

test('contact export: a ZIP of the contact with each message and its id; never over an existing file', async () => {
  const out = path.join(t.dir, 'person.zip');
  const made = chatlog(['contact', 'export', HUB, TARGET, '--out', out]);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stderr, new RegExp(`the data of contact ${TARGET} of hub ${HUB} written to`));
  assert.equal(fs.statSync(out).mode & 0o777, 0o600, 'readable by its owner only');
  const entries = await readZip(fs.readFileSync(out));
  assert.deepEqual([...entries.keys()], ['messages.json']);
  assert.deepEqual(JSON.parse(entries.get('messages.json')?.toString('utf8') ?? ''), {
    lineId: TARGET,
    vid: '',
    name: '',
    messages: [1, 2].map((n) => ({
      id: `cli-erase-${n}`,
      sender: 'User',
      msg: `message ${n}`,
      contentType: 'text',
      createdAt: new Date(1_700_000_000_000 + n).toISOString(),
    })),
  });
  const again = chatlog(['contact', 'export', HUB, TARGET, '--out', out]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /exists: give a new file name/);
  const nobody = chatlog(['contact', 'export', HUB, 'Unobody', '--out', path.join(t.dir, 'nobody.zip')]);
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /has no contact Unobody \(nothing exported\)/);
  assert.equal(fs.existsSync(path.join(t.dir, 'nobody.zip')), false, 'no file for nobody');
  assert.equal(fs.existsSync(path.join(t.dir, 'nobody.zip.partial')), false);
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
