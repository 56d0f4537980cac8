/**
 * `npm run bench -- reports` (issue 47): GET /api/line/:hubId/reports on the bench dataset's
 * 2M-message hub (`npm run bench -- --generate`), 28 days and 366 days, one reader at a time, while
 * signed LINE webhooks arrive at 50 a second for the same hub (bench/webhook-rate.ts, its own
 * process), so that every report first takes in the messages stored since the last. The baseline,
 * in the same run and server: the read API's answer of the same days, uncached (the answer cache is
 * off), which reads the same rows. The server, the readers and the webhooks are three processes.
 * Also the hub's first report after the server starts (it reads the hub's messages whole), the
 * server's memory before and after it, and a report just after a friend unsent a message.
 *
 *   node --import tsx bench/reports.ts [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--rate 50]
 *
 * Goals: a 28-day report ≤ 50 ms p50 and a 366-day report ≤ 300 ms p50, uncached. Reports keep nothing
 * at write time (they read what was written since, at the next report), so webhook ingest does no
 * more work for them (nothing to measure there).
 */
import http from 'node:http';
import { readArgs } from './args.js';
import { LARGE_HUB, START_MS } from './dataset.js';
import { median, readManifest, type StoreKind, serverEnv } from './feed-common.js';
import { postSignedWebhook } from './line-post.js';
import { cpuSeconds, rssMiB } from './proc.js';
import { runJson, startChatlog, stop, stopAll, waitForLine } from './processes.js';
import { type SenderResult, spawnWebhookSender } from './webhook-rate.js';

const args = readArgs(
  'node --import tsx bench/reports.ts [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--rate 50]',
  { values: ['store', 'rounds', 'seconds', 'rate'] },
);
const rounds = args.number('rounds', 3, { min: 1, max: 10, whole: true });
const seconds = args.number('seconds', 10, { min: 1 });
const rate = args.number('rate', 50, { min: 0 });
const storeArg = args.choice('store', ['sqlite', 'postgres', 'both'], 'sqlite');
const stores: StoreKind[] = storeArg === 'both' ? ['sqlite', 'postgres'] : [storeArg as StoreKind];
/** The suite's (bench/suite.ts) secret and the large hub's channel secret. */
const SECRET = 'chatlog-bench-suite-secret-0123456789abcdef';
const CHANNEL_SECRET = 'bench-suite-channel-secret';

interface ReadResult {
  requests: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  bytes: number;
}

/** The dataset's day `offset` days after its first, in Tokyo (its zone). */
const day = (offset: number) =>
  new Date(START_MS + 9 * 3_600_000 + offset * 86_400_000).toISOString().slice(0, 10);
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${ms(sorted[0] ?? Number.NaN)} / ${ms(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN)} / ${ms(sorted.at(-1) ?? Number.NaN)}`;
};

/** The last round's webhook messages' prefix (bench/webhook-rate.ts names them <prefix>-<n>). */
let lastPrefix: string | undefined;

/**
 * A friend unsends a message (a signed LINE webhook), then a 28-day report: the hub's columns take
 * in that friend's messages again, and count the hub's messages (reports.columns.ts, takeIn). Five
 * times, each with another message.
 */
async function afterAnUnsend(base: string, key: string, prefix: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true });
  const timings: number[] = [];
  const url = `${base}/api/line/${LARGE_HUB}/reports?apikey=${key}&from=${day(673)}&to=${day(700)}`;
  for (let n = 0; n < 5; n++) {
    const raw = JSON.stringify({
      destination: 'U00000000000000000000000000000000',
      events: [
        {
          type: 'unsend',
          mode: 'active',
          timestamp: Date.now(),
          source: { type: 'user', userId: `Ua${n.toString(16).padStart(30, '0')}` },
          webhookEventId: `${prefix}-unsend-${n}`,
          deliveryContext: { isRedelivery: false },
          unsend: { messageId: `${prefix}-${n}` },
        },
      ],
    });
    const status = await postSignedWebhook(
      new URL(`${base}/webhooks/line/${LARGE_HUB}`),
      agent,
      CHANNEL_SECRET,
      raw,
    );
    if (status !== 200) throw new Error(`the unsend answered ${status}`);
    const started = performance.now();
    const answer = await fetch(url);
    await answer.arrayBuffer();
    timings.push(performance.now() - started);
  }
  agent.destroy();
  console.log(`a 28-day report just after an unsend (5 times, min / median / max): ${spread(timings)} ms`);
}

try {
  for (const kind of stores) {
    const { key } = readManifest(kind);
    const server = await startChatlog({ ...serverEnv(kind, SECRET), CHATLOG_ANSWER_CACHE_MB: '0' });
    try {
      console.log(
        `\n## ${kind}: one reader at a time, ${seconds} s a round, ${rounds} rounds, webhooks at ${rate}/s to the same hub\n`,
      );
      // The first report after the start reads the hub's messages whole.
      const rssBefore = rssMiB(server.pid);
      const cpuBefore = cpuSeconds(server.pid);
      const started = performance.now();
      const first = await fetch(
        `${server.base}/api/line/${LARGE_HUB}/reports?apikey=${key}&from=${day(673)}&to=${day(700)}`,
      );
      await first.arrayBuffer();
      if (first.status !== 200) throw new Error(`the first report answered ${first.status}`);
      console.log(
        `the hub's first report after the start: ${ms(performance.now() - started)} ms, ${ms((cpuSeconds(server.pid) - cpuBefore) * 1000)} ms of the server's CPU; its memory ${rssBefore.toFixed(0)} MiB before, ${rssMiB(server.pid).toFixed(0)} MiB after\n`,
      );
      console.log(
        '| what | p50 ms (min / median / max) | p99 ms (median) | server CPU ms a request (median) | ratio of p50s to the baseline | goal |',
      );
      console.log('|---|---|---|---|---|---|');
      // Ranges ending on different days of the dataset's second year, so that no two are the same.
      const urls = (path: 'reports' | 'messages', days: number) =>
        Array.from({ length: 8 }, (_, i) => {
          const to = 700 - i * 3;
          return `${server.base}/api/line/${LARGE_HUB}/${path}?apikey=${key}&from=${day(to - days + 1)}&to=${day(to)}`;
        });
      const measure = async (path: 'reports' | 'messages', days: number) => {
        const runs: ReadResult[] = [];
        const cpu: number[] = [];
        for (let round = 0; round < rounds; round++) {
          const prefix = `reports-${Date.now()}-${path}-${days}-${round}`;
          if (rate > 0) lastPrefix = prefix;
          const sender =
            rate > 0
              ? spawnWebhookSender({
                  url: `${server.base}/webhooks/line/${LARGE_HUB}`,
                  secret: CHANNEL_SECRET,
                  rate,
                  seconds: seconds + 2,
                  prefix,
                })
              : undefined;
          const sent = sender
            ? waitForLine(sender, 'stdout', /^(\{.*\})\n/m, { timeoutMs: (seconds + 60) * 1000 }).then(
                (match) => JSON.parse(match[1] ?? '{}') as SenderResult,
              )
            : undefined;
          const before = cpuSeconds(server.pid);
          const run = await runJson<ReadResult>('report-client.ts', [String(seconds), ...urls(path, days)]);
          cpu.push(((cpuSeconds(server.pid) - before) * 1000) / Math.max(1, run.requests));
          runs.push(run);
          const webhooks = await sent;
          if (webhooks && webhooks.failed > 0)
            console.log(`  (${webhooks.failed} webhooks failed in that round)`);
        }
        return { runs, cpu };
      };
      for (const [days, goalMs] of [
        [28, 50],
        [366, 300],
      ] as const) {
        const baseline = await measure('messages', days);
        const report = await measure('reports', days);
        const p50 = median(report.runs.map((r) => r.p50Ms));
        const base = median(baseline.runs.map((r) => r.p50Ms));
        console.log(
          `| baseline: GET …/messages, the same ${days} days, uncached (${(baseline.runs[0]?.bytes ?? 0) >> 10} KiB) | ${spread(baseline.runs.map((r) => r.p50Ms))} | ${ms(median(baseline.runs.map((r) => r.p99Ms)))} | ${median(baseline.cpu).toFixed(1)} | 1 | |`,
        );
        console.log(
          `| GET …/reports, ${days} days | ${spread(report.runs.map((r) => r.p50Ms))} | ${ms(median(report.runs.map((r) => r.p99Ms)))} | ${median(report.cpu).toFixed(1)} | ${(p50 / base).toFixed(2)} | p50 ≤ ${goalMs}: ${p50 <= goalMs ? 'met' : 'MISSED'} |`,
        );
      }
      console.log(`\nthe server's memory after the rounds: ${rssMiB(server.pid).toFixed(0)} MiB`);
      if (lastPrefix) await afterAnUnsend(server.base, key, lastPrefix);
    } finally {
      await stop(server.child);
    }
  }
} finally {
  await stopAll();
}
