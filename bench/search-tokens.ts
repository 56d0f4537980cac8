/**
 * What the search index's tokens cost FTS5 itself (issue 18's index cost), without the rest of the
 * store: messages of the bench dataset's kind written into an FTS5 table with the DDL of
 * `message_search` (src/store/sqlite/sqlite.search.ts), WAL, synchronous NORMAL, in transactions of
 * an import's size and of a webhook's. For choosing a token scheme before a migration rebuilds the
 * index; bench/results/2026-11-28-issue-18-index-cost.md.
 *
 *   node --import tsx bench/search-tokens.ts [--messages 200000] [--per-transaction 5000,8]
 *
 * Schemes: `today` (src/store/sql/search.ts: a `u` token per character and a `b` token per pair,
 * 6 hex digits a code point); `bigrams-36` (only pairs, 4 base-36 digits a code point, the last
 * character paired with `zzzz`, so that a one-character term is a prefix query).
 */
import fs from 'node:fs';
import path from 'node:path';
import { messageTokens } from '../src/store/sql/search.js';
import { openDatabase } from '../src/store/sqlite/sqlite.driver.js';
import { normaliseText } from '../src/store/store.js';
import { readArgs } from './args.js';
import { prng } from './dataset.js';
import { ROOT } from './processes.js';

const args = readArgs(
  'node --import tsx bench/search-tokens.ts [--messages 200000] [--per-transaction 5000,8]',
  {
    values: ['messages', 'per-transaction'],
  },
);
const count = args.number('messages', 200_000, { min: 1000, whole: true });
const perTransaction = (args.string('per-transaction') ?? '5000,8').split(',').map((n) => Number(n.trim()));

const JA = [
  '予約の変更をお願いしたいです',
  'ありがとうございます。',
  '明日の14時は空いていますか？',
  '駐車場はありますか？',
];
const EN = ['Can I change my booking to Friday?', 'Thanks so much 👍', 'Sorry, running 10 minutes late'];
const random = prng(42);
const pick = (items: string[]) => items[Math.floor(random() * items.length)] ?? '';
function text(): string {
  const kind = random();
  if (kind < 0.05) return `[Sticker]\nID: ${1 + Math.floor(random() * 52002800)}`;
  if (kind < 0.08) return `[Image]\nID: ${Math.floor(random() * 1e15)}`;
  const parts: string[] = [];
  for (let i = 1 + Math.floor(random() * random() * 8); i > 0; i--) {
    parts.push(random() < 0.6 ? pick(JA) : pick(EN));
    if (random() < 0.15) parts.push('\n');
  }
  return parts.join(random() < 0.5 ? '' : ' ');
}

const BASE36 = new Map<number, string>();
function base36(codePoint: number): string {
  let code = BASE36.get(codePoint);
  if (code === undefined) {
    code = codePoint.toString(36).padStart(4, '0');
    if (BASE36.size < 65_536) BASE36.set(codePoint, code);
  }
  return code;
}
const END = 36 ** 4 - 1; // `zzzz`, above every code point

function bigrams36(msg: string): string {
  const normalised = normaliseText(msg);
  const seen = new Set<number>();
  let out = '';
  let previous = -1;
  let previousCode = '';
  const add = (next: number, nextCode: string) => {
    const key = previous * (END + 1) + next;
    if (seen.has(key)) return;
    seen.add(key);
    out += out === '' ? previousCode + nextCode : ` ${previousCode}${nextCode}`;
  };
  for (let i = 0; i < normalised.length; i++) {
    const codePoint = normalised.codePointAt(i) ?? 0;
    if (codePoint > 0xffff) i++;
    const code = base36(codePoint);
    if (previous >= 0) add(codePoint, code);
    previous = codePoint;
    previousCode = code;
  }
  if (previous >= 0) add(END, 'zzzz');
  return out;
}

const schemes: Record<string, (msg: string) => string> = { today: messageTokens, 'bigrams-36': bigrams36 };
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
