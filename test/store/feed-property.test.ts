/**
 * CONTRACT §9 as a property of the store, on SQLite and (CHATLOG_TEST_STORE=postgres) PostgreSQL:
 * random interleavings of live writes (messages, redeliveries, unsends, follows), contact changes
 * and imports on one hub (and a second hub beside it), while a reader follows the hub's feed with
 * random page sizes, sometimes going back to a cursor it saved, sometimes starting over. After the
 * last catch-up its copy is the hub as the store holds it; a read from no cursor never shows what
 * was unsent; seqs strictly increase along every read; no change comes twice to a reader that
 * only follows.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { FeedReadAhead } from '../../src/modules/changes/changes.read-ahead.js';
import type { Change, ImportMessage, IngestOperation, MessageRow, Store } from '../../src/store/store.js';
import { createTestStore, readFeedPage, type TestStore } from '../helpers.js';

let t: TestStore;
let nextHub = 7000;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

const LINE_IDS = ['Ua', 'Ub', 'Uc', 'Ud'];
/** Message ids an ingest may ask for: a few shared ones (taken ids), and none or a bad one (assigned). */
const WANTED_IDS = ['m1', 'm2', 'm3', null, 'not an id!'];
const VIDS = ['', '101', '202'];
const NAMES = ['', 'Aiko', 'Bo 🐉'];
/** Live source ids: few, so that redeliveries and unsends of stored messages are common. */
const LIVE_SOURCES = 10;
/** Unsends name these too: some were never stored. */
const UNSENT_SOURCES = 13;
const IMPORT_SOURCES = 8;

const lineIdArb = fc.constantFrom(...LINE_IDS);
const hubArb = fc.constantFrom(0, 0, 0, 1); // mostly the followed hub
const messageArb = fc.record({
  kind: fc.constant('message' as const),
  lineId: lineIdArb,
  source: fc.nat(LIVE_SOURCES - 1),
  id: fc.constantFrom(...WANTED_IDS),
  fromFriend: fc.boolean(),
  text: fc.string({ maxLength: 6 }),
  createdAt: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_100_000 }),
  contentType: fc.constantFrom('text', 'image'),
});
const liveOpArb = fc.oneof(
  { weight: 5, arbitrary: messageArb },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('unsend' as const), source: fc.nat(UNSENT_SOURCES - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('follow' as const, 'unfollow' as const),
      lineId: lineIdArb,
    }),
  },
);
type LiveOpDraft = typeof liveOpArb extends fc.Arbitrary<infer T> ? T : never;

const stepArb = fc.oneof(
  {
    weight: 6,
    // Requests sent at once commit together (group commit); each is all-or-nothing.
    arbitrary: fc.record({
      kind: fc.constant('ingest' as const),
      hub: hubArb,
      requests: fc.array(fc.array(liveOpArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('contact' as const),
      hub: hubArb,
      lineId: lineIdArb,
      vid: fc.option(fc.constantFrom(...VIDS), { nil: undefined }),
      name: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
      onlyIfNameEmpty: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('import' as const),
      hub: hubArb,
      batches: fc.array(
        fc.array(
          fc.record({
            lineId: lineIdArb,
            vid: fc.constantFrom(...VIDS),
            name: fc.constantFrom(...NAMES),
            source: fc.nat(IMPORT_SOURCES - 1),
            fromFriend: fc.boolean(),
            text: fc.string({ maxLength: 6 }),
            createdAt: fc.integer({ min: 1_600_000_000_000, max: 1_600_000_100_000 }),
          }),
          { maxLength: 3 },
        ),
        { minLength: 1, maxLength: 2 },
      ),
    }),
  },
  {
    weight: 5,
    // Up to `pages` pages one after the other, as a client catching up asks (the page read ahead
    // for the next is used), or as the next step finds it.
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      limit: fc.oneof(fc.constant(2), fc.integer({ min: 1, max: 6 })),
      pages: fc.integer({ min: 1, max: 3 }),
    }),
  },
  // Back to a cursor saved earlier (`back` pages ago), keeping the copy.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), back: fc.nat(4) }) },
  // From no cursor, with an empty copy.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('scratch' as const) }) },
);

/** What a client keeps of the hub: messages by id, contacts by LINE id. */
interface Copy {
  messages: Map<string, { lineId: string; msg: string; contentType: string; createdAt: number }>;
  contacts: Map<string, { vid: string; name: string }>;
}

function apply(copy: Copy, change: Change): void {
  switch (change.type) {
    case 'message.created':
      copy.messages.set(change.id, {
        lineId: change.lineId,
        msg: change.message.msg,
        contentType: change.message.contentType,
        createdAt: change.message.createdAt,
      });
      copy.contacts.set(change.lineId, { vid: change.vid, name: change.name });
      break;
    case 'message.deleted':
      copy.messages.delete(change.id);
      break;
    case 'contact.updated':
      copy.contacts.set(change.lineId, { vid: change.vid, name: change.name });
      break;
    default:
      assert.fail(`unexpected change ${change.type}`);
  }
}

/** The message's source id: every message's text starts with it. */
const sourceOf = (msg: string) => msg.slice(0, msg.indexOf('|'));
const contentKey = (m: { lineId: string; msg: string; createdAt: number; contentType: string }) =>
  JSON.stringify([m.lineId, m.msg, m.createdAt, m.contentType]);
const sorted = (values: Iterable<string>) => [...values].sort();

async function storedRows(store: Store, hubId: string): Promise<MessageRow[]> {
  const rows: MessageRow[] = [];
  for await (const batch of store.messages.stream({ hubId })) rows.push(...batch);
  return rows;
}

/** The whole feed from no cursor, in pages of `limit`; checks seq order and that nothing unsent shows. */
async function readFromScratch(
  store: Store,
  hubId: string,
  limit: number,
  unsent: ReadonlySet<string>,
): Promise<Change[]> {
  const all: Change[] = [];
  let cursor = 0;
  for (;;) {
    const page = await store.changes.page(hubId, cursor, limit);
    assert.ok(page.length <= limit, `a page of ${page.length} changes for a limit of ${limit}`);
    for (const change of page) {
      assert.ok(change.seq > cursor, `seq ${change.seq} served after ${cursor}`);
      cursor = change.seq;
      if (change.type === 'message.created') {
        const source = sourceOf(change.message.msg);
        assert.ok(!unsent.has(source), `the unsent message ${source} is in a read from no cursor`);
      }
      all.push(change);
    }
    if (page.length === 0) return all;
  }
}

/**
 * The copy equals the hub as the store holds it: the same messages (content, and the ids a read
 * from no cursor gives), the same vid and name for every contact.
 */
async function assertCopyIsTheHub(store: Store, hubId: string, copy: Copy, unsent: ReadonlySet<string>) {
  const rows = await storedRows(store, hubId);
  const scratch = await readFromScratch(store, hubId, 1 + (rows.length % 7), unsent);
  const created = scratch.flatMap((c) => (c.type === 'message.created' ? [c] : []));

  assert.deepEqual(sorted([...copy.messages.values()].map(contentKey)), sorted(rows.map(contentKey)));
  assert.deepEqual(
    sorted(created.map((c) => contentKey({ lineId: c.lineId, ...c.message }))),
    sorted(rows.map(contentKey)),
  );
  // Read at the same moment, the senders agree with the read API's too.
  assert.deepEqual(
    sorted(created.map((c) => JSON.stringify([c.message.msg, c.message.sender]))),
    sorted(rows.map((r) => JSON.stringify([r.msg, r.sender]))),
  );
  const ids = created.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length, `a message id twice in one read: ${ids}`);
  assert.deepEqual(sorted(copy.messages.keys()), sorted(ids));
  for (const row of rows) assert.deepEqual(copy.contacts.get(row.lineId), { vid: row.vid, name: row.name });
  for (const lineId of LINE_IDS) {
    const contact = await store.contacts.get(hubId, lineId);
    const kept = copy.contacts.get(lineId) ?? { vid: '', name: '' };
    assert.deepEqual(kept, { vid: contact?.vid ?? '', name: contact?.name ?? '' }, `contact ${lineId}`);
  }
  for (const row of rows) assert.ok(!unsent.has(sourceOf(row.msg)), `${row.msg} was unsent`);
}

test('a reader following the feed keeps an exact copy of the hub, whatever it is given', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { maxLength: 40 }), async (steps) => {
      const hubIds = [String(nextHub), String(nextHub + 1)];
      nextHub += 2;
      for (const hubId of hubIds) await t.hubs.add(hubId, {});
      const store = t.store;
      let now = 1_000;
      // What the store should hold, by source id, and what was unsent, per hub.
      const stored = hubIds.map(() => new Set<string>());
      const unsent = hubIds.map(() => new Set<string>());

      // The reader of the first hub, through the feed's use case with a read-ahead as the server's.
      const hubId = hubIds[0]!;
      const readAhead = new FeedReadAhead(store.changes);
      const copy: Copy = { messages: new Map(), contacts: new Map() };
      let cursor = 0;
      /** Cursors it reached, each after applying a page: where it may go back to. */
      let saved: number[] = [0];
      /** Seqs seen since it last went back or started over: none twice. */
      let seen = new Set<number>();

      const toOperation = (hub: number, op: LiveOpDraft): IngestOperation => {
        now += 1;
        switch (op.kind) {
          case 'message': {
            const sourceId = `ingest:h${hub}s${op.source}`;
            return {
              kind: 'message',
              lineId: op.lineId,
              sender: op.fromFriend ? null : 'You',
              msg: `${sourceId}|${op.text}`,
              contentType: op.contentType,
              createdAt: op.createdAt,
              sourceId,
              id: op.id,
              sourceKind: 'user',
              sourceChatId: null,
            };
          }
          case 'unsend':
            return { kind: 'unsend', sourceId: `ingest:h${hub}s${op.source}`, at: now };
          default:
            return { kind: op.kind, lineId: op.lineId, at: now };
        }
      };

      for (const step of steps) {
        now += 1;
        switch (step.kind) {
          case 'ingest': {
            const hub = hubIds[step.hub]!;
            const requests = step.requests.map((ops) => ops.map((op) => toOperation(step.hub, op)));
            // Sent in one go: they may commit together, in the order given.
            await Promise.all(requests.map((ops) => store.messages.ingest(hub, ops, now)));
            for (const op of requests.flat()) {
              if (op.kind === 'message' && !unsent[step.hub]!.has(op.sourceId))
                stored[step.hub]!.add(op.sourceId);
              if (op.kind === 'unsend') {
                unsent[step.hub]!.add(op.sourceId);
                stored[step.hub]!.delete(op.sourceId);
              }
            }
            break;
          }
          case 'contact':
            await store.contacts.upsert(
              hubIds[step.hub]!,
              step.lineId,
              { vid: step.vid, name: step.name, onlyIfNameEmpty: step.onlyIfNameEmpty },
              now,
            );
            break;
          case 'import': {
            const batches: ImportMessage[][] = step.batches.map((batch) =>
              batch.map((m) => {
                const sourceId = `import:h${step.hub}p${m.source}`;
                return {
                  lineId: m.lineId,
                  vid: m.vid,
                  name: m.name,
                  sender: m.fromFriend ? null : 'You',
                  msg: `${sourceId}|${m.text}`,
                  contentType: 'text',
                  createdAt: m.createdAt,
                  sourceId,
                };
              }),
            );
            async function* each() {
              yield* batches;
            }
            await store.messages.importAll(hubIds[step.hub]!, each(), now);
            for (const m of batches.flat()) stored[step.hub]!.add(m.sourceId);
            break;
          }
          case 'read': {
            for (let n = 0; n < step.pages; n++) {
              const page = await readFeedPage(store, readAhead, hubId, cursor, step.limit);
              assert.ok(page.length <= step.limit);
              for (const change of page) {
                assert.ok(change.seq > cursor, `seq ${change.seq} served after ${cursor}`);
                assert.ok(!seen.has(change.seq), `seq ${change.seq} served twice`);
                seen.add(change.seq);
                // Content is never served after its deletion, whatever the cursor.
                if (change.type === 'message.created') {
                  assert.ok(
                    !unsent[0]!.has(sourceOf(change.message.msg)),
                    `unsent ${change.message.msg} served`,
                  );
                }
                apply(copy, change);
                cursor = change.seq;
              }
              saved.push(cursor);
              if (page.length < step.limit) break;
            }
            break;
          }
          case 'restart':
            // Going back re-applies what it had: harmless to the copy.
            cursor = saved[Math.max(0, saved.length - 1 - step.back)]!;
            saved = saved.filter((s) => s <= cursor);
            seen = new Set();
            break;
          case 'scratch':
            copy.messages.clear();
            copy.contacts.clear();
            cursor = 0;
            saved = [0];
            seen = new Set();
            break;
        }
      }

      // The last catch-up, in pages of 5.
      for (;;) {
        const page = await store.changes.page(hubId, cursor, 5);
        for (const change of page) {
          assert.ok(change.seq > cursor, `seq ${change.seq} served after ${cursor}`);
          assert.ok(!seen.has(change.seq), `seq ${change.seq} served twice`);
          seen.add(change.seq);
          apply(copy, change);
          cursor = change.seq;
        }
        if (page.length === 0) break;
      }
      const position = await store.changes.position(hubId);
      assert.ok(position && position.lastSeq >= cursor, `position ${position?.lastSeq} behind ${cursor}`);

      await assertCopyIsTheHub(store, hubId, copy, unsent[0]!);
      // The stored messages are those sent and not unsent (a redelivery, or one unsent, adds nothing).
      assert.deepEqual(
        sorted((await storedRows(store, hubId)).map((r) => sourceOf(r.msg))),
        sorted(stored[0]!),
      );

      // The other hub: its own feed, none of it in the first one's (the copy above would differ).
      const other = hubIds[1]!;
      const otherCopy: Copy = { messages: new Map(), contacts: new Map() };
      for (const change of await readFromScratch(store, other, 4, unsent[1]!)) apply(otherCopy, change);
      await assertCopyIsTheHub(store, other, otherCopy, unsent[1]!);
      assert.deepEqual(
        sorted((await storedRows(store, other)).map((r) => sourceOf(r.msg))),
        sorted(stored[1]!),
      );
    }),
    { numRuns: 25 },
  );
  // Whether pages were served as read ahead here depends on the steps drawn: feed-read-ahead.test.ts
  // takes both ways on purpose.
});

test('a message id freed by an unsend is never given to another message', async () => {
  const hubId = String(nextHub);
  nextHub += 1;
  await t.hubs.add(hubId, {});
  const message = (sourceId: string): IngestOperation => ({
    kind: 'message',
    lineId: 'Ua',
    sender: null,
    msg: `${sourceId}|hello`,
    contentType: 'text',
    createdAt: 1,
    sourceId,
    id: 'm1',
    sourceKind: 'user',
    sourceChatId: null,
  });
  await t.store.messages.ingest(hubId, [message('line:a')], 1);
  await t.store.messages.ingest(hubId, [{ kind: 'unsend', sourceId: 'line:a', at: 2 }], 2);
  await t.store.messages.ingest(hubId, [message('ingest:b')], 3);
  const created = (await t.store.changes.page(hubId, 0, 10)).flatMap((c) =>
    c.type === 'message.created' ? [c.id] : [],
  );
  // CONTRACT (part two): a message id is unique within its hub and never reused.
  assert.equal(created.length, 1);
  assert.notEqual(created[0], 'm1', 'the unsent message m1 and a later one share an id');
});
