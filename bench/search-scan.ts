/**
 * The baseline of `npm run bench -- search`, in its own process: the same queries answered by a
 * brute-force scan, reading the hub's messages newest first straight from the database (no index)
 * and keeping those that hold every term by §12's rule until a page (20) is found. It also makes
 * one whole pass over the hub to say how many of its messages hold each term, and picks the digit
 * triple held by the share nearest 0.1% as the rare term. Prints one JSON line.
 *
 *   node --import tsx bench/search-scan.ts sqlite|postgres <hubId> <seconds per term> <term>...
 */

import path from 'node:path';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { matchesAll } from '../src/store/sql/search.js';
import { openDatabase } from '../src/store/sqlite/sqlite.driver.js';
import { normaliseText } from '../src/store/store.js';
import { PG_BENCH, percentile, type StoreKind } from './feed-common.js';
import { ROOT } from './processes.js';

const [kind = 'sqlite', hubId = '', secondsText = '5', ...terms] = process.argv.slice(2) as [
  StoreKind,
  ...string[],
];
const PAGE = 20;
const BATCH = 2_000;
const NEWEST_FIRST = 'SELECT msg FROM messages WHERE hub_id = $1 ORDER BY created_at DESC, id DESC';

/** Each batch of msg texts, newest first, until `visit` says stop. */
async function scan(visit: (batch: string[]) => boolean): Promise<void> {
  if (kind === 'sqlite') {
    const db = openDatabase(path.join(ROOT, 'bench', '.data', 'sqlite', 'chatlog.db'), { readonly: true });
    try {
      db.pragma('mmap_size = 0');
      let batch: string[] = [];
      for (const row of db
        .prepare(NEWEST_FIRST.replace('$1', '?'))
        .pluck()
        .iterate(hubId) as Iterable<string>) {
        batch.push(row);
        if (batch.length === BATCH) {
          if (!visit(batch)) return;
          batch = [];
        }
      }
      if (batch.length > 0) visit(batch);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: PG_BENCH.url });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${PG_BENCH.schema}`);
    await client.query('BEGIN');
    const cursor = client.query(new Cursor<{ msg: string }>(NEWEST_FIRST, [hubId]));
    for (;;) {
      const rows = await cursor.read(BATCH);
      if (rows.length === 0 || !visit(rows.map((row) => row.msg))) break;
    }
    await cursor.close();
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

// One whole pass: how many messages hold each term, and every digit triple.
const normalisedTerms = terms.map((term) => term.split(/\s+/u).map(normaliseText));
const holding = new Array<number>(terms.length).fill(0);
const triples = new Map<string, number>();
let total = 0;
const passStarted = performance.now();
await scan((batch) => {
  for (const msg of batch) {
    total += 1;
    normalisedTerms.forEach((t, i) => {
      if (matchesAll(msg, t)) holding[i] = (holding[i] ?? 0) + 1;
    });
    const seen = new Set<string>();
    for (const match of normaliseText(msg).matchAll(/(?=(\d{3}))/g)) seen.add(match[1] ?? '');
    for (const triple of seen) triples.set(triple, (triples.get(triple) ?? 0) + 1);
  }
  return true;
});
const passSeconds = (performance.now() - passStarted) / 1000;
let rare = '';
let rareCount = 0;
for (const [triple, count] of triples) {
  if (rare === '' || Math.abs(count / total - 0.001) < Math.abs(rareCount / total - 0.001)) {
    rare = triple;
    rareCount = count;
  }
}
const asked = [...terms, rare];
const shares = Object.fromEntries(
  asked.map((term, i) => [term, (i < terms.length ? (holding[i] ?? 0) : rareCount) / total]),
);

// The first page of each query by brute force, again and again for a while.
const baseline: Record<string, { p50Ms: number; runs: number; rowsRead: number; found: number }> = {};
for (const term of asked) {
  const words = term.split(/\s+/u).map(normaliseText);
  const times: number[] = [];
  let rowsRead = 0;
  let found = 0;
  const until = performance.now() + Number(secondsText) * 1000;
  while (times.length < 3 || (performance.now() < until && times.length < 200)) {
    const started = performance.now();
    rowsRead = 0;
    found = 0;
    await scan((batch) => {
      for (const msg of batch) {
        rowsRead += 1;
        if (matchesAll(msg, words) && ++found === PAGE) return false;
      }
      return true;
    });
    times.push(performance.now() - started);
  }
  baseline[term] = { p50Ms: percentile(times, 0.5), runs: times.length, rowsRead, found };
}
process.stdout.write(`${JSON.stringify({ total, passSeconds, rare, shares, baseline })}\n`);
