/**
 * GET /changes reads the next page of a catch-up ahead (FeedReadAhead), on SQLite and
 * (CHATLOG_TEST_STORE=postgres) PostgreSQL. The oracle is the store itself: whatever write comes
 * between two pages (a new message, an unsend, a renamed contact, an erasure, retention, or none),
 * read just before or just after the look ahead ran, the next page served is the page a fresh read
 * gives at that moment. Nothing unsent, erased or renamed is ever served from a page read before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { FeedReadAhead } from '../../src/modules/changes/changes.read-ahead.js';
import type { Change, IngestOperation } from '../../src/store/store.js';
import { createTestStore, readFeedPage, type TestStore } from '../helpers.js';

let t: TestStore;
let nextHub = 8000;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

const LINE_IDS = ['Ua', 'Ub', 'Uc'];
const BASE_TIME = 1_700_000_000_000;

function message(n: number, lineId: string, minute: number): IngestOperation {
  return {
    kind: 'message',
    lineId,
    sender: null,
    msg: `m${n}`,
    contentType: 'text',
    createdAt: BASE_TIME + minute * 60_000,
    sourceId: `s${n}`,
    id: null,
    sourceKind: 'user',
    sourceChatId: null,
  };
}

const writeArb = fc.oneof(
  fc.record({ kind: fc.constant('none' as const) }),
  fc.record({ kind: fc.constant('append' as const), lineId: fc.constantFrom(...LINE_IDS) }),
  fc.record({ kind: fc.constant('unsend' as const), n: fc.nat(40) }),
  fc.record({
    kind: fc.constant('rename' as const),
    lineId: fc.constantFrom(...LINE_IDS),
    name: fc.constantFrom('Aiko', 'Bo', 'Chie'),
  }),
  fc.record({ kind: fc.constant('erase' as const), lineId: fc.constantFrom(...LINE_IDS) }),
  fc.record({ kind: fc.constant('retention' as const), minutes: fc.nat(40) }),
);

test('the page served after any write is the page a fresh read gives', async () => {
  const counts = { served: 0, readAgain: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom(...LINE_IDS), fc.nat(40)), { minLength: 4, maxLength: 40 }),
      fc.integer({ min: 1, max: 5 }),
      fc.nat(3),
      writeArb,
      fc.boolean(),
      async (messages, limit, pagesBefore, write, afterLookAhead) => {
        const store = t.store;
        const hubId = String(nextHub++);
        await t.hubs.add(hubId, {});
        let now = 1_000;
        const ops = messages.map(([lineId, minute], n) => message(n, lineId, minute));
        await store.messages.ingest(hubId, ops, now);

        const readAhead = new FeedReadAhead(store.changes);
        let cursor = 0;
        for (let n = 0; n < pagesBefore; n++) {
          const page = await readFeedPage(store, readAhead, hubId, cursor, limit);
          cursor = page.at(-1)?.seq ?? cursor;
        }
        // The last page read was full: the next is being read ahead. Let it finish first, or not.
        if (afterLookAhead) await new Promise((resolve) => setTimeout(resolve, 30));
        now += 1;
        switch (write.kind) {
          case 'append':
            await store.messages.ingest(hubId, [message(100, write.lineId, 50)], now);
            break;
          case 'unsend':
            await store.messages.ingest(hubId, [{ kind: 'unsend', sourceId: `s${write.n}`, at: now }], now);
            break;
          case 'rename':
            await store.contacts.upsert(hubId, write.lineId, { name: write.name }, now);
            break;
          case 'erase':
            await store.contacts.erase(hubId, write.lineId, now);
            break;
          case 'retention':
            await store.retention.purgeBatch(hubId, BASE_TIME + write.minutes * 60_000, 1000, now, true);
            break;
        }
        const served = await readFeedPage(store, readAhead, hubId, cursor, limit);
        const fresh: Change[] = await store.changes.page(hubId, cursor, limit);
        assert.deepEqual(served, fresh, `after ${write.kind}, page after ${cursor}`);
        counts.served += readAhead.counts.served;
        counts.readAgain += readAhead.counts.readAgain;
      },
    ),
    { numRuns: 60 },
  );
  // Both ways were taken: pages served as read ahead, and pages read again after a change.
  assert.ok(counts.served > 0 && counts.readAgain > 0, JSON.stringify(counts));
});
