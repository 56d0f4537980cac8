/**
 * `npm run bench -- both-cores` (issue 20, goal 3): one past day of the suite's SQLite dataset
 * (Q1, 2,563 messages, 0.64 MB), answer cache off, 32 connections, from the node:http client of
 * bench/load.ts: `chatlog serve` as a user starts it (its default --workers: an answer thread per
 * core), the same with --workers 1, an older build (--root, its own default) and the in-memory
 * server answering the same bytes (the client's ceiling). The older build reads its own dataset
 * (`npm run bench -- --generate --store sqlite` in its folder: the same messages). Each server and the load in their own
 * process; the kinds take turns, `--rounds` times. Prints requests/s and p50/p99 of each, and
 * their ratios to the older build and to the in-memory server.
 *
 *   node --import tsx bench/both-cores.ts [--rounds 3] [--seconds 10] [--root DIR]
 */
import fs from 'node:fs';
import path from 'node:path';
import { readArgs } from './args.js';
import { LARGE_HUB, START_MS } from './dataset.js';
import type { RpsResult } from './load.js';
import { ROOT, runJson, startBaseline, startChatlog, stop, stopAll } from './processes.js';

const args = readArgs('node --import tsx bench/both-cores.ts [--rounds 3] [--seconds 10] [--root DIR]', {
  values: ['rounds', 'seconds', 'root'],
});
const rounds = args.number('rounds', 3, { min: 1, whole: true });
const seconds = args.number('seconds', 10, { min: 1 });
const before = args.string('root');
const DATA = path.join(ROOT, 'bench', '.data');
const manifestFile = path.join(DATA, 'sqlite.json');
if (!fs.existsSync(manifestFile)) {
  throw new Error('no SQLite dataset: run `npm run bench -- --generate --store sqlite` first');
}
const date = (offset: number) =>
  new Date(START_MS + offset * 86_400_000 + 9 * 3_600_000).toISOString().slice(0, 10);
/** A build's dataset: its own bench/.data (an older build cannot open a newer schema). */
function dataset(root: string) {
  const data = path.join(root, 'bench', '.data');
  const { key } = JSON.parse(fs.readFileSync(path.join(data, 'sqlite.json'), 'utf8')) as { key: string };
  return {
    day: `/api/line/${LARGE_HUB}/messages?apikey=${key}&from=${date(400)}&to=${date(400)}`,
    env: {
      CHATLOG_SECRET: 'chatlog-bench-suite-secret-0123456789abcdef',
      LOG_LEVEL: 'warn',
      CHATLOG_DATA_DIR: path.join(data, 'sqlite'),
      DATABASE_URL: undefined,
      CHATLOG_ANSWER_CACHE_MB: '0',
    },
  };
}

/** A server of `kind` started, warmed (its answer threads loaded) and measured, then stopped. */
async function measure(kind: string): Promise<RpsResult> {
  if (kind === 'in-memory') {
    const body = path.join(DATA, 'both-cores-q1.json');
    const { child, base } = await startBaseline('memory-server.ts', [`/q1=${body}`]);
    try {
      return await runJson<RpsResult>('load.ts', ['http', '32', String(seconds), `${base}/q1`]);
    } finally {
      await stop(child);
    }
  }
  const root = kind === 'older build' && before ? path.resolve(before) : ROOT;
  const { day, env } = dataset(root);
  const server = await startChatlog(env, { workers: kind === 'chatlog --workers 1' ? 1 : null, root });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    if (kind === 'chatlog') {
      const answer = await fetch(`${server.base}${day}`);
      fs.writeFileSync(path.join(DATA, 'both-cores-q1.json'), Buffer.from(await answer.arrayBuffer()));
    }
    return await runJson<RpsResult>('load.ts', ['http', '32', String(seconds), `${server.base}${day}`]);
  } finally {
    await stop(server.child);
  }
}

const kinds = ['chatlog', 'in-memory', 'chatlog --workers 1', ...(before ? ['older build'] : [])];
const results = new Map<string, RpsResult[]>(kinds.map((kind) => [kind, []]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const kind of kinds) {
      const result = await measure(kind);
      if (result.errors > 0 || result.non2xx > 0) {
        throw new Error(`${kind}: ${result.errors} errors, ${result.non2xx} answers not 2xx`);
      }
      results.get(kind)?.push(result);
      console.log(
        `round ${round}: ${kind}: ${Math.round(result.requestsPerSecond)} requests/s, p50 ${result.p50ms.toFixed(1)} ms, p99 ${result.p99ms.toFixed(1)} ms`,
      );
    }
  }
} finally {
  await stopAll();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const stat = (kind: string, pick: (r: RpsResult) => number) => {
  const values = (results.get(kind) ?? []).map(pick);
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
};
console.log(`\nOne day uncached, 32 connections, ${rounds} rounds of ${seconds} s (min / median / max)\n`);
console.log(
  '| server | requests/s | p50 ms | p99 ms | median requests/s ÷ older build | p99 ÷ in-memory p99 |',
);
console.log('|---|---|---|---|---|---|');
const olderRps = before ? stat('older build', (r) => r.requestsPerSecond).median : undefined;
const memoryP99 = stat('in-memory', (r) => r.p99ms).median;
for (const kind of kinds) {
  const rps = stat(kind, (r) => r.requestsPerSecond);
  const p50 = stat(kind, (r) => r.p50ms);
  const p99 = stat(kind, (r) => r.p99ms);
  const f = (s: { min: number; median: number; max: number }, digits: number) =>
    `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;
  console.log(
    `| ${kind} | ${f(rps, 0)} | ${f(p50, 1)} | ${f(p99, 1)} | ${olderRps ? (rps.median / olderRps).toFixed(2) : '-'} | ${(p99.median / memoryP99).toFixed(2)} |`,
  );
}
console.log(
  '\nGoal (issue 20, 3): chatlog ≥ 3 × the requests/s of the build the issue measured; p99 ≤ 4 × in-memory p99.',
);
