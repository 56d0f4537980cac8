/**
 * `npm run bench -- mcp`: issue 44's goals for the MCP server (CONTRACT §15) on the bench dataset's
 * 2M-message hub (`npm run bench -- --generate`), on SQLite and PostgreSQL. `chatlog serve` and the
 * load (bench/mcp-client.ts: official SDK clients; bench/search-client.ts: §12's endpoint, the
 * baseline) each run in their own process.
 *
 *   node --import tsx bench/mcp.ts [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--concurrency 8]
 *
 * With --concurrency clients for --seconds each round: get_conversation of 100 messages (spread over
 * the hub's busiest contacts) and list_contacts of 50, p50 and p99 (goals p50 ≤ 20 ms, p99 ≤ 100 ms);
 * search_messages (the first page of 予約) beside §12's endpoint for the same page in the same run
 * (goal: p50 within 10 %, a ratio ≤ 1.10).
 */
import { readArgs } from './args.js';
import { LARGE_HUB } from './dataset.js';
import { median, openStore, readManifest, type StoreKind, serverEnv } from './feed-common.js';
import { cpuSeconds } from './proc.js';
import { runJson, startChatlog, stop } from './processes.js';

const SECRET = 'chatlog-bench-suite-secret-0123456789abcdef';

const args = readArgs(
  'node --import tsx bench/mcp.ts [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--concurrency 8]',
  { values: ['store', 'rounds', 'seconds', 'concurrency'] },
);
const rounds = args.number('rounds', 3, { min: 1, max: 10, whole: true });
const seconds = args.number('seconds', 10, { min: 1 });
const concurrency = args.number('concurrency', 8, { min: 1, max: 256, whole: true });
const storeArg = args.string('store') ?? 'both';
const stores: StoreKind[] = storeArg === 'both' ? ['sqlite', 'postgres'] : [storeArg as StoreKind];

interface ClientResult {
  requests: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
  results: number;
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${ms(sorted[0] ?? Number.NaN)} / ${ms(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN)} / ${ms(sorted.at(-1) ?? Number.NaN)}`;
};

async function busiestContacts(kind: StoreKind): Promise<string[]> {
  const store = openStore(kind);
  try {
    await store.migrate();
    const page = await store.conversations.contacts({ hubId: LARGE_HUB, limit: 50 });
    return page.contacts.filter((c) => c.messageCount >= 100).map((c) => c.lineId);
  } finally {
    await store.close();
  }
}

for (const kind of stores) {
  const { key } = readManifest(kind);
  const lineIds = await busiestContacts(kind);
  console.log(
    `\n## ${kind}: ${concurrency} assistants, ${seconds} s a round, ${rounds} rounds (${lineIds.length} contacts asked)`,
  );
  const server = await startChatlog(serverEnv(kind, SECRET));
  try {
    console.log(
      '\n| call | p50 ms (min / median / max) | p99 ms (min / median / max) | calls/s (median) | server CPU ms a call (median) | items a page | goal |',
    );
    console.log('|---|---|---|---|---|---|---|');
    const row = async (
      label: string,
      script: string,
      scriptArgs: string[],
      goal: (p50: number, p99: number) => string,
    ) => {
      const runs: ClientResult[] = [];
      const cpu: number[] = [];
      for (let round = 0; round < rounds; round++) {
        // The server's own CPU (its process and threads, from /proc): what a call costs it, wherever the load runs.
        const before = cpuSeconds(server.pid);
        const run = await runJson<ClientResult>(script, scriptArgs);
        cpu.push(((cpuSeconds(server.pid) - before) * 1000) / Math.max(1, run.requests + run.failed));
        runs.push(run);
      }
      const p50 = median(runs.map((run) => run.p50Ms));
      const p99 = median(runs.map((run) => run.p99Ms));
      const failed = runs.reduce((sum, run) => sum + run.failed, 0);
      console.log(
        `| ${label} | ${spread(runs.map((r) => r.p50Ms))} | ${spread(runs.map((r) => r.p99Ms))} | ${median(runs.map((r) => r.perSecond)).toFixed(0)} | ${median(cpu).toFixed(2)} | ${runs[0]?.results} | ${goal(p50, p99)}${failed ? `, ${failed} failed` : ''} |`,
      );
      return p50;
    };
    const latencyGoal = (p50: number, p99: number) =>
      p50 <= 20 && p99 <= 100 ? 'met (p50 ≤ 20, p99 ≤ 100)' : 'MISSED (p50 ≤ 20, p99 ≤ 100)';
    await row(
      '`get_conversation`, 100 messages',
      'mcp-client.ts',
      [
        server.base,
        key,
        String(concurrency),
        String(seconds),
        'get_conversation',
        JSON.stringify({ lineIds, limit: 100 }),
      ],
      latencyGoal,
    );
    await row(
      '`list_contacts`, 50',
      'mcp-client.ts',
      [
        server.base,
        key,
        String(concurrency),
        String(seconds),
        'list_contacts',
        JSON.stringify({ limit: 50 }),
      ],
      latencyGoal,
    );
    const api = await row(
      '§12 `GET …/search?q=予約` (baseline)',
      'search-client.ts',
      [server.base, LARGE_HUB, key, String(concurrency), String(seconds), '予約'],
      () => '',
    );
    const tool = await row(
      '`search_messages` `予約`, 20',
      'mcp-client.ts',
      [
        server.base,
        key,
        String(concurrency),
        String(seconds),
        'search_messages',
        JSON.stringify({ query: '予約', limit: 20 }),
      ],
      () => '',
    );
    console.log(
      `\nsearch_messages / §12 endpoint, p50: ${(tool / api).toFixed(2)} (goal ≤ 1.10: ${tool / api <= 1.1 ? 'met' : 'MISSED'})`,
    );
  } finally {
    await stop(server.child);
  }
}
