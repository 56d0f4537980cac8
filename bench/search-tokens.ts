/**
 * What the search index's tokens cost FTS5 itself (issue 18's index cost), without the rest of the
 * store: messages of the bench dataset's kind written into an FTS5 table with the DDL of
 * `message_search` (src/store/sqlite/sqlite.search.ts), WAL, synchronous NORMAL, in transactions of
 * an import's size and of a webhook's; bench/results/2026-11-28-issue-18-tokens.md.
 *
 *   node --import tsx bench/search-tokens.ts [--messages 200000] [--per-transaction 5000,8]
 *
 * Texts: bench/dataset.ts's large hub (the same PRNG and corpus). Schemes: `migration 9` (the tokens
 * before migration 16: a `u` token for each character and a `b` token for each pair, 6 hex digits a
 * code point); `today` (src/store/sql/search.ts: a 5-character token for each pair of characters
 * between white space, 3 for each last character before it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { messageTokens } from '../src/store/sql/search.js';
import { openDatabase } from '../src/store/sqlite/sqlite.driver.js';
import { normaliseText } from '../src/store/store.js';
import { readArgs } from './args.js';
import { messageText, prng } from './dataset.js';
import { ROOT } from './processes.js';

const args = readArgs(
  'node --import tsx bench/search-tokens.ts [--messages 200000] [--per-transaction 5000,8]',
  {
    values: ['messages', 'per-transaction'],
  },
);
const count = args.number('messages', 200_000, { min: 1000, whole: true });
const perTransaction = (args.string('per-transaction') ?? '5000,8').split(',').map((n) => Number(n.trim()));

const random = prng(42);
const text = () => messageText(random).msg;

const HEX6 = new Map<number, string>();
function hex6(codePoint: number): string {
  let hex = HEX6.get(codePoint);
  if (hex === undefined) {
    hex = codePoint.toString(16).padStart(6, '0');
    if (HEX6.size < 65_536) HEX6.set(codePoint, hex);
  }
  return hex;
}

/** The tokens of migration 9 (src/store/sql/search.ts before migration 16), as they were written. */
function migration9Tokens(msg: string): string {
  const text = normaliseText(msg);
  const seen = new Set<number>();
  let out = '';
  let previous = -1;
  let previousHex = '';
  for (let i = 0; i < text.length; i++) {
    const codePoint = text.codePointAt(i) ?? 0;
    if (codePoint > 0xffff) i++;
    const hex = hex6(codePoint);
    if (previous >= 0) {
      const bigram = 0x110000 + previous * 0x110000 + codePoint;
      if (!seen.has(bigram)) {
        seen.add(bigram);
        out += ` b${previousHex}${hex}`;
      }
    }
    if (!seen.has(codePoint)) {
      seen.add(codePoint);
      out += out === '' ? `u${hex}` : ` u${hex}`;
    }
    previous = codePoint;
    previousHex = hex;
  }
  return out;
}

const schemes: Record<string, (msg: string) => string> = {
  'migration 9': migration9Tokens,
  today: messageTokens,
};
const messages = Array.from({ length: count }, text);
const dir = path.join(ROOT, 'bench', '.data', 'search-tokens');
fs.mkdirSync(dir, { recursive: true });

console.log(
  '| scheme | messages a transaction | µs a message (of which tokens in JS) | token characters a message | file bytes a message |',
);
console.log('|---|---:|---:|---:|---:|');
for (const [name, tokens] of Object.entries(schemes)) {
  for (const size of perTransaction) {
    const file = path.join(dir, `${name}-${size}.db`);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    const db = openDatabase(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE VIRTUAL TABLE s USING fts5(tokens, content='', contentless_delete=1, detail=none, tokenize='unicode61');
      INSERT INTO s (s, rank) VALUES ('deletemerge', 0);`);
    const insert = db.prepare('INSERT INTO s (rowid, tokens) VALUES (?, ?)');
    // Webhook-sized transactions are many: a fifth of the messages is enough to see their cost.
    const n = size < 100 ? Math.ceil(count / 5) : count;
    let inJs = 0;
    let characters = 0;
    const started = performance.now();
    for (let first = 0; first < n; first += size) {
      db.exec('BEGIN');
      for (let i = first; i < Math.min(n, first + size); i++) {
        const before = performance.now();
        const made = tokens(messages[i] ?? '');
        inJs += performance.now() - before;
        characters += made.length;
        insert.run(i + 1, made);
      }
      db.exec('COMMIT');
    }
    const elapsed = performance.now() - started;
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = fs.statSync(file).size;
    console.log(
      `| ${name} | ${size} | ${((elapsed * 1000) / n).toFixed(1)} (${((inJs * 1000) / n).toFixed(1)}) | ${(characters / n).toFixed(0)} | ${(bytes / n).toFixed(0)} |`,
    );
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  }
}
