/**
 * The benchmark suite (Q1-Q6) against the real listening server, on SQLite and on PostgreSQL, each
 * figure printed with its ratio to a baseline measured in the same run. The server, the baselines
 * and the load each run in their own process.
 *
 *   node --import tsx bench/suite.ts --generate [--messages N] [--contacts N] [--small-hubs N] [--seed S]
 *   node --import tsx bench/suite.ts [--store sqlite|postgres|both] [--seconds S]
 *
 * The dataset lives in bench/.data/ (SQLite) and the PostgreSQL schema chatlog_bench.
 *
 * Over 400 lines because it is the one table of Q1-Q6: each query next to its baseline, in order.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import { PostgresStore } from '../src/store/postgres/postgres.store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { Store } from '../src/store/store.js';
import { readArgs } from './args.js';
import { type DatasetSize, FULL_SIZE, LARGE_HUB, loadDataset, START_MS } from './dataset.js';
import type { RpsResult } from './load.js';
import { RssSampler } from './proc.js';
import { ROOT, runJson, runWebhookLoad, startBaseline, startChatlog, stop, stopAll } from './processes.js';

const DATA = path.join(ROOT, 'bench', '.data');
const SECRET = 'chatlog-bench-suite-secret-0123456789abcdef';
const CHANNEL_SECRET = 'bench-suite-channel-secret';
const WEBHOOK_HUB = '900099';
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = 'chatlog_bench';
type StoreKind = 'sqlite' | 'postgres';

const args = readArgs(
  'node --import tsx bench/suite.ts --generate [--messages N] [--contacts N] [--small-hubs N] [--seed S] [--store sqlite|postgres]\n' +
    '       node --import tsx bench/suite.ts [--store sqlite|postgres|both] [--seconds S]',
  { values: ['store', 'seconds', 'messages', 'contacts', 'small-hubs', 'seed'], flags: ['generate'] },
);
const seconds = args.number('seconds', 10, { min: 0 });

function openStore(kind: StoreKind): Store {
  return kind === 'sqlite'
    ? new SqliteStore({ dataDir: path.join(DATA, 'sqlite') })
    : new PostgresStore({ connectionString: PG_URL, schema: PG_SCHEMA, statementTimeoutMs: 600_000 });
}

function serverEnv(kind: StoreKind): Record<string, string | undefined> {
  return kind === 'sqlite'
    ? {
        CHATLOG_SECRET: SECRET,
        LOG_LEVEL: 'warn',
        CHATLOG_DATA_DIR: path.join(DATA, 'sqlite'),
        DATABASE_URL: undefined,
      }
    : { CHATLOG_SECRET: SECRET, LOG_LEVEL: 'warn', DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: PG_SCHEMA };
}

interface Manifest {
  size: DatasetSize;
  loadSeconds: number;
  messages: number;
  key: string;
}

async function generate(kind: StoreKind, size: DatasetSize): Promise<void> {
  console.log(
    `generating the ${kind} dataset: ${size.messages.toLocaleString('en-US')} messages in the large hub...`,
  );
  if (kind === 'sqlite') fs.rmSync(path.join(DATA, 'sqlite'), { recursive: true, force: true });
  else {
    const dropper = new PostgresStore({ connectionString: PG_URL, schema: PG_SCHEMA });
    await dropper.dropSchema();
    await dropper.close();
  }
  const store = openStore(kind);
  try {
    await store.migrate();
    const secrets = createSecretBox(SECRET);
    const hubs = new HubService(store, secrets);
    const loaded = await loadDataset(
      store,
      async (hubId) => {
        // The large hub takes LINE webhooks too (bench/reports.ts sends them while it reports).
        await hubs.add(hubId, {
          timeZone: 'Asia/Tokyo',
          ...(hubId === LARGE_HUB && { lineChannelSecret: CHANNEL_SECRET }),
        });
      },
      size,
      (line) => console.log(line),
    );
    await hubs.add(WEBHOOK_HUB, { lineChannelSecret: CHANNEL_SECRET });
    // Fresh statistics for the planner, as autovacuum would gather them in time.
    if (store instanceof PostgresStore) await store.analyze();
    const { key } = await new KeyService(store, secrets).issue(LARGE_HUB, 'read', 'bench');
    const manifest: Manifest = { size, loadSeconds: loaded.seconds, messages: loaded.messages, key };
    fs.mkdirSync(DATA, { recursive: true });
    fs.writeFileSync(path.join(DATA, `${kind}.json`), `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(
      `loaded ${loaded.messages.toLocaleString('en-US')} messages in ${loaded.seconds.toFixed(1)} s (${Math.round(loaded.messages / loaded.seconds).toLocaleString('en-US')}/s)`,
    );
  } finally {
    await store.close();
  }
}

/**
 * Requests/s, 32 connections, from a plain node:http client (bench/load.ts `http`): autocannon's own
 * ceiling on a 0.6 MB body (about 300 answers/s here) was below the in-memory server's, so it
 * measured itself; this client's is several times higher (the Q1 ceiling line says how much).
 */
function rps(url: string): Promise<RpsResult> {
  return runLoad<RpsResult>('http', '32', String(seconds), url);
}

function runLoad<T>(...loadArgs: string[]): Promise<T> {
  return runJson<T>('load.ts', loadArgs);
}

interface StreamResult {
  bytesPerSecond: number;
  answers: number;
}
interface DownloadResult {
  status: number;
  bytes: number;
  ttfbMs: number;
  seconds: number;
}

/** GET with node:http, the body read to the end: its status, or 0 when the connection failed. */
function statusOf(url: string): Promise<number> {
  return new Promise((resolve) => {
    http
      .get(url, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      })
      .on('error', () => resolve(0));
  });
}

function dayUrl(base: string, key: string, from: string, to: string): string {
  return `${base}/api/line/${LARGE_HUB}/messages?apikey=${key}&from=${from}&to=${to}`;
}

const day = (offset: number) =>
  new Date(START_MS + 9 * 3_600_000 + offset * 86_400_000).toISOString().slice(0, 10);

interface Row {
  query: string;
  figure: string;
  value: number;
  baseline: string;
  ratio: number | null;
}

async function messagesIn(url: string): Promise<{ bytes: Buffer; messages: number }> {
  const response = await fetch(url);
  const bytes = Buffer.from(await response.arrayBuffer());
  const contacts = JSON.parse(bytes.toString('utf8')) as Array<{ messages: unknown[] }>;
  return { bytes, messages: contacts.reduce((n, c) => n + c.messages.length, 0) };
}

/** The ceiling for Q3: the same rows scanned and JSON.stringify-ed in-process, no HTTP. */
async function scanBaseline(kind: StoreKind): Promise<number> {
  const store = openStore(kind);
  try {
    const started = performance.now();
    let count = 0;
    let bytes = 0;
    for await (const batch of store.messages.stream({ hubId: LARGE_HUB })) {
      for (const row of batch) {
        bytes += JSON.stringify({
          sender: row.sender,
          msg: row.msg,
          contentType: row.contentType,
          createdAt: new Date(row.createdAt).toISOString(),
        }).length;
        count += 1;
      }
    }
    void bytes;
    return count / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
  }
}

async function suite(kind: StoreKind): Promise<Row[]> {
  const manifestFile = path.join(DATA, `${kind}.json`);
  if (!fs.existsSync(manifestFile)) {
    throw new Error(`no ${kind} dataset: run \`npm run bench -- --generate\` first`);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
  const rows: Row[] = [];
  const add = (query: string, figure: string, value: number, baseline = '', base?: number) =>
    rows.push({ query, figure, value, baseline, ratio: base ? value / base : null });

  // Q6: cold start, from spawning `chatlog serve` to the first answered request (asked with
  // node:http, already loaded here: fetch's first use would add its own start-up).
  const coldStarted = performance.now();
  const { base } = await startChatlog(serverEnv(kind));
  try {
    const q1Url = dayUrl(base, manifest.key, day(400), day(400));
    while ((await statusOf(q1Url)) !== 200);
    add('Q6', 'cold start to first answer (ms)', performance.now() - coldStarted);

    // Baseline server: the very bytes of Q1 and Q2, from memory.
    const q2Url = dayUrl(base, manifest.key, day(400), day(430));
    const q1 = await messagesIn(q1Url);
    const q2 = await messagesIn(q2Url);
    fs.writeFileSync(path.join(DATA, 'q1.json'), q1.bytes);
    fs.writeFileSync(path.join(DATA, 'q2.json'), q2.bytes);
    const { child: memory, base: memoryBase } = await startBaseline('memory-server.ts', [
      `/q1=${path.join(DATA, 'q1.json')}`,
      `/q2=${path.join(DATA, 'q2.json')}`,
    ]);

    // Q1: one day, 32 connections.
    const q1Base = await rps(`${memoryBase}/q1`);
    const q1Run = await rps(q1Url);
    add(
      'Q1',
      `one day (${q1.messages} messages): requests/s`,
      q1Run.requestsPerSecond,
      'in-memory node:http',
      q1Base.requestsPerSecond,
    );
    // The load client's own ceiling (the in-memory server's figure with the same client) must be
    // well above what it reports of chatlog, or the figure measures the client (issue 20, goal 1).
    add(
      'Q1',
      "load client's ceiling: in-memory requests/s (goal ≥ 3 × chatlog's)",
      q1Base.requestsPerSecond,
      'chatlog Q1',
      q1Run.requestsPerSecond,
    );
    add('Q1', 'p50 latency (ms)', q1Run.p50ms, 'in-memory node:http', q1Base.p50ms);
    add('Q1', 'p99 latency (ms)', q1Run.p99ms, 'in-memory node:http', q1Base.p99ms);

    // The same without the answer cache (CHATLOG_ANSWER_CACHE_MB=0): every request reads and encodes.
    const { child: uncached, base: uncachedBase } = await startChatlog({
      ...serverEnv(kind),
      CHATLOG_ANSWER_CACHE_MB: '0',
    });
    const q1UncachedUrl = dayUrl(uncachedBase, manifest.key, day(400), day(400));
    const q1Uncached = await rps(q1UncachedUrl);
    add(
      'Q1',
      'no answer cache: requests/s',
      q1Uncached.requestsPerSecond,
      'in-memory node:http',
      q1Base.requestsPerSecond,
    );
    add('Q1', 'no answer cache: p50 latency (ms)', q1Uncached.p50ms, 'in-memory node:http', q1Base.p50ms);
    add('Q1', 'no answer cache: p99 latency (ms)', q1Uncached.p99ms, 'in-memory node:http', q1Base.p99ms);

    // Q2: one month, 4 connections, plain and compressed.
    // Messages/s from the bytes received (answers cut off at the end count for what arrived), so
    // that a run of a few long answers is not rounded to whole requests.
    const q2Base = await runLoad<StreamResult>('stream', `${memoryBase}/q2`, '4', String(seconds));
    const q2Run = await runLoad<StreamResult>('stream', q2Url, '4', String(seconds));
    const perSecond = (r: StreamResult, answerBytes: number) =>
      (r.bytesPerSecond / answerBytes) * q2.messages;
    add(
      'Q2',
      `one month (${q2.messages} messages): messages/s`,
      perSecond(q2Run, q2.bytes.length),
      'in-memory node:http',
      perSecond(q2Base, q2.bytes.length),
    );
    add('Q2', 'MB/s', q2Run.bytesPerSecond / 1e6, 'in-memory node:http', q2Base.bytesPerSecond / 1e6);
    for (const encoding of ['gzip', 'br']) {
      const answer = await runLoad<DownloadResult>('download', q2Url, encoding);
      const compressed = await runLoad<StreamResult>('stream', q2Url, '4', String(seconds), encoding);
      add(
        'Q2',
        `${encoding} (${((100 * answer.bytes) / q2.bytes.length).toFixed(1)}% of the size): messages/s`,
        perSecond(compressed, answer.bytes),
        'Q2 uncompressed',
        perSecond(q2Run, q2.bytes.length),
      );
    }
    await stop(memory);

    // Q3: the whole large hub, one download from a fresh server (so its RSS is this answer's alone).
    const { child: fresh, pid: freshPid, base: freshBase } = await startChatlog(serverEnv(kind));
    const sampler = new RssSampler(freshPid, 50);
    sampler.sample();
    const whole = await runLoad<DownloadResult>(
      'download',
      `${freshBase}/api/line/${LARGE_HUB}/messages?apikey=${manifest.key}`,
    );
    sampler.stop();
    const peak = sampler.peakKb / 1024;
    await stop(fresh);
    const largeCount = manifest.size.messages;
    const scan = await scanBaseline(kind);
    add(
      'Q3',
      `whole hub (${largeCount.toLocaleString('en-US')} messages): messages/s`,
      largeCount / whole.seconds,
      'in-process scan + JSON.stringify',
      scan,
    );
    add('Q3', 'MB/s', whole.bytes / whole.seconds / 1e6);
    add('Q3', 'time to first byte, fresh server (ms)', whole.ttfbMs);
    const warm = await runLoad<{ medianMs: number }>(
      'first-byte',
      `${base}/api/line/${LARGE_HUB}/messages?apikey=${manifest.key}`,
      '5',
    );
    add('Q3', 'time to first byte, warm server, median of 5 (ms)', warm.medianMs);
    add('Q3', 'peak server RSS (MiB)', peak);
    // SQLite's answer threads map the database file (mmap): its pages count in RSS but are the
    // kernel's page cache, shared and dropped when memory is wanted; the private part is the bound.
    add('Q3', 'peak server private memory, RssAnon (MiB)', sampler.peakAnonKb / 1024);

    // Q4: Q1 while two whole-hub exports run on the same server, with and without the answer cache.
    const duringExports = async (serverBase: string, url: string) => {
      const exports = [0, 1].map(() =>
        runLoad<DownloadResult>(
          'download',
          `${serverBase}/api/line/${LARGE_HUB}/messages?apikey=${manifest.key}`,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const during = await rps(url);
      await Promise.all(exports);
      return during;
    };
    const q4 = await duringExports(base, q1Url);
    add('Q4', 'Q1 p99 with two exports running (ms)', q4.p99ms, 'Q1 p99 alone', q1Run.p99ms);
    add(
      'Q4',
      'Q1 requests/s with two exports running',
      q4.requestsPerSecond,
      'Q1 alone',
      q1Run.requestsPerSecond,
    );
    const q4Uncached = await duringExports(uncachedBase, q1UncachedUrl);
    await stop(uncached);
    add(
      'Q4',
      'no answer cache: Q1 p99 with two exports running (ms)',
      q4Uncached.p99ms,
      'Q1 p99 alone, no cache',
      q1Uncached.p99ms,
    );

    // Q5: durable webhook ingest, 32 signed senders, 1 and 10 events per request.
    const { child: ceiling, base: ceilingBase } = await startBaseline('webhook-baseline-server.ts', [
      CHANNEL_SECRET,
    ]);
    for (const perRequest of ['1', '10']) {
      const prefix = `${kind}-${Date.now()}-${perRequest}`;
      const webhookLoad = (url: string) =>
        runWebhookLoad<{ eventsPerSecond: number }>(url, CHANNEL_SECRET, {
          concurrency: 32,
          seconds,
          perRequest: Number(perRequest),
          prefix,
        });
      const top = await webhookLoad(`${ceilingBase}/webhooks/line/${WEBHOOK_HUB}`);
      const durable = await webhookLoad(`${base}/webhooks/line/${WEBHOOK_HUB}`);
      add(
        'Q5',
        `webhooks, ${perRequest} event(s) per request: durable events/s`,
        durable.eventsPerSecond,
        'node:http verify+parse, no store',
        top.eventsPerSecond,
      );
    }
    await stop(ceiling);
  } finally {
    await stopAll();
  }
  return rows;
}

function table(kind: StoreKind, rows: Row[]): string {
  const lines = [
    `### ${kind}`,
    '',
    '| query | figure | value | baseline | ratio |',
    '|---|---|---:|---|---:|',
  ];
  for (const row of rows) {
    const value = row.value >= 100 ? Math.round(row.value).toLocaleString('en-US') : row.value.toFixed(1);
    lines.push(
      `| ${row.query} | ${row.figure} | ${value} | ${row.baseline} | ${row.ratio === null ? '' : row.ratio.toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}

const store = args.choice('store', ['sqlite', 'postgres', 'both'], 'both');
const stores: StoreKind[] = store === 'both' ? ['sqlite', 'postgres'] : [store];

if (args.flag('generate')) {
  const whole = { min: 0, whole: true };
  const size: DatasetSize = {
    messages: args.number('messages', FULL_SIZE.messages, whole),
    contacts: args.number('contacts', FULL_SIZE.contacts, { min: 1, whole: true }),
    smallHubs: args.number('small-hubs', FULL_SIZE.smallHubs, whole),
    seed: args.number('seed', FULL_SIZE.seed, { whole: true }),
  };
  for (const kind of stores) await generate(kind, size);
} else {
  const results: Record<string, Row[]> = {};
  const markdown: string[] = [`## chatlog benchmark, ${new Date().toISOString().slice(0, 10)}`, ''];
  for (const kind of stores) {
    console.log(`\n== ${kind}`);
    const rows = await suite(kind);
    results[kind] = rows;
    const text = table(kind, rows);
    console.log(`\n${text}`);
    markdown.push(text, '');
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(
    path.join(out, `${date}.json`),
    `${JSON.stringify({ date: new Date().toISOString(), seconds, results }, null, 2)}\n`,
  );
  fs.writeFileSync(path.join(out, `${date}.md`), `${markdown.join('\n')}\n`);
  console.log(`\nresults: bench/results/${date}.json and .md`);
}
