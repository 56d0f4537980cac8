/**
 * The baseline of `npm run bench -- reads`, in its own process: the raw scan, the very rows of an
 * answer read from SQLite by the answer's own statement (mmap on, as the answer threads read) and
 * counted, nothing built from them. Prints one JSON line: rows/s for each range, best of `rounds`.
 *
 *   node --import tsx bench/reads-scan.ts <database file> <hubId> <rounds> <name>=<fromMs>:<toMs>...
 */
import { COLUMNS, ORDER } from '../src/store/sql/answers.js';
import { openDatabase } from '../src/store/sqlite/sqlite.driver.js';

const [file = '', hubId = '', roundsText = '3', ...ranges] = process.argv.slice(2);
const BY_TIME = `SELECT ${COLUMNS} FROM messages AS m INDEXED BY messages_by_hub_and_time
  JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = ? AND m.created_at >= ? AND m.created_at < ? ${ORDER}`;
const BY_CONTACT = `SELECT ${COLUMNS} FROM contacts AS c JOIN messages AS m ON m.contact_id = c.id
  WHERE c.hub_id = ? AND m.created_at >= ? AND m.created_at < ? ${ORDER}`;

const db = openDatabase(file, { readonly: true, fileMustExist: true });
db.pragma('mmap_size = 1099511627776');
const result: Record<string, { rows: number; rowsPerSecond: number }> = {};
for (const range of ranges) {
  const [name = '', bounds = ''] = range.split('=');
  const [from, to] = bounds.split(':').map(Number) as [number, number];
  // The answer's own plan: a short range by time and sorted, the whole hub contact by contact.
  const statement = db.prepare(name === 'whole' ? BY_CONTACT : BY_TIME).raw(true);
  let best = 0;
  let rows = 0;
  for (let round = 0; round < Number(roundsText); round++) {
    const started = performance.now();
    let seconds = 0;
    let passes = 0;
    rows = 0;
    // Short ranges again and again for a second at least, so that the clock's grain does not count.
    do {
      for (const _ of statement.iterate(hubId, from, to)) rows += 1;
      passes += 1;
      seconds = (performance.now() - started) / 1000;
    } while (seconds < 1);
    best = Math.max(best, rows / seconds);
    rows /= passes;
  }
  result[name] = { rows, rowsPerSecond: best };
}
db.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
