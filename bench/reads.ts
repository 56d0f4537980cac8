/**
 * `npm run bench -- reads` (issue 20, goal 2): uncached answers on one connection against the raw
 * scan of the same rows, on the suite's dataset. The server (answer cache off), the raw scan and the
 * client each run in their own process. For one day, one month and the whole large hub: messages/s
 * of chatlog (one connection, answers back to back) and rows/s of the scan, their ratio (goal ≥ 0.9
 * on SQLite, ≥ 0.8 on PostgreSQL), each round. The raw scan is the answer's own statement, rows
 * counted: on SQLite with mmap on (bench/reads-scan.ts), on PostgreSQL through node-postgres'
 * cursor as the store read them before it let PostgreSQL write the JSON (bench/reads-scan-postgres.ts).
 *
 * The server runs as a user starts it (`--workers`: an answer thread per core), unless told. While
 * it answers the whole hub, its private memory (RssAnon: heap, stacks, buffers, without the database
 * pages SQLite maps) is sampled every 20 ms; issue 45 bounds its peak at 150 MB.
 *
 *   node --import tsx bench/reads.ts [--store sqlite|postgres] [--rounds 3] [--root DIR] [--workers N]
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { readArgs } from './args.js';
import { LARGE_HUB, START_MS } from './dataset.js';
import { RssSampler, readStatus } from './proc.js';
import { ROOT, runJson, startChatlog, stop, stopAll } from './processes.js';

const args = readArgs(
  'node --import tsx bench/reads.ts [--store sqlite|postgres] [--rounds 3] [--root DIR] [--workers N]',
  { values: ['store', 'rounds', 'root', 'workers'] },
);
const store = args.choice('store', ['sqlite', 'postgres'], 'sqlite');
const workers =
  args.string('workers') === undefined ? null : args.number('workers', 1, { min: 1, whole: true });
const rounds = args.number('rounds', 3, { min: 1, whole: true });
const root = path.resolve(args.string('root') ?? ROOT);
const DATA = path.join(ROOT, 'bench', '.data');
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = 'chatlog_bench';
const manifestFile = path.join(DATA, `${store}.json`);
if (!fs.existsSync(manifestFile)) {
  throw new Error(`no ${store} dataset: run \`npm run bench -- --generate --store ${store}\` first`);
}
const { key } = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { key: string };
const dayStart = (offset: number) => START_MS + offset * 86_400_000;
const date = (offset: number) => new Date(dayStart(offset) + 9 * 3_600_000).toISOString().slice(0, 10);
/** Day 400 (2024-02-05 in Tokyo) and the 30 days from it, as the suite's Q1 and Q2. */
const RANGES = [
  {
    name: 'day',
    query: `&from=${date(400)}&to=${date(400)}`,
    from: dayStart(400),
    to: dayStart(401),
    seconds: 5,
  },
  {
    name: 'month',
    query: `&from=${date(400)}&to=${date(429)}`,
    from: dayStart(400),
    to: dayStart(430),
    seconds: 5,
  },
  { name: 'whole', query: '', from: Number.MIN_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER, seconds: 0 },
];

/** Answers back to back on one connection for `seconds` (at least one): messages/s. */
async function answersPerSecond(url: string, messages: number, seconds: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const started = performance.now();
  let answers = 0;
  do {
    await new Promise<void>((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
          res.on('data', () => {});
          res.on('end', () => resolve());
        })
        .on('error', reject);
    });
    answers += 1;
  } while (performance.now() - started < seconds * 1000);
  agent.destroy();
  return (answers * messages) / ((performance.now() - started) / 1000);
}

const server = await startChatlog(
  {
    CHATLOG_SECRET: 'chatlog-bench-suite-secret-0123456789abcdef',
    LOG_LEVEL: 'warn',
    CHATLOG_ANSWER_CACHE_MB: '0',
    ...(store === 'sqlite'
      ? { CHATLOG_DATA_DIR: path.join(DATA, 'sqlite'), DATABASE_URL: undefined }
      : { DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: PG_SCHEMA }),
  },
  { root, workers },
);
const lines: string[] = [];
try {
  // Let the answer threads load (they start half a second after listening).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  for (let round = 1; round <= rounds; round++) {
    const ranges = RANGES.map((r) => `${r.name}=${r.from}:${r.to}`);
    const scan = await runJson<Record<string, { rows: number; rowsPerSecond: number }>>(
      store === 'sqlite' ? 'reads-scan.ts' : 'reads-scan-postgres.ts',
      store === 'sqlite'
        ? [path.join(DATA, 'sqlite', 'chatlog.db'), LARGE_HUB, '1', ...ranges]
        : [PG_URL, PG_SCHEMA, LARGE_HUB, '1', ...ranges],
    );
    for (const range of RANGES) {
      const raw = scan[range.name];
      if (!raw) throw new Error(`the scan did not measure ${range.name}`);
      const url = `${server.base}/api/line/${LARGE_HUB}/messages?apikey=${key}${range.query}`;
      const sampler = new RssSampler(server.pid, 20, readStatus(server.pid).rssKb);
      const served = await answersPerSecond(url, raw.rows, range.seconds);
      sampler.sample();
      sampler.stop();
      const line = `| ${round} | ${range.name} (${raw.rows.toLocaleString('en-US')} messages) | ${Math.round(served).toLocaleString('en-US')} | ${Math.round(raw.rowsPerSecond).toLocaleString('en-US')} | ${(served / raw.rowsPerSecond).toFixed(2)} | ${(sampler.peakAnonKb / 1024).toFixed(0)} |`;
      lines.push(line);
      console.log(line);
    }
  }
} finally {
  await stop(server.child);
  await stopAll();
}
console.log(
  `\nuncached answers on one connection against the raw scan (${store}, build of ${root}, --workers ${workers ?? 'default'})\n`,
);
console.log(
  store === 'sqlite'
    ? '| round | range | chatlog messages/s | raw scan rows/s (mmap) | ratio (goal ≥ 0.9) | server RssAnon peak, MiB |'
    : '| round | range | chatlog messages/s | raw scan rows/s (cursor) | ratio (goal ≥ 0.8) | server RssAnon peak, MiB |',
);
console.log('|---|---|---|---|---|---:|');
for (const line of lines) console.log(line);
