/**
 * The feed's pages as the database writes them (changes.ts feedJsonSql, on SQLite and with
 * CHATLOG_TEST_STORE=postgres PostgreSQL) are byte for byte what the serializer writes for the
 * same changes read as values: random names, texts and senders (quotes, backslashes, control
 * characters, U+2028, emoji, Japanese, lone surrogates), times from year 0 to 9999, LINE's own JSON, and every kind
 * of change, in pages of every size.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../../src/lib/calendar.js';
import { serializeChange } from '../../src/modules/changes/changes.serializer.js';
import type { IngestOperation } from '../../src/store/store.js';
import { createTestStore, type TestStore } from '../helpers.js';

let t: TestStore;
let nextHub = 9100;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

// PostgreSQL text holds no NUL; every other character is fair.
const char = fc.oneof(
  fc.constantFrom(
    '"',
    '\\',
    '\n',
    '\r',
    '\t',
    '\b',
    '\f',
    '\u0001',
    '\u001f',
    '\u007f',
    '\u2028',
    '😀',
    '日',
    '/',
    '<',
    // Half of an emoji, as JavaScript strings may hold: the page is still UTF-8.
    '\ud83d',
    '\ude00',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => !c.includes('\u0000')),
);
const text = fc.string({ unit: char, maxLength: 12 });
const instant = fc.oneof(
  fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }),
  fc.constantFrom(MIN_TIMESTAMP_MS, MAX_TIMESTAMP_MS, -1, 0, 999, -62_135_596_800_001, -62_135_596_800_000),
);
const LINE_IDS = ['U1', 'U2', 'U3'];

const messageArb = fc.record({
  lineId: fc.constantFrom(...LINE_IDS),
  sender: fc.option(text, { nil: null }),
  msg: text,
  contentType: fc.constantFrom('text', 'image', 'sticker'),
  createdAt: instant,
  line: fc.option(
    fc.record({ message: fc.record({ type: fc.constant('text'), text }), quote: fc.option(text) }),
    { nil: null },
  ),
});

const changeArb = fc.oneof(
  fc.record({ kind: fc.constant('unsend' as const), n: fc.nat(20) }),
  fc.record({
    kind: fc.constant('contact' as const),
    lineId: fc.constantFrom(...LINE_IDS),
    vid: text,
    name: text,
  }),
  fc.record({ kind: fc.constant('erase' as const), lineId: fc.constantFrom(...LINE_IDS) }),
  fc.record({ kind: fc.constant('retention' as const), before: instant }),
);

test('a page of the feed as its JSON is what the serializer writes for the same changes', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(messageArb, { minLength: 1, maxLength: 20 }),
      fc.array(changeArb, { maxLength: 4 }),
      fc.integer({ min: 1, max: 25 }),
      async (messages, changes, limit) => {
        const store = t.store;
        const hubId = String(nextHub++);
        await t.hubs.add(hubId, {});
        const ops: IngestOperation[] = messages.map((m, n) => ({
          kind: 'message',
          lineId: m.lineId,
          sender: m.sender,
          msg: m.msg,
          contentType: m.contentType,
          createdAt: m.createdAt,
          sourceId: `s${n}`,
          line: m.line && JSON.stringify(m.line),
          sourceKind: 'user',
          sourceChatId: null,
        }));
        let now = 1_000;
        await store.messages.ingest(hubId, ops, now);
        for (const change of changes) {
          now += 1;
          if (change.kind === 'unsend')
            await store.messages.ingest(hubId, [{ kind: 'unsend', sourceId: `s${change.n}`, at: now }], now);
          else if (change.kind === 'contact')
            await store.contacts.upsert(hubId, change.lineId, { vid: change.vid, name: change.name }, now);
          else if (change.kind === 'erase') await store.contacts.erase(hubId, change.lineId, now);
          else await store.retention.purgeBatch(hubId, change.before, 1000, now, true);
        }

        for (let after = 0; ; ) {
          const json = await store.changes.pageJson(hubId, after, limit);
          const values = await store.changes.page(hubId, after, limit + 1);
          const page = values.slice(0, limit);
          const expected = page.map(serializeChange).join(',');
          assert.equal(Buffer.from(json.body).toString('utf8'), expected);
          // Byte for byte: bytes that are not UTF-8 would read as U+FFFD above too.
          assert.ok(Buffer.from(json.body).equals(Buffer.from(expected, 'utf8')));
          assert.equal(json.count, page.length);
          assert.equal(json.lastSeq, page.at(-1)?.seq);
          assert.equal(json.hasMore, values.length > limit);
          if (!json.hasMore) break;
          after = json.lastSeq ?? after;
        }
      },
    ),
    { numRuns: 60 },
  );
});
