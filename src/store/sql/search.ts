/**
 * Search (CONTRACT §12), written once for both engines: how a message becomes index tokens, how a
 * query becomes the tokens every match must hold, and the page read (candidates from the index,
 * newest first, each confirmed with the contract's exact rule before it counts).
 *
 * The index holds one token for each pair of adjacent characters (bigram) of a message's normalised
 * text, as Elasticsearch's cjk_bigram does, but for pairs with white space (a query's terms never
 * hold any), and one for the last character before white space or the end: a term of two or more
 * characters can only be in a message that holds the tokens of all its pairs; a one-character term
 * only in one holding a token that begins with that character's part (a prefix query). Tokens are
 * short ASCII words, which SQLite's unicode61 tokenizer and PostgreSQL's `simple` configuration keep
 * as they are: a pair is its first code point modulo 36³ in 3 base-36 digits, then its second's
 * modulo 36² in 2 (`pairToken`); the last character, its 3 digits alone. Two pairs can share a token
 * (the moduli): the index then gives a candidate that is not a match, and every candidate is
 * confirmed by the contract's rule. SQLite's trigram tokenizer and pg_trgm cannot find a
 * two-character term by index. These tokens (migration 16; about 35 a message) cost FTS5 a third to
 * two fifths less time and room than the unigrams and bigrams in hex before them (about 75 a
 * message; bench/search-tokens.ts).
 *
 * An engine supplies only its DDL, how it writes index rows and the condition that matches them
 * (SearchEngine); deleting a message removes its index row in the same transaction (SQLite: a
 * trigger; PostgreSQL: ON DELETE CASCADE).
 */
import { normaliseText, type SearchHit, type SearchPort, type SearchQuery } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

const FIRST_MOD = 36 ** 3;
const SECOND_MOD = 36 ** 2;

/**
 * A code point's part of a token: modulo 36^digits, in `digits` base-36 digits. The parts of the
 * code points seen are kept: a hub's messages use a few thousand characters.
 */
function tokenPart(digits: number): (codePoint: number) => string {
  const modulus = 36 ** digits;
  const kept = new Map<number, string>();
  return (codePoint) => {
    let part = kept.get(codePoint);
    if (part === undefined) {
      part = (codePoint % modulus).toString(36).padStart(digits, '0');
      if (kept.size < 65_536) kept.set(codePoint, part);
    }
    return part;
  };
}

/** A code point as the first character of a pair (modulo 36³), or a run's last character. */
const firstPart = tokenPart(3);
/** A code point as the second character of a pair (modulo 36²). */
const secondPart = tokenPart(2);

/** The token of a pair of code points: 5 base-36 digits. */
export const pairToken = (first: number, second: number) => firstPart(first) + secondPart(second);

/**
 * Whether a code point is white space as a query's `\s` split sees it (ECMAScript's WhiteSpace and
 * LineTerminator): no term holds one, so no pair with one is indexed.
 */
export function isQuerySpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * The index tokens of one message, space-separated, each once, in the order of their first place:
 * for each run of characters between white space, the token of each pair, then its last
 * character's part (a one-character term there has no pair that begins with it). On every
 * message and webhook's path: written without an array or a string per character (4.4 s for the
 * bench's first 200,000 messages before, see bench/results/2026-11-24-issues-18-19.md).
 */
export function messageTokens(msg: string): string {
  const text = normaliseText(msg);
  const seen = new Set<number>();
  let out = '';
  const add = (key: number, token: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    out += out === '' ? token : ` ${token}`;
  };
  let previous = -1;
  for (let i = 0; i < text.length; i++) {
    let codePoint = text.codePointAt(i) ?? 0;
    if (codePoint > 0xffff) i++;
    if (isQuerySpace(codePoint)) codePoint = -1;
    if (previous >= 0) {
      // Keys: a pair's as a number below 36⁵; a last character's, negative.
      if (codePoint >= 0) {
        add((previous % FIRST_MOD) * SECOND_MOD + (codePoint % SECOND_MOD), pairToken(previous, codePoint));
      } else {
        add(-1 - (previous % FIRST_MOD), firstPart(previous));
      }
    }
    previous = codePoint;
  }
  if (previous >= 0) add(-1 - (previous % FIRST_MOD), firstPart(previous));
  return out;
}

/** A token every message holding all `terms` (normalised) holds; `prefix`: a token beginning so. */
export interface QueryToken {
  token: string;
  prefix: boolean;
}

/**
 * The tokens every message holding all `terms` (normalised) holds, each once: those of each run of a
 * term between white space (a query's terms hold none, the store's callers' may) and lone
 * surrogates (a store caller's term may hold half of a message's emoji). None when nothing is left:
 * every message may hold the terms.
 */
export function queryTokens(terms: readonly string[]): QueryToken[] {
  const tokens = new Map<string, QueryToken>();
  for (const term of terms) {
    let run: number[] = [];
    for (const char of `${term} `) {
      const codePoint = char.codePointAt(0) ?? 0;
      if (!isQuerySpace(codePoint) && (codePoint < 0xd800 || codePoint > 0xdfff)) {
        run.push(codePoint);
        continue;
      }
      const [only] = run;
      if (run.length === 1 && only !== undefined) {
        const token = firstPart(only);
        tokens.set(`${token}*`, { token, prefix: true });
      }
      for (let i = 0; i + 1 < run.length; i++) {
        const token = pairToken(run[i] ?? 0, run[i + 1] ?? 0);
        tokens.set(token, { token, prefix: false });
      }
      run = [];
    }
  }
  return [...tokens.values()];
}

/** The contract's rule itself: the normalised msg contains every normalised term. */
export const matchesAll = (msg: string, terms: readonly string[]): boolean => {
  const text = normaliseText(msg);
  return terms.every((term) => text.includes(term));
};

/** A message to index: its row id (messages.id), hub and text. */
export interface IndexedMessage {
  id: number;
  hubId: string;
  msg: string;
}

/** What an engine supplies: the rest is here. */
export interface SearchEngine {
  /** Creates the index (migrations 9 and 16), empty. */
  ddl: string;
  /**
   * Whether a live message is queued for the index and indexed in a batch after its transaction
   * (search-queue.ts), rather than in it.
   */
  indexLater: boolean;
  /** Creates search_pending (migration 17): message ids, each gone with its message. */
  pendingDdl: string;
  /** Writes the index rows of new messages, in the caller's transaction. */
  add(tx: Sql, messages: readonly IndexedMessage[]): Promise<void>;
  /**
   * A condition on `m` (messages) true for rows whose index holds every token or that are not
   * indexed yet (search-queue.ts PENDING_IDS), and its parameters; `few` when the engine found that few messages
   * hold them, so the read should start from those rather than walk the hub's messages newest first.
   */
  match(reads: Sql, tokens: readonly QueryToken[]): Promise<{ sql: string; params: string[]; few: boolean }>;
  /** `expr` written so that the planner does not read by an index of it (SQLite: `+expr`). */
  unindexed(expr: string): string;
  /**
   * Migration 16: statements that make the index anew, empty (`empty`), before every message is
   * indexed again, and after that (`filled`; PostgreSQL builds its GIN index then, at once).
   */
  rebuild: { empty: string; filled: string };
  /** The index's settings, made by migration 14 (statements; a comment when there are none). */
  settings: string;
  /**
   * Statements around the deletion of many messages in one transaction (a retention batch, an
   * erasure), in it: SQLite turns FTS5's merging off for it (see sqlite.search.ts).
   */
  deleting?: { before: string; after: string };
  /** The text as the engine keeps it, where it differs (PostgreSQL: U+0000 as U+FFFD, postgres.sql.ts). */
  keptText?: (text: string) => string;
}

/**
 * Writes no index row (the store option `searchIndex: false`): for `npm run bench -- search`, which
 * measures what indexing costs imports and ingest. Search still answers, from the rows written
 * before; a store serving users always indexes.
 */
export function withoutIndexWrites(engine: SearchEngine): SearchEngine {
  return { ...engine, add: async () => undefined, indexLater: false };
}

/** Index rows written per statement when a migration fills the index. */
const FILL_BATCH = 2_000;
/** A progress line on stderr every this many messages, for stores big enough to take a while. */
const FILL_PROGRESS_EVERY = 100_000;

/** Indexes every message already stored (migrations 9 and 16), in batches, with progress for big stores. */
export async function fillSearchIndex(tx: Transaction, engine: SearchEngine): Promise<void> {
  const total = (await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM messages'))?.n ?? 0;
  const report = Number(total) >= FILL_PROGRESS_EVERY;
  let after = 0;
  let done = 0;
  let reported = 0;
  for (;;) {
    const rows = await tx.all<{ id: number; hub_id: string; msg: string }>(
      'SELECT id, hub_id, msg FROM messages WHERE id > ? ORDER BY id LIMIT ?',
      [after, FILL_BATCH],
    );
    if (rows.length === 0) break;
    await engine.add(
      tx,
      rows.map((row) => ({ id: Number(row.id), hubId: row.hub_id, msg: row.msg })),
    );
    after = Number(rows.at(-1)?.id);
    done += rows.length;
    if (report && done - reported >= FILL_PROGRESS_EVERY) {
      reported = done;
      process.stderr.write(`chatlog: search index: ${done} of ${total} messages indexed\n`);
    }
  }
  if (report) process.stderr.write(`chatlog: search index: ${done} messages indexed\n`);
}

/** Messages read newest first, without the index, before the index is asked (SearchQuery.scanFirst). */
const SCAN_FIRST = 1_000;
/** Candidates read per statement: a few pages, so that rare misses of the index cost one more look. */
const MIN_BATCH = 100;
const MAX_BATCH = 4_000;

type HitTuple = {
  id: number;
  public_id: string;
  created_at: number;
  msg: string;
  content_type: string;
  sender: string;
  line_id: string;
  vid: string;
  name: string;
};

/**
 * One page of results, newest first (createdAt, then the row id), after `query.before`: candidates
 * from the index in batches, each confirmed with matchesAll, until `limit` + 1 are found (the
 * one more says whether there are more) or the candidates run out.
 */
export async function searchPage(
  sql: Sql,
  engine: SearchEngine,
  query: SearchQuery,
): Promise<{ hits: SearchHit[]; hasMore: boolean }> {
  const { hubId, limit } = query;
  // Compared with the text as the engine keeps it.
  const terms = engine.keptText ? query.terms.map(engine.keptText) : query.terms;
  let contactId: number | undefined;
  if (query.lineId !== undefined) {
    const contact = await sql.get<{ id: number }>(
      'SELECT id FROM contacts WHERE hub_id = ? AND line_id = ?',
      [hubId, query.lineId],
    );
    if (!contact) return { hits: [], hasMore: false };
    contactId = Number(contact.id);
  }
  // Asked of the index only when the first look without it did not decide the page: a common word
  // (a page from the newest messages) then never pays for it, which for a one-character word (a
  // prefix query) is most of its cost.
  let match: Awaited<ReturnType<SearchEngine['match']>> = { sql: '', params: [], few: false };
  /** The hub's messages in the query's bounds after `before`, newest first; by the index or not. */
  const select = (byIndex: boolean) => {
    // Few candidates: read them and sort them; many: walk the hub newest first, keeping candidates.
    const col = (expr: string) => (byIndex && match.few ? engine.unindexed(expr) : expr);
    return `
    SELECT m.id, m.public_id, m.created_at, m.msg, m.content_type,
           COALESCE(m.sender, NULLIF(c.name, ''), 'User') AS sender, c.line_id, c.vid, c.name
    FROM messages AS m JOIN contacts AS c ON c.id = m.contact_id
    WHERE ${col('m.hub_id')} = ? AND ${col('m.created_at')} >= ? AND ${col('m.created_at')} < ?
      AND (${col('m.created_at')} < ? OR (${col('m.created_at')} = ? AND m.id < ?))
      ${contactId === undefined ? '' : `AND ${col('m.contact_id')} = ?`}
      ${byIndex ? `AND ${match.sql}` : ''}
    ORDER BY m.created_at DESC, m.id DESC
    LIMIT ?`;
  };
  const hits: SearchHit[] = [];
  let before = query.before ?? { createdAt: Number.MAX_SAFE_INTEGER, rowId: Number.MAX_SAFE_INTEGER };
  /** Reads one batch and keeps its matches; true when the page is decided (full, or nothing after). */
  const readBatch = async (byIndex: boolean, size: number): Promise<{ done: boolean; hasMore: boolean }> => {
    const rows = await sql.all<HitTuple>(select(byIndex), [
      hubId,
      query.fromMs ?? Number.MIN_SAFE_INTEGER,
      query.toMsExclusive ?? Number.MAX_SAFE_INTEGER,
      before.createdAt,
      before.createdAt,
      before.rowId,
      ...(contactId === undefined ? [] : [contactId]),
      ...(byIndex ? match.params : []),
      size,
    ]);
    for (const row of rows) {
      if (!matchesAll(row.msg, terms)) continue;
      if (hits.length === limit) return { done: true, hasMore: true };
      const createdAt = Number(row.created_at);
      hits.push({
        rowId: Number(row.id),
        id: row.public_id,
        lineId: row.line_id,
        vid: row.vid,
        name: row.name,
        message: { sender: row.sender, msg: row.msg, contentType: row.content_type, createdAt },
      });
    }
    const last = rows.at(-1);
    if (rows.length < size || !last) return { done: true, hasMore: false };
    before = { createdAt: Number(last.created_at), rowId: Number(last.id) };
    return { done: false, hasMore: false };
  };
  // The newest messages first, without the index: a common word fills the page from a few hundred
  // rows, which costs less than gathering its many candidates from the index (bench, 2M hub).
  // In two steps: a page's worth of a common word is usually in the first few hundred.
  const scanFirst = query.scanFirst ?? SCAN_FIRST;
  const firstStep = Math.min(scanFirst, 10 * (limit + 1));
  for (const size of [firstStep, scanFirst - firstStep]) {
    if (size <= 0) continue;
    const page = await readBatch(false, size);
    if (page.done) return { hits, hasMore: page.hasMore };
  }
  // Each statement gathers the index's candidates anew (SQLite materialises the IN list): a term
  // whose candidates are often not matches (a digit triple's two bigrams) took ten statements for a
  // page, 240 ms on the bench's 2M hub. The batch doubles each time, so a page takes a few.
  const tokens = queryTokens(terms);
  if (tokens.length > 0) match = await engine.match(sql, tokens);
  let batch = Math.min(MAX_BATCH, Math.max(MIN_BATCH, 2 * (limit + 1)));
  for (;;) {
    // Without tokens (terms of white space alone), on without the index.
    const page = await readBatch(tokens.length > 0, batch);
    if (page.done) return { hits, hasMore: page.hasMore };
    batch = Math.min(MAX_BATCH, batch * 2);
  }
}

/** What the search port takes of the engine's own: its index, and how it rewrites its files. */
export interface SearchIndexEngine {
  /** The engine's index (read when first used). */
  index(): SearchEngine;
  /** Resolves once the index's files hold nothing deleted (SQLite rewrites them; others: at once). */
  compacted(): Promise<void>;
  resumeCompaction(): Promise<void>;
  /** Indexes every queued message now (SearchIndexer.drain). */
  indexQueued(): Promise<number>;
}

/** The search port (store.ts, CONTRACT §12). */
export function searchPort(engine: Engine, own: SearchIndexEngine): SearchPort {
  return engine.port(
    'search',
    {
      page: (query) => searchPage(engine.reads, own.index(), query),
      compacted: () => own.compacted(),
      resumeCompaction: () => own.resumeCompaction(),
      indexQueued: () => own.indexQueued(),
    },
    ['compacted', 'resumeCompaction', 'indexQueued'],
  );
}
