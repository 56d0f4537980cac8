/**
 * The baseline of `npm run bench -- reads --store postgres`, in its own process: the raw scan on
 * PostgreSQL, the very rows of an answer read by the answer's own statement (the store's, chosen by
 * the store's rule: by time up to BY_TIME_MAX_ROWS rows, else contact by contact) through
 * node-postgres, a server-side cursor read 512 rows at a time in array mode, as the store read them
 * before it read them by COPY, and counted, nothing built from them. Prints one JSON line: rows/s
 * for each range, best of `rounds`.
 *
 *   node --import tsx bench/reads-scan-postgres.ts <url> <schema> <hubId> <rounds> <name>=<fromMs>:<toMs>...
 */
import pg from 'pg';
import Cursor from 'pg-cursor';
import {
  BY_TIME_MAX_ROWS,
  STREAM_BY_TIME_SQL,
  STREAM_SQL,
  types,
} from '../src/store/postgres/postgres.store.js';
import { BATCH_ROWS } from '../src/store/sql/answers.js';

const [url = '', schema = '', hubId = '', roundsText = '3', ...ranges] = process.argv.slice(2);
const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
await client.connect();
const result: Record<string, { rows: number; rowsPerSecond: number }> = {};
for (const range of ranges) {
  const [name = '', bounds = ''] = range.split('=');
  const [from, to] = bounds.split(':').map(Number) as [number, number];
  const counted = await client.query<{ n: string }>(
    'SELECT COUNT(*) AS n FROM messages WHERE hub_id = $1 AND created_at >= $2 AND created_at < $3',
    [hubId, from, to],
  );
  const short = name !== 'whole' && Number(counted.rows[0]?.n) <= BY_TIME_MAX_ROWS;
  const sql = short ? STREAM_BY_TIME_SQL : STREAM_SQL;
  let best = 0;
  let rows = 0;
  for (let round = 0; round < Number(roundsText); round++) {
    const started = performance.now();
    let seconds = 0;
    let passes = 0;
    rows = 0;
    do {
      const cursor = client.query(new Cursor(sql, [hubId, from, to], { rowMode: 'array', types }));
      for (;;) {
        const batch = await cursor.read(BATCH_ROWS);
        rows += batch.length;
        if (batch.length < BATCH_ROWS) break;
      }
      await cursor.close();
      passes += 1;
      seconds = (performance.now() - started) / 1000;
    } while (seconds < 1);
    best = Math.max(best, rows / seconds);
    rows /= passes;
  }
  result[name] = { rows, rowsPerSecond: best };
}
await client.end();
process.stdout.write(`${JSON.stringify(result)}\n`);
