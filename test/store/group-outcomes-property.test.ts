/**
 * What each live write request is told, and what it leaves, against a plain oracle, on SQLite and
 * (CHATLOG_TEST_STORE=postgres) PostgreSQL, whose groups of messages take a path of their own
 * (src/store/postgres/postgres.fast-ingest.ts): random requests sent at once (one group commit, or
 * a few), with redeliveries inside a request, across requests and across groups, message ids that
 * another message has or that an unsend retired, media to download, new and known contacts, and a
 * request for a hub that does not exist. Each request is credited with what it stored first, in the
 * order sent; the unknown hub's request fails alone; every stored message is in the answer, the
 * feed (with an id no other has), the search, and, for media, the download queue.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { IngestOperation, IngestOutcome } from '../../src/store/store.js';
import { createTestStore, type TestStore } from '../helpers.js';

let t: TestStore;
let nextHub = 9100;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

const LINE_IDS = ['Ua', 'Ub', 'Uc'];
/** Few sources, so that redeliveries are common; few wanted ids, so that taken ids are too. */
const SOURCES = 8;
const WANTED_IDS = ['k1', 'k2', null, 'not an id!'];

const messageArb = fc.record({
  source: fc.nat(SOURCES - 1),
  lineId: fc.constantFrom(...LINE_IDS),
  id: fc.constantFrom(...WANTED_IDS),
  media: fc.boolean(),
});
const requestArb = fc.record({
  unknownHub: fc.nat(9).map((n) => n === 0),
  messages: fc.array(messageArb, { minLength: 1, maxLength: 3 }),
});
const scenarioArb = fc.record({
  /** Sources unsent before anything else: never stored; their ids retired where they had been. */
  unsentFirst: fc.subarray([0, 1, 2, 3, 4, 5, 6, 7], { maxLength: 2 }),
  groups: fc.array(fc.array(requestArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 }),
});

type Draft = { source: number; lineId: string; id: string | null; media: boolean };

/** Every message's text names its source and is searchable by a token of its own. */
const textOf = (source: number) => `zq${source}x message ${source}`;

function operation(m: Draft): IngestOperation {
  return {
    kind: 'message',
    lineId: m.lineId,
    sender: null,
    msg: textOf(m.source),
    contentType: m.media ? 'image' : 'text',
    createdAt: 1_700_000_000_000 + m.source * 1000,
    sourceId: `line:s${m.source}`,
    id: m.id,
    sourceKind: 'user',
    sourceChatId: null,
    ...(m.media && { content: { lineMessageId: `lm${m.source}`, kind: 'image' as const, fileName: null } }),
  };
}

test('each request is told what it stored first, and every stored message is in every read', async () => {
  await fc.assert(
    fc.asyncProperty(scenarioArb, async ({ unsentFirst, groups }) => {
      nextHub += 1;
      const hubId = String(nextHub);
      await t.store.hubs.upsert(hubId, {}, 1);
      const now = 1_800_000_000_000;
      for (const source of unsentFirst) {
        await t.store.messages.ingest(hubId, [{ kind: 'unsend', sourceId: `line:s${source}`, at: now }], now);
      }
      // The oracle: sources stored (with whether they are media), contacts known.
      const stored = new Map<number, boolean>();
      const contacts = new Set<string>();
      const unsent = new Set(unsentFirst);
      for (const group of groups) {
        const expected = group.map(({ unknownHub, messages }): IngestOutcome | 'fails' => {
          if (unknownHub) return 'fails';
          const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
          for (const m of messages) {
            // An unsent message is dropped before anything: it makes no contact.
            if (unsent.has(m.source)) {
              outcome.duplicates += 1;
              continue;
            }
            if (!contacts.has(m.lineId)) {
              contacts.add(m.lineId);
              outcome.contactsCreated.push(m.lineId);
            }
            if (stored.has(m.source)) outcome.duplicates += 1;
            else {
              outcome.stored += 1;
              stored.set(m.source, m.media);
            }
          }
          return outcome;
        });
        // Sent in one turn: they commit together (one group, or a few in the order sent).
        const results = await Promise.allSettled(
          group.map(({ unknownHub, messages }) =>
            t.store.messages.ingest(unknownHub ? 'no-such-hub' : hubId, messages.map(operation), now),
          ),
        );
        results.forEach((result, i) => {
          if (expected[i] === 'fails')
            assert.equal(result.status, 'rejected', `request ${i} of an unknown hub`);
          else {
            assert.equal(
              result.status,
              'fulfilled',
              `request ${i}: ${String((result as PromiseRejectedResult).reason)}`,
            );
            if (result.status === 'fulfilled') assert.deepEqual(result.value, expected[i], `request ${i}`);
          }
        });
      }

      const texts: string[] = [];
      for await (const batch of t.store.messages.stream({ hubId }))
        texts.push(...batch.map((row) => row.msg));
      assert.deepEqual(texts.sort(), [...stored.keys()].map(textOf).sort(), 'the answer');

      const feed = await t.store.changes.page(hubId, 0, 1000);
      const created = feed.flatMap((c) => (c.type === 'message.created' ? [c] : []));
      assert.deepEqual(created.map((c) => c.message.msg).sort(), texts, 'the feed');
      const ids = created.map((c) => c.id);
      assert.equal(new Set(ids).size, ids.length, `an id twice: ${ids}`);
      const seqs = feed.map((c) => c.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        'seq order',
      );

      for (const change of created) {
        const source = Number(change.message.msg.slice(2, change.message.msg.indexOf('x')));
        const { hits } = await t.store.search.page({ hubId, terms: [`zq${source}x`], limit: 5 });
        assert.deepEqual(
          hits.map((hit) => hit.id),
          [change.id],
          `the search for message ${source}`,
        );
        const item = await t.store.content.get(hubId, change.id);
        if (stored.get(source)) {
          assert.equal(item?.state, 'pending', `the download of message ${source}`);
          assert.equal(item?.lineMessageId, `lm${source}`);
        } else assert.equal(item, undefined, `a download for the text message ${source}`);
      }
    }),
    { numRuns: Number(process.env.GROUP_PROPERTY_RUNS ?? 40) },
  );
});
