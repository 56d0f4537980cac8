/**
 * `npm run bench -- busy-writes` (issue 20, goal 5): webhook replies while 32 connections read
 * uncached whole days. On the suite's SQLite dataset (`npm run bench -- --generate --store sqlite`),
 * a server with the answer cache off; three phases of `--seconds` each, in this order:
 *   1. webhooks alone: `--rate` signed webhooks a second (open loop) to the suite's webhook hub;
 *   2. reads alone: `--connections` node:http connections asking for whole days of the large hub,
 *      a different day each time (32 days in turn), back to back;
 *   3. both at once.
 * The webhook sender, the readers and the server each run in their own process. The goal: the
 * webhook reply p99 of phase 3 at most 50 ms. `--root DIR` serves with another checkout's build
 * (an older commit in a git worktree), `--workers N` as `chatlog serve --workers`.
 *
 *   node --import tsx bench/busy-writes.ts [--seconds 10] [--rate 200] [--connections 32]
 *                                          [--workers 1] [--root DIR] [--rounds 1]
 */
import fs from 'node:fs';
import path from 'node:path';
import { readArgs } from './args.js';
import { LARGE_HUB, START_MS } from './dataset.js';
import type { RpsResult } from './load.js';
import { ROOT, runJson, startChatlog, stop, stopAll, waitForLine } from './processes.js';
import { type SenderResult, spawnWebhookSender } from './webhook-rate.js';

const args = readArgs(
  'node --import tsx bench/busy-writes.ts [--seconds 10] [--rate 200] [--connections 32] [--workers 1] [--root DIR] [--rounds 1]',
  { values: ['seconds', 'rate', 'connections', 'workers', 'root', 'rounds'] },
);
const seconds = args.number('seconds', 10, { min: 1 });
const rate = args.number('rate', 200, { min: 1 });
const connections = args.number('connections', 32, { min: 1, whole: true });
const workers = args.number('workers', 1, { min: 1, whole: true });
const rounds = args.number('rounds', 1, { min: 1, whole: true });
const root = path.resolve(args.string('root') ?? ROOT);
const SUITE_DATA = path.join(ROOT, 'bench', '.data');
/** The suite's (bench/suite.ts) secret, webhook hub and its channel secret. */
const SECRET = 'chatlog-bench-suite-secret-0123456789abcdef';
const WEBHOOK_HUB = '900099';
const CHANNEL_SECRET = 'bench-suite-channel-secret';

const manifestFile = path.join(SUITE_DATA, 'sqlite.json');
if (!fs.existsSync(manifestFile)) {
  throw new Error('no SQLite dataset: run `npm run bench -- --generate --store sqlite` first');
}
const { key } = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { key: string };
const day = (offset: number) =>
  new Date(START_MS + 9 * 3_600_000 + offset * 86_400_000).toISOString().slice(0, 10);

const server = await startChatlog(
  {
    CHATLOG_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    CHATLOG_DATA_DIR: path.join(SUITE_DATA, 'sqlite'),
    DATABASE_URL: undefined,
    CHATLOG_ANSWER_CACHE_MB: '0',
  },
  { workers, root },
);
const dayUrls = Array.from(
  { length: 32 },
  (_, i) =>
    `${server.base}/api/line/${LARGE_HUB}/messages?apikey=${key}&from=${day(300 + i)}&to=${day(300 + i)}`,
);

const sendWebhooks = (phase: string) => {
  const child = spawnWebhookSender({
    url: `${server.base}/webhooks/line/${WEBHOOK_HUB}`,
    secret: CHANNEL_SECRET,
    rate,
    seconds,
    prefix: `busy-${Date.now()}-${phase}`,
  });
  return waitForLine(child, 'stdout', /^(\{.*\})\n/m, { timeoutMs: (seconds + 60) * 1000 }).then(
    (match) => JSON.parse(match[1] ?? '{}') as SenderResult,
  );
};
const read = () => runJson<RpsResult>('load.ts', ['http', String(connections), String(seconds), ...dayUrls]);

const rows: string[] = [];
try {
  // Warm: every day read once, so that the phases meet a warm page cache.
  await runJson<RpsResult>('load.ts', ['http', '4', '2', ...dayUrls]);
  for (let round = 1; round <= rounds; round++) {
    const alone = await sendWebhooks('alone');
    const reads = await read();
    const [busy, readsBusy] = await Promise.all([sendWebhooks('busy'), read()]);
    const f = (n: number) => n.toFixed(1);
    rows.push(
      `| ${round} | ${f(alone.p50ms)} / ${f(alone.p99ms)} | ${f(busy.p50ms)} / ${f(busy.p99ms)} | ${busy.failed} | ${Math.round(reads.requestsPerSecond)} | ${Math.round(readsBusy.requestsPerSecond)} | ${f(readsBusy.p50ms)} / ${f(readsBusy.p99ms)} | ${readsBusy.errors + readsBusy.non2xx} |`,
    );
    console.log(rows.at(-1));
  }
} finally {
  await stop(server.child);
  await stopAll();
}
console.log(
  `\nwebhook replies while ${connections} connections read uncached whole days (${rate} webhooks/s, ${seconds} s a phase, --workers ${workers}, build of ${root})\n`,
);
console.log(
  '| round | webhooks alone p50 / p99 ms | webhooks while reading p50 / p99 ms (goal p99 ≤ 50) | failed | reads alone req/s | reads with webhooks req/s | reads p50 / p99 ms | read errors |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
