/**
 * Where one day's answer goes inside SQLite (issue 20, goal 3): the answer's own statement
 * (sqlite.answers.ts BY_TIME_JSON_SQL) and its parts one by one, each run alone, in-process, on the
 * suite's SQLite dataset (day 400 of the large hub, as Q1 and `reads`): the (hub, time) index alone,
 * the rows read, each piece of a message's JSON, the sort. With --covering, a copy of the database
 * gets an index on (hub, time) holding each message's JSON after its sender, made once by SQLite,
 * and the answer is read from it: what a schema that kept the JSON would save, and what it costs on
 * disk. Prints milliseconds per day, median of the rounds.
 *
 *   npm run bench -- day-parts [--rounds 5] [--covering]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BY_TIME_JSON_SQL } from '../src/store/sqlite/sqlite.answers.js';
import { openDatabase } from '../src/store/sqlite/sqlite.driver.js';
import { SQLITE_JSON } from '../src/store/sqlite/sqlite.feed.js';
import { readArgs } from './args.js';
import { LARGE_HUB, START_MS } from './dataset.js';
import { ROOT } from './processes.js';

const args = readArgs('npm run bench -- day-parts [--rounds 5] [--covering]', {
  values: ['rounds'],
  flags: ['covering'],
});
const rounds = args.number('rounds', 5, { min: 1, whole: true });
const DATABASE = path.join(ROOT, 'bench', '.data', 'sqlite', 'chatlog.db');
if (!fs.existsSync(DATABASE)) {
  console.error('no SQLite dataset: npm run bench -- --generate --store sqlite');
  process.exit(1);
}
const day = { hub: LARGE_HUB, from: START_MS + 400 * 86_400_000, to: START_MS + 401 * 86_400_000 };
const range = { ...day, lo: Number.MIN_SAFE_INTEGER, hi: Number.MAX_SAFE_INTEGER };

const IN_DAY = `FROM messages INDEXED BY messages_by_hub_and_time
  WHERE hub_id = @hub AND created_at >= @from AND created_at < @to`;
/** A message's JSON after its sender: all of it that the message's own row decides. */
const tail = (
  m: string,
) => `',"msg":' || json_quote(${m}msg) || ',"contentType":' || json_quote(${m}content_type)
  || ',"createdAt":' || ${SQLITE_JSON.time(`${m}created_at`)} || '}'`;
const PARTS: [string, string][] = [
  ['the (hub, time) index alone', `SELECT count(*) ${IN_DAY}`],
  ['+ each row read (msg)', `SELECT sum(length(msg)) ${IN_DAY}`],
  ['json_quote(msg)', `SELECT sum(length(json_quote(msg))) ${IN_DAY}`],
  ['json_quote(content_type)', `SELECT sum(length(json_quote(content_type))) ${IN_DAY}`],
  ['createdAt as toISOString writes it', `SELECT sum(length(${SQLITE_JSON.time('created_at')})) ${IN_DAY}`],
  [
    'the contact of each row',
    `SELECT sum(length((SELECT name FROM contacts WHERE id = contact_id))) ${IN_DAY}`,
  ],
  [
    'the sender, quoted',
    `SELECT sum(length(json_quote(COALESCE(sender, NULLIF((SELECT name FROM contacts WHERE id = contact_id), ''), 'User')))) ${IN_DAY}`,
  ],
  ['the JSON after the sender, joined', `SELECT length(group_concat(${tail('')}, ',')) ${IN_DAY}`],
  [
    '… sorted in answer order, joined',
    `SELECT length(group_concat(t, ',')) FROM (SELECT ${tail('')} AS t ${IN_DAY} ORDER BY contact_id, created_at, id)`,
  ],
  ['the answer (BY_TIME_JSON_SQL)', BY_TIME_JSON_SQL],
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Milliseconds a run of `sql` takes, median of the rounds (each round: as many runs as fit in 0.5 s). */
function timed(db: ReturnType<typeof openDatabase>, sql: string, params: object): number {
  const statement = db.prepare(sql).raw(true);
  for (let i = 0; i < 10; i++) statement.get(params);
  const each: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    let runs = 0;
    do {
      statement.get(params);
      runs += 1;
    } while (performance.now() - started < 500);
    each.push((performance.now() - started) / runs);
  }
  return median(each);
}

const db = openDatabase(DATABASE, { readonly: true, fileMustExist: true });
db.pragma('mmap_size = 1099511627776');
const rows = db.prepare(`SELECT count(*) ${IN_DAY}`).pluck().get(day) as number;
console.log(
  `one day of the large hub: ${rows.toLocaleString('en-US')} messages; ms per day, median of ${rounds}\n`,
);
const whole = timed(db, BY_TIME_JSON_SQL, range);
for (const [name, sql] of PARTS) {
  const ms = sql === BY_TIME_JSON_SQL ? whole : timed(db, sql, day);
  console.log(
    `${name.padEnd(40)} ${ms.toFixed(2).padStart(6)} ms  ${((100 * ms) / whole).toFixed(0).padStart(3)} %`,
  );
}
db.close();

if (args.flag('covering')) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-day-parts-'));
  const copy = path.join(dir, 'chatlog.db');
  try {
    const source = openDatabase(DATABASE, { readonly: true, fileMustExist: true });
    await source.backup(copy);
    source.close();
    const writable = openDatabase(copy, { fileMustExist: true });
    const before = fs.statSync(copy).size;
    const started = performance.now();
    writable.exec(
      `CREATE INDEX messages_answer ON messages(hub_id, created_at, id, contact_id, sender, (${tail('')}))`,
    );
    const seconds = (performance.now() - started) / 1000;
    writable.exec('VACUUM');
    const after = fs.statSync(copy).size;
    writable.close();
    const covering = openDatabase(copy, { readonly: true, fileMustExist: true });
    covering.pragma('mmap_size = 1099511627776');
    // The same answer, each message's JSON after its sender read from the index.
    const answer = `SELECT CAST(group_concat(piece, '') AS BLOB) FROM (
      SELECT ']},' || (SELECT '{"lineId":' || json_quote(c.line_id) || ',"vid":' || json_quote(c.vid)
        || ',"name":' || json_quote(c.name) || ',"messages":[' FROM contacts AS c WHERE c.id = cid)
        || group_concat(message, ',') AS piece
      FROM (
        SELECT cid, '{"sender":' || json_quote(COALESCE(sender, NULLIF((SELECT name FROM contacts WHERE id = cid), ''), 'User')) || t AS message
        FROM (SELECT contact_id AS cid, sender, created_at, id, ${tail('')} AS t FROM messages INDEXED BY messages_answer
              WHERE hub_id = @hub AND created_at >= @from AND created_at < @to)
        ORDER BY cid, created_at, id)
      GROUP BY cid ORDER BY cid)`;
    const same = (covering.prepare(answer).raw(true).get(day) as [Buffer])[0].equals(
      (covering.prepare(BY_TIME_JSON_SQL).raw(true).get(range) as [Buffer])[0],
    );
    const ms = timed(covering, answer, day);
    const plain = timed(covering, BY_TIME_JSON_SQL, range);
    covering.close();
    console.log(
      `\nwith the JSON kept in a covering (hub, time) index (made in ${seconds.toFixed(1)} s): the answer ${ms.toFixed(2)} ms against ${plain.toFixed(2)} ms (${((100 * ms) / plain).toFixed(0)} %), the same bytes: ${same}; the database ${(before / 2 ** 20).toFixed(0)} → ${(after / 2 ** 20).toFixed(0)} MiB (+${((100 * (after - before)) / before).toFixed(0)} %)`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
