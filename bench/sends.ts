/**
 * `npm run bench -- sends` (issue 46): replies to LINE friends at `--rate` a second for `--seconds`,
 * to a LINE that answers each push in `--line-ms` (bench/line-push-server.ts, its own process), from
 * a load in a third process (bench/sends-load.ts). For each round: the 202's p50/p99 (goal: p99 ≤
 * 20 ms at 200/s), each send's way from its 202 to its message stored as You, seen in the change feed,
 * less LINE's own time (goal: p50 ≤ 100 ms), and the server's CPU a send. The baseline, in the same
 * run and on the same store: the ingest API at the same rate (its 200's p99, and its way to the feed),
 * the write a send's 202 is made of without LINE. A fresh store each round; min / median / max.
 *
 *   node --import tsx bench/sends.ts [--store sqlite|postgres] [--rounds 3] [--seconds 10] [--rate 200] [--line-ms 50]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import { PostgresStore } from '../src/store/postgres/postgres.store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { Store } from '../src/store/store.js';
import { readArgs } from './args.js';
import {
  cpuSeconds,
  machineCpu,
  postgresCpuSeconds,
  threadCpuSeconds,
  threadCpuSince,
  treeCpuSeconds,
} from './proc.js';
import { runJson, startBaseline, startChatlog, stop, stopAll } from './processes.js';

const args = readArgs(
  'node --import tsx bench/sends.ts [--store sqlite|postgres] [--rounds 3] [--seconds 10] [--rate 200] [--line-ms 50]',
  { values: ['store', 'rounds', 'seconds', 'rate', 'line-ms'] },
);
const kind = args.choice('store', ['sqlite', 'postgres'], 'sqlite');
const rounds = args.number('rounds', 3, { min: 1, whole: true });
const seconds = args.number('seconds', 10, { min: 1 });
const rate = args.number('rate', 200, { min: 1 });
const lineMs = args.number('line-ms', 50, { min: 0 });
const SECRET = 'chatlog-bench-sends-secret-0123456789abcdef';
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const HUB = '460046';
const TOKEN = 'bench-sends-channel-access-token';
const FRIENDS = Array.from({ length: 100 }, (_, i) => `Ub${i.toString(16).padStart(31, '0')}`);

interface LoadResult {
  sent: number;
  accepted: number;
  refused: number;
  stored: number;
  acceptP50ms: number;
  acceptP99ms: number;
  acceptP99WarmMs: number;
  slowestBySecondMs: number[];
  storedP50ms: number;
  storedP99ms: number;
}

/** A fresh store with the hub, its friends, a send key, an ingest key and a read key. */
async function freshStore(round: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-bench-sends-'));
  const schema = `chatlog_bench_sends_${round}`;
  const open = (): Store =>
    kind === 'sqlite'
      ? new SqliteStore({ dataDir: dir })
      : new PostgresStore({ connectionString: PG_URL, schema, statementTimeoutMs: 60_000 });
  const store = open();
  if (kind === 'postgres') await (store as PostgresStore).dropSchema();
  await store.migrate();
  const secrets = createSecretBox(SECRET);
  await new HubService(store, secrets).add(HUB, { lineChannelAccessToken: TOKEN });
  await store.messages.ingest(
    HUB,
    FRIENDS.map((lineId, i) => ({
      kind: 'message' as const,
      lineId,
      sender: null,
      msg: `hello ${i}`,
      contentType: 'text',
      createdAt: Date.now() - 60_000,
      sourceId: `bench:hello:${i}`,
      sourceKind: null,
      sourceChatId: null,
    })),
    Date.now(),
  );
  const keys = new KeyService(store, secrets);
  const sendKey = (await keys.issue(HUB, 'send', 'bench')).key;
  const ingestKey = (await keys.issue(HUB, 'ingest', 'bench')).key;
  const readKey = (await keys.issue(HUB, 'read', 'bench')).key;
  await store.close();
  const env =
    kind === 'sqlite'
      ? { CHATLOG_DATA_DIR: dir, DATABASE_URL: undefined }
      : { DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: schema };
  const cleanUp = async () => {
    if (kind === 'postgres') {
      const again = open();
      await (again as PostgresStore).dropSchema();
      await again.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { env, sendKey, ingestKey, readKey, cleanUp };
}

const spread = (values: number[], digits = 1) => {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return `${(sorted[0] ?? 0).toFixed(digits)} / ${median.toFixed(digits)} / ${(sorted.at(-1) ?? 0).toFixed(digits)}`;
};

const results = { send: [] as LoadResult[], ingest: [] as LoadResult[], cpu: [] as number[] };
const line = await startBaseline('line-push-server.ts', ['--delay-ms', String(lineMs)]);
try {
  for (let round = 1; round <= rounds; round++) {
    const fresh = await freshStore(round);
    const server = await startChatlog({
      ...fresh.env,
      CHATLOG_SECRET: SECRET,
      LOG_LEVEL: 'warn',
      LINE_API_BASE_URL: line.base,
    });
    try {
      const load = (key: string, which: 'send' | 'ingest') =>
        runJson<LoadResult>('sends-load.ts', [
          '--base',
          server.base,
          '--hub',
          HUB,
          '--send-key',
          key,
          '--read-key',
          fresh.readKey,
          '--friends',
          FRIENDS.join(','),
          '--rate',
          String(rate),
          '--seconds',
          String(seconds),
          '--prefix',
          `${which}-${round}`,
          '--path',
          which,
        ]);
      const ingest = await load(fresh.ingestKey, 'ingest');
      const cpu0 = treeCpuSeconds(server.pid);
      const threads0 = threadCpuSeconds(server.pid);
      const machine0 = machineCpu().busy;
      const line0 = cpuSeconds(line.child.pid ?? 0);
      const pg0 = kind === 'postgres' ? postgresCpuSeconds() : 0;
      const sendStarted = performance.now();
      const send = await load(fresh.sendKey, 'send');
      const cpu = treeCpuSeconds(server.pid) - cpu0;
      const wall = (performance.now() - sendStarted) / 1000;
      // Where the two cores went: the server, the fake LINE, PostgreSQL, and the rest (the load).
      const cores = (used: number) => (used / wall).toFixed(2);
      const machine = machineCpu().busy - machine0;
      const lineCpu = cpuSeconds(line.child.pid ?? 0) - line0;
      const pgCpu = kind === 'postgres' ? postgresCpuSeconds() - pg0 : 0;
      console.log(
        `  cores busy in the send phase: ${cores(machine)} of ${os.availableParallelism()} (server ${cores(cpu)}, ` +
          `fake LINE ${cores(lineCpu)}${kind === 'postgres' ? `, PostgreSQL ${cores(pgCpu)}` : ''}, ` +
          `the rest, mostly the load, ${cores(machine - cpu - lineCpu - pgCpu)})`,
      );
      const busiest = [...threadCpuSince(threads0, threadCpuSeconds(server.pid))]
        .slice(0, 4)
        .map(([name, used]) => `${name} ${Math.round((used / Math.max(1, send.accepted)) * 1e6)}`);
      console.log(
        `  the send phase: ${wall.toFixed(1)} s; busiest threads, µs a send: ${busiest.join(', ')}`,
      );
      results.ingest.push(ingest);
      results.send.push(send);
      results.cpu.push((cpu / Math.max(1, send.accepted)) * 1e6);
      console.log(
        `  the slowest answer of each second, ms: sends ${send.slowestBySecondMs.join(' ')}; ingest API ${ingest.slowestBySecondMs.join(' ')}`,
      );
      console.log(
        `round ${round}: sends ${send.accepted}/${send.sent} accepted, ${send.stored} seen stored; 202 p99 ${send.acceptP99ms.toFixed(1)} ms; ` +
          `stored p50 ${(send.storedP50ms - lineMs).toFixed(1)} ms after LINE's ${lineMs}; ingest API p99 ${ingest.acceptP99ms.toFixed(1)} ms`,
      );
    } finally {
      await stop(server.child);
      await fresh.cleanUp();
    }
  }
} finally {
  await stop(line.child);
  await stopAll();
}

console.log(
  `\nsends (${kind}): ${rate}/s for ${seconds} s to a LINE answering in ${lineMs} ms, ${FRIENDS.length} friends; min / median / max of ${rounds}\n`,
);
console.log(
  '| | sends (POST …/contacts/:lineId/messages) | baseline: the ingest API at the same rate | goal |',
);
console.log('|---|---:|---:|---|');
console.log(
  `| accepted (202 / 200) | ${results.send.map((r) => r.accepted).join(', ')} of ${results.send[0]?.sent ?? 0} | ${results.ingest.map((r) => r.accepted).join(', ')} | every one |`,
);
console.log(
  `| answer p50, ms | ${spread(results.send.map((r) => r.acceptP50ms))} | ${spread(results.ingest.map((r) => r.acceptP50ms))} | |`,
);
console.log(
  `| answer p99, ms | ${spread(results.send.map((r) => r.acceptP99ms))} | ${spread(results.ingest.map((r) => r.acceptP99ms))} | ≤ 20 |`,
);
console.log(
  `| answer p99 after the first second, ms | ${spread(results.send.map((r) => r.acceptP99WarmMs))} | ${spread(results.ingest.map((r) => r.acceptP99WarmMs))} | |`,
);
console.log(
  `| to the feed, p50, ms (sends: less LINE's ${lineMs}) | ${spread(results.send.map((r) => r.storedP50ms - lineMs))} | ${spread(results.ingest.map((r) => r.storedP50ms))} | ≤ 100 |`,
);
console.log(
  `| to the feed, p99, ms (sends: less LINE's ${lineMs}) | ${spread(results.send.map((r) => r.storedP99ms - lineMs))} | ${spread(results.ingest.map((r) => r.storedP99ms))} | |`,
);
console.log(`| server CPU a send (202, push, store, settle), µs | ${spread(results.cpu, 0)} | | |`);
