/**
 * CONTRACT §12 as a property of the store, on SQLite and (CHATLOG_TEST_STORE=postgres) PostgreSQL:
 * random messages of Japanese (hiragana, katakana, half-width kana, kanji), English, full-width
 * Latin, emoji and line breaks, stored live (alone, together, beside unsends) or imported; random
 * unsends; live messages indexed at random moments (until then found from the index's queue); random queries, mostly pieces of stored messages (one- and two-character Japanese
 * terms, terms across a line break, several terms), with random day bounds, contact and page size.
 * Every page followed to the end gives exactly what a plain filter over the hub's messages gives,
 * in the same order.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { termsOf } from '../../src/modules/search/search.usecases.js';
import type { IngestOperation, SearchQuery, Store } from '../../src/store/store.js';
import { createTestStore, type TestStore } from '../helpers.js';

let t: TestStore;
let nextHub = 8000;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

/** Characters are strings: an emoji with its skin tone, a kana with its sound mark, are several code points. */
const CHARS = [
  ...'あいうかがきさしすたちっつなにのはばぱまやゃよらりわをん',
  ...'アイカガキサシタチツテトフォンャ',
  ...'ｱｲｶｷﾌｫﾝｯﾞﾟ',
  ...'予約定未東京日本語確認変更',
  ...'abcxyzABCXYZ',
  ...'ＡＢＣａｂｃ１２',
  ...'İßΣσ',
  '😀',
  '🎉',
  '👍🏻',
  ' ',
  '\n',
  '\n',
  '\u3000',
];
const LINE_IDS = ['Ua', 'Ub', 'Uc'];
/** A few times, so that many messages share one (ties go newest received first). */
const TIMES = [1_700_000_000_000, 1_700_000_000_000, 1_700_086_400_000, 1_700_172_800_000, 1_700_259_200_000];

const normalise = (text: string) => text.normalize('NFKC').toLowerCase();

const textArb = fc.array(fc.constantFrom(...CHARS), { maxLength: 14 }).map((chars) => chars.join(''));
const messageArb = fc.record({
  lineId: fc.constantFrom(...LINE_IDS),
  text: textArb,
  at: fc.constantFrom(...TIMES),
});
/** How a group of messages arrives: live requests committed at once, live beside an unsend, or an import. */
const arrivalArb = fc.record({
  way: fc.constantFrom('live' as const, 'live' as const, 'mixed' as const, 'import' as const),
  messages: fc.array(messageArb, { minLength: 1, maxLength: 6 }),
  unsend: fc.nat(40),
  /**
   * The live messages queued for the index so far are indexed after this arrival (else they stay
   * queued, found from the queue): some of a hub's messages indexed, some not, some unsent of each.
   */
  indexAfter: fc.boolean(),
});
/** A term: a piece of a stored message's normalised text (start and length picked later), or random text. */
const termArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ of: fc.nat(1000), start: fc.nat(40), length: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 1, arbitrary: textArb.filter((text) => text.trim() !== '').map((text) => ({ text })) },
);
const queryArb = fc.record({
  terms: fc.array(termArb, { minLength: 1, maxLength: 3 }),
  /** Through the API's rule (normalise, split on white space) rather than terms as they are. */
  asQ: fc.boolean(),
  lineId: fc.option(fc.constantFrom(...LINE_IDS, 'Unone'), { nil: undefined }),
  fromMs: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
  toMsExclusive: fc.option(fc.constantFrom(...TIMES.map((time) => time + 1)), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 7 }),
  /** Mostly 0, so that the index answers; sometimes a few rows read before it. */
  scanFirst: fc.constantFrom(0, 0, 1, 3, 1000),
});

interface Stored {
  id: string;
  seq: number;
  lineId: string;
  msg: string;
  createdAt: number;
}

/** The hub's messages as the change feed gives them, in the order received. */
async function hubMessages(store: Store, hubId: string): Promise<Stored[]> {
  const all: Stored[] = [];
  let after = 0;
  for (;;) {
    const page = await store.changes.page(hubId, after, 500);
    if (page.length === 0) return all;
    for (const change of page) {
      after = change.seq;
      if (change.type === 'message.created') {
        all.push({
          id: change.id,
          seq: change.seq,
          lineId: change.lineId,
          msg: change.message.msg,
          createdAt: change.message.createdAt,
        });
      }
    }
  }
}

/** The plain filter: every message whose normalised text holds every term, newest first. */
function oracle(messages: readonly Stored[], query: Omit<SearchQuery, 'limit' | 'hubId'>): string[] {
  return messages
    .filter(
      (m) =>
        query.terms.every((term) => normalise(m.msg).includes(term)) &&
        (query.lineId === undefined || m.lineId === query.lineId) &&
        (query.fromMs === undefined || m.createdAt >= query.fromMs) &&
        (query.toMsExclusive === undefined || m.createdAt < query.toMsExclusive),
    )
    .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq)
    .map((m) => m.id);
}

/** Every page of a search, following the last result each time. */
async function allPages(store: Store, query: SearchQuery): Promise<string[]> {
  const ids: string[] = [];
  let before: SearchQuery['before'];
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 1000, 'the pages never end');
    const { hits, hasMore } = await store.search.page({ ...query, before });
    assert.ok(hits.length <= query.limit, `${hits.length} results for a limit of ${query.limit}`);
    ids.push(...hits.map((hit) => hit.id));
    const last = hits.at(-1);
    if (!hasMore) return ids;
    assert.ok(last, 'hasMore with no result');
    before = { createdAt: last.message.createdAt, rowId: last.rowId };
  }
}

test('search results, page after page, are exactly the plain filter over the hub, in order', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(arrivalArb, { minLength: 1, maxLength: 6 }),
      fc.array(queryArb, { minLength: 1, maxLength: 8 }),
      async (arrivals, queries) => {
        nextHub += 1;
        const hubId = String(nextHub);
        const now = Date.now();
        await t.store.hubs.upsert(hubId, {}, now);
        let source = 0;
        const sources: string[] = [];
        const live = (m: { lineId: string; text: string; at: number }): IngestOperation => {
          source += 1;
          const sourceId = `ingest:s${source}`;
          sources.push(sourceId);
          const sender = source % 2 === 0 ? null : 'You';
          return {
            kind: 'message',
            lineId: m.lineId,
            sender,
            msg: m.text,
            contentType: 'text',
            createdAt: m.at,
            sourceId,
            sourceKind: 'user',
            sourceChatId: null,
          };
        };
        for (const arrival of arrivals) {
          const unsend = sources[arrival.unsend % Math.max(1, sources.length)];
          if (arrival.way === 'import') {
            const batch = arrival.messages.map((m) => {
              source += 1;
              return {
                lineId: m.lineId,
                vid: '',
                name: '',
                sender: null,
                msg: m.text,
                contentType: 'text',
                createdAt: m.at,
                sourceId: `import:s${source}`,
              };
            });
            await t.store.messages.importAll(
              hubId,
              (async function* () {
                yield batch;
              })(),
              now,
            );
          } else if (arrival.way === 'live') {
            // Sent at once: committed together (PostgreSQL's one-statement path).
            await Promise.all(arrival.messages.map((m) => t.store.messages.ingest(hubId, [live(m)], now)));
          } else {
            // Beside an unsend in one request: the shared path, message by message.
            const ops: IngestOperation[] = arrival.messages.map(live);
            if (unsend) ops.push({ kind: 'unsend', sourceId: unsend, at: now });
            await t.store.messages.ingest(hubId, ops, now);
          }
          if (unsend && arrival.way !== 'mixed' && arrival.unsend % 3 === 0) {
            await t.store.messages.ingest(hubId, [{ kind: 'unsend', sourceId: unsend, at: now }], now);
          }
          if (arrival.indexAfter) await t.store.search.indexQueued();
        }

        const messages = await hubMessages(t.store, hubId);
        for (const q of queries) {
          const raw = q.terms.map((term) => {
            if ('text' in term) return normalise(term.text);
            const text = Array.from(normalise(messages[term.of % Math.max(1, messages.length)]?.msg ?? 'x'));
            const start = term.start % Math.max(1, text.length);
            return text.slice(start, start + term.length).join('') || 'x';
          });
          // Terms as they are may hold a line break or a space (the store takes them so); through q they split.
          const terms = q.asQ ? termsOf(raw.join(' ')) : raw;
          if (!terms) continue;
          const query = {
            hubId,
            terms,
            lineId: q.lineId,
            fromMs: q.fromMs,
            toMsExclusive: q.toMsExclusive,
            limit: q.limit,
            scanFirst: q.scanFirst,
          };
          assert.deepEqual(await allPages(t.store, query), oracle(messages, query), JSON.stringify(query));
        }
      },
    ),
    { numRuns: Number(process.env.SEARCH_PROPERTY_RUNS ?? 60) },
  );
});

test('every two-character term of every message finds it', async () => {
  nextHub += 1;
  const hubId = String(nextHub);
  await t.store.hubs.upsert(hubId, {}, Date.now());
  const texts = ['ご予約ありがとうございます', 'ｱｲﾌｫﾝ\nＡＢＣ', '👍🏻東京\n日本語'];
  await t.store.messages.ingest(
    hubId,
    texts.map((msg, i) => ({
      kind: 'message',
      lineId: 'Ua',
      sender: null,
      msg,
      contentType: 'text',
      createdAt: 1_700_000_000_000 + i,
      sourceId: `ingest:t${i}`,
      sourceKind: 'user',
      sourceChatId: null,
    })),
    Date.now(),
  );
  for (const [i, text] of texts.entries()) {
    const chars = Array.from(normalise(text));
    for (let start = 0; start + 1 < chars.length; start++) {
      const term = chars.slice(start, start + 2).join('');
      const { hits } = await t.store.search.page({ hubId, terms: [term], limit: 10 });
      assert.ok(
        hits.some((hit) => hit.message.msg === texts[i]),
        `${JSON.stringify(term)} does not find ${JSON.stringify(text)}`,
      );
    }
  }
});
