/**
 * `npm run bench -- media`: issue 17's goals for media (CONTRACT §11), on SQLite with the files
 * content store and on PostgreSQL with its chunk store, each figure next to a baseline measured in
 * the same run. `chatlog serve` (one worker), the fake LINE (bench/media-line.ts), the baselines
 * (bench/media-file-server.ts, media-client.ts fetch) and the load (media-client.ts get,
 * webhook-load.ts) each run in their own process. Content reaches chatlog the real way: set on the
 * fake LINE, then a signed LINE webhook naming it, answered 200.
 *
 *   node --import tsx bench/media.ts [--store sqlite|postgres|both] [--rounds 3] [--parts 1,2]
 *       [--large-mb 50] [--images 2000] [--image-kb 20] [--large-count 10] [--load-seconds 5]
 *
 * 1. Serving one --large-mb file: MB/s of GET /api/line/:hubId/content/:id, one client at a time
 *    (4 downloads) then 10 at once (10 downloads), against a bare node:http server streaming the
 *    same bytes from a file with fs.createReadStream. Goal ≥ 0.8 on files, ≥ 0.5 on PostgreSQL.
 *    And the server's VmRSS growth while the 10 run (sampled every 20 ms): goal < 30 MB.
 * 2. Downloads from the fake LINE: --images × --image-kb, then --large-count × --large-mb, spread
 *    over two hubs (a hub downloads 4 at once, a node 8): from the first webhook sent to the last
 *    item marked done (when GET answers 200), downloads/s and MB/s; baseline a bare client fetching
 *    the same sizes from the fake LINE 4 at once into fsynced files. And Q5 (32 signed senders, one
 *    text event per request) while each set downloads, --rounds times, each against Q5 alone just
 *    before and just after: goal within 10 % (the median). Beside each Q5 window, the CPU time each
 *    process used in it (the server's per event, the fake LINE's, this process's, the machine's busy
 *    and iowait cores): what the downloads cost, and whether the machine was the limit. While Q5
 *    runs, the count of finished downloads (a query of the store) is made every 250 ms instead of
 *    25 ms. On PostgreSQL each set's downloads end with a CHECKPOINT (not timed): without it, the
 *    524 MB a set of large downloads wrote at the full byte budget once Q5 stopped were flushed
 *    during whichever window came next, alone or not (bench/results/2026-11-27-issue-17-serving.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { lineSignature } from '../src/modules/ingest/line.signature.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import { PostgresStore } from '../src/store/postgres/postgres.store.js';
import { openDatabase } from '../src/store/sqlite/sqlite.driver.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { Store } from '../src/store/store.js';
import { generatedBytes } from '../test/fixtures/fake-line.js';
import { readArgs } from './args.js';
import { median } from './feed-common.js';
import { cpuSeconds, machineCpu, RssSampler, readStatus } from './proc.js';
import { ROOT, runJson, runWebhookLoad, startBaseline, startChatlog, stopAll } from './processes.js';

const SECRET = 'chatlog-bench-suite-secret-0123456789abcdef';
const CHANNEL_SECRET = 'bench-media-channel-secret';
const TOKEN = 'bench-media-channel-access-token';
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = 'chatlog_bench_media';
const DATA = path.join(ROOT, 'bench', '.data', 'media');
const MB = 1e6;

const args = readArgs(
  'node --import tsx bench/media.ts [--store sqlite|postgres|both] [--rounds 3] [--parts 1,2] [--large-mb 50] [--images 2000] [--image-kb 20] [--large-count 10] [--load-seconds 5]',
  { values: ['store', 'rounds', 'parts', 'large-mb', 'images', 'image-kb', 'large-count', 'load-seconds'] },
);
const rounds = args.number('rounds', 3, { min: 1, max: 10, whole: true });
const largeBytes = Math.round(args.number('large-mb', 50, { min: 1, max: 1000 }) * 1024 * 1024);
const images = args.number('images', 2000, { min: 10, whole: true });
const imageBytes = Math.round(args.number('image-kb', 20, { min: 1 }) * 1024);
const largeCount = args.number('large-count', 10, { min: 1, whole: true });
const loadSeconds = args.number('load-seconds', 5, { min: 1 });
const parts = new Set((args.string('parts') ?? '1,2').split(',').map((part) => Number(part.trim())));
type Kind = 'sqlite' | 'postgres';

let idCounter = BigInt(Date.now()) * 1_000_000n;
function nextId(): string {
  idCounter += 1n;
  return String(idCounter);
}
let seedCounter = Date.now() % 1e6;

function openStore(kind: Kind): Store {
  return kind === 'sqlite'
    ? new SqliteStore({ dataDir: path.join(DATA, 'sqlite') })
    : new PostgresStore({ connectionString: PG_URL, schema: PG_SCHEMA });
}

/** A fresh data directory or schema, its hubs (each with a channel secret and access token) and a read key. */
async function prepare(kind: Kind) {
  if (kind === 'sqlite') fs.rmSync(path.join(DATA, 'sqlite'), { recursive: true, force: true });
  else {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${PG_SCHEMA} CASCADE`);
    await client.end();
  }
  fs.mkdirSync(DATA, { recursive: true });
  const store = openStore(kind);
  try {
    await store.migrate();
    const secrets = createSecretBox(SECRET);
    const hubService = new HubService(store, secrets);
    const hubs = { serve: '801', small: ['811', '812'], large: ['821', '822'], q5: '831' };
    for (const hubId of [hubs.serve, ...hubs.small, ...hubs.large, hubs.q5]) {
      await hubService.add(hubId, { lineChannelSecret: CHANNEL_SECRET, lineChannelAccessToken: TOKEN });
    }
    const { key } = await new KeyService(store, secrets).issue(hubs.serve, 'read', 'bench media');
    return { hubs, key };
  } finally {
    await store.close();
  }
}

/** How many of the hubs' content items are done, and how many ended otherwise (gone, failed). */
function doneCounter(kind: Kind): {
  count(hubIds: string[]): Promise<{ done: number; other: number }>;
  /** PostgreSQL: a CHECKPOINT, so that what the last set wrote is on disk before the next window. */
  settle(): Promise<void>;
  close(): Promise<void>;
} {
  const sql = (n: number, param: (i: number) => string) =>
    `SELECT state, COUNT(*) AS n FROM content_items WHERE hub_id IN (${Array.from({ length: n }, (_, i) => param(i)).join(', ')}) GROUP BY state`;
  const tally = (rows: Array<{ state: string; n: number | string }>) => {
    let done = 0;
    let other = 0;
    for (const row of rows) {
      if (row.state === 'done') done += Number(row.n);
      else if (row.state !== 'pending') other += Number(row.n);
    }
    return { done, other };
  };
  if (kind === 'sqlite') {
    // The project's driver: on Node 20 it loads the better-sqlite3 build that runs there.
    const db = openDatabase(path.join(DATA, 'sqlite', 'chatlog.db'), { readonly: true, fileMustExist: true });
    return {
      count: async (hubIds) =>
        tally(
          db.prepare(sql(hubIds.length, () => '?')).all(...hubIds) as Array<{ state: string; n: number }>,
        ),
      // SQLite's own checkpoints are small and frequent (its WAL is checkpointed at 1,000 pages).
      settle: async () => undefined,
      close: async () => {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${PG_SCHEMA}` });
  const connected = client.connect();
  return {
    count: async (hubIds) => {
      await connected;
      return tally(
        (
          await client.query(
            sql(hubIds.length, (i) => `$${i + 1}`),
            hubIds,
          )
        ).rows,
      );
    },
    settle: async () => {
      await connected;
      await client.query('CHECKPOINT');
    },
    close: () => client.end(),
  };
}

/**
 * Signed LINE webhooks of media message events, 100 of a hub a request (the hubs' requests in turn),
 * 4 requests at once; all must answer 200. (One event a request took 12 s for 2,000 on PostgreSQL:
 * the downloads were done before Q5 began.)
 */
async function sendMedia(base: string, items: Array<{ hubId: string; id: string }>, kind = 'image') {
  const byHub = new Map<string, Array<{ hubId: string; ids: string[] }>>();
  for (const { hubId, id } of items) {
    const hubBatches = byHub.get(hubId) ?? [];
    byHub.set(hubId, hubBatches);
    const last = hubBatches.at(-1);
    if (last && last.ids.length < 100) last.ids.push(id);
    else hubBatches.push({ hubId, ids: [id] });
  }
  const batches: Array<{ hubId: string; ids: string[] }> = [];
  const most = Math.max(0, ...[...byHub.values()].map((hubBatches) => hubBatches.length));
  for (let i = 0; i < most; i++) {
    for (const hubBatches of byHub.values()) {
      const batch = hubBatches[i];
      if (batch) batches.push(batch);
    }
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        if (!batch) return;
        const raw = JSON.stringify({
          destination: 'U00000000000000000000000000000000',
          events: batch.ids.map((id) => ({
            type: 'message',
            mode: 'active',
            timestamp: Date.now(),
            source: { type: 'user', userId: `U${'0'.repeat(31)}7` },
            webhookEventId: `01MEDIA${id}`,
            deliveryContext: { isRedelivery: false },
            message: { id, type: kind, quoteToken: 'q', contentProvider: { type: 'line' } },
          })),
        });
        const response = await fetch(`${base}/webhooks/line/${batch.hubId}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-line-signature': lineSignature(CHANNEL_SECRET, raw),
          },
          body: raw,
        });
        if (response.status !== 200) throw new Error(`webhook: ${response.status} ${await response.text()}`);
      }
    }),
  );
}

async function setContent(control: string, items: Array<{ id: string; size: number; seed: number }>) {
  const response = await fetch(`${control}/contents`, {
    method: 'POST',
    body: JSON.stringify(items.map((item) => ({ ...item, contentType: 'image/jpeg' }))),
  });
  if (response.status !== 204) throw new Error(`fake LINE: ${response.status}`);
}

const fmt = (value: number, digits = 1) =>
  Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);
const mmm = (values: number[], digits = 1) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${fmt(sorted[0] ?? Number.NaN, digits)} / ${fmt(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, digits)} / ${fmt(sorted.at(-1) ?? Number.NaN, digits)}`;
};
const loadAverage = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function run(kind: Kind): Promise<string[]> {
  const out: string[] = [];
  const say = (line: string) => {
    console.log(line);
    out.push(line);
  };
  const { hubs, key } = await prepare(kind);
  const line = await startBaseline('media-line.ts', [TOKEN]);
  const lineBase = (await (await fetch(`${line.base}/line`)).text()).trim();
  const env =
    kind === 'sqlite'
      ? {
          CHATLOG_DATA_DIR: path.join(DATA, 'sqlite'),
          DATABASE_URL: undefined,
          CHATLOG_CONTENT_STORE: 'files',
        }
      : { DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: PG_SCHEMA, CHATLOG_CONTENT_STORE: 'postgres' };
  const { base, pid } = await startChatlog({
    CHATLOG_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    LINE_API_DATA_BASE_URL: lineBase,
    ...env,
  });
  const counter = doneCounter(kind);
  const linePid = line.child.pid ?? 0;
  const cpuNow = () => {
    const machine = machineCpu();
    const own = process.cpuUsage();
    return {
      at: performance.now() / 1000,
      server: cpuSeconds(pid),
      line: cpuSeconds(linePid),
      bench: (own.user + own.system) / 1e6,
      busy: machine.busy,
      iowait: machine.iowait,
    };
  };
  try {
    if (parts.has(1)) {
      const id = nextId();
      const seed = ++seedCounter;
      await setContent(line.base, [{ id, size: largeBytes, seed }]);
      await sendMedia(base, [{ hubId: hubs.serve, id }]);
      console.log(`webhook of ${id} answered 200; waiting for its content`);
      const url = `${base}/api/line/${hubs.serve}/content/${id}?apikey=${key}`;
      const deadline = Date.now() + 120_000;
      for (;;) {
        const response = await fetch(url, { method: 'GET' });
        const body = await response.arrayBuffer();
        if (response.status === 200) break;
        if (response.status !== 202 || Date.now() > deadline) {
          throw new Error(`content: ${response.status} ${Buffer.from(body).toString().slice(0, 300)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const file = path.join(DATA, 'baseline.bin');
      fs.writeFileSync(file, Buffer.concat([...generatedBytes(seed, largeBytes)]));
      const baseline = await startBaseline('media-file-server.ts', [file]);
      type Got = { bytes: number; failed: number; seconds: number; mbPerSecond: number };
      const get = async (target: string, concurrency: number) => {
        const got = await runJson<Got>('media-client.ts', [
          'get',
          target,
          String(concurrency),
          String(concurrency === 1 ? 4 : concurrency),
        ]);
        if (got.failed > 0) throw new Error(`${got.failed} downloads of ${target} failed`);
        return got.mbPerSecond;
      };
      const table: Record<string, { base: number[]; chatlog: number[]; ratio: number[] }> = {
        1: { base: [], chatlog: [], ratio: [] },
        10: { base: [], chatlog: [], ratio: [] },
      };
      const growth: number[] = [];
      for (let round = 1; round <= rounds; round++) {
        for (const concurrency of [1, 10]) {
          const row = table[concurrency] ?? { base: [], chatlog: [], ratio: [] };
          const b = await get(`${baseline.base}/`, concurrency);
          const before = readStatus(pid).rssKb;
          const sampler = concurrency === 10 ? new RssSampler(pid, 20, before) : undefined;
          const c = await get(url, concurrency);
          sampler?.stop();
          if (sampler) growth.push((sampler.peakKb - before) / 1024);
          row.base.push(b);
          row.chatlog.push(c);
          row.ratio.push(c / b);
        }
      }
      const goal = kind === 'sqlite' ? 0.8 : 0.5;
      say(
        `\n### ${kind}: 1. serving one ${fmt(largeBytes / MB)} MB content (${kind === 'sqlite' ? 'files' : 'PostgreSQL chunks'}), ${rounds} rounds, min / median / max (load average ${loadAverage()})\n`,
      );
      say('| clients | bare node:http + createReadStream, MB/s | chatlog GET content, MB/s | ratio | goal |');
      say('|---|---:|---:|---:|---|');
      for (const [concurrency, row] of Object.entries(table)) {
        const median = [...row.ratio].sort((x, y) => x - y)[Math.floor(row.ratio.length / 2)] ?? 0;
        say(
          `| ${concurrency === '1' ? '1 at a time (4 downloads)' : '10 at once (10 downloads)'} | ${mmm(row.base)} | ${mmm(row.chatlog)} | ${mmm(row.ratio, 2)} | ≥ ${goal}: ${median >= goal ? 'met' : 'MISSED'} (median) |`,
        );
      }
      const worst = Math.max(...growth);
      say(
        `\nServer VmRSS growth while 10 downloads ran: ${mmm(growth)} MB (goal < 30 MB: ${worst < 30 ? 'met' : 'MISSED'}, max).`,
      );
    }

    if (parts.has(2)) {
      type Fetched = { count: number; bytes: number; failed: number; seconds: number };
      /** Q5 for loadSeconds, and the CPU time each process (and the machine) used meanwhile. */
      const q5 = async (label: string) => {
        const before = cpuNow();
        const result = await runWebhookLoad<{ eventsPerSecond: number; failed: number }>(
          `${base}/webhooks/line/${hubs.q5}`,
          CHANNEL_SECRET,
          {
            concurrency: 32,
            seconds: loadSeconds,
            perRequest: 1,
            prefix: `q5-${kind}-${label}-${Date.now()}`,
          },
        );
        const after = cpuNow();
        const used = (key: keyof typeof before) => after[key] - before[key];
        const seconds = after.at - before.at;
        return {
          ...result,
          cpu: `${fmt((1000 * used('server')) / (result.eventsPerSecond * loadSeconds), 2)} / ${fmt(used('line'), 2)} / ${fmt(used('bench'), 2)} / ${fmt(used('busy') / seconds, 2)} / ${fmt(used('iowait') / seconds, 2)}`,
        };
      };
      const makeSet = (count: number, size: number, hubIds: string[]) =>
        Array.from({ length: count }, (_, i) => ({
          hubId: hubIds[i % hubIds.length] ?? '',
          id: nextId(),
          size,
          seed: ++seedCounter,
        }));
      /** Chatlog downloads the set; with `during`, Q5 runs once the webhooks are answered. */
      const download = async (
        set: ReturnType<typeof makeSet>,
        during?: () => Promise<{ eventsPerSecond: number; cpu: string }>,
      ) => {
        await setContent(line.base, set);
        const hubIds = [...new Set(set.map((item) => item.hubId))];
        const { done: doneBefore } = await counter.count(hubIds);
        const started = performance.now();
        await sendMedia(base, set);
        const acked = performance.now();
        let loadRunning = during !== undefined;
        const load = during?.().finally(() => {
          loadRunning = false;
        });
        let finished = 0;
        const waiting = (async () => {
          const deadline = performance.now() + 600_000;
          for (;;) {
            const { done, other } = await counter.count(hubIds);
            if (other > 0) throw new Error(`${other} downloads ended other than done`);
            if (done - doneBefore >= set.length) {
              finished = performance.now();
              return;
            }
            if (performance.now() > deadline) throw new Error('downloads not done within 10 min');
            // Every 25 ms; every 250 ms while Q5 runs, so that the count takes little CPU from it.
            await new Promise((resolve) => setTimeout(resolve, loadRunning ? 250 : 25));
          }
        })();
        const q5During = await load;
        const q5EndedAt = performance.now();
        await waiting;
        await counter.settle();
        const seconds = (finished - started) / 1000;
        return {
          seconds,
          webhookSeconds: (acked - started) / 1000,
          perSecond: set.length / seconds,
          mbPerSecond: (set.length * (set[0]?.size ?? 0)) / MB / seconds,
          q5: q5During,
          throughout: q5EndedAt < finished,
        };
      };
      const fetchBaseline = async (count: number, size: number) => {
        const set = makeSet(count, size, ['-']);
        await setContent(line.base, set);
        const dir = path.join(DATA, 'fetched');
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir, { recursive: true });
        const got = await runJson<Fetched>('media-client.ts', [
          'fetch',
          lineBase,
          TOKEN,
          dir,
          '4',
          set.map((item) => item.id).join(','),
        ]);
        fs.rmSync(dir, { recursive: true, force: true });
        if (got.failed > 0) throw new Error(`${got.failed} baseline fetches failed`);
        return { perSecond: count / got.seconds, mbPerSecond: got.bytes / MB / got.seconds };
      };
      // A fresh server's first seconds of load run slower (its code not yet optimised): not counted.
      // Then, for each set: the downloads alone, and --rounds rounds of the downloads with Q5
      // running, each against Q5 alone just before and just after it (one window of Q5 alone
      // varies by 10-20 % on this machine): the median ratio is judged.
      await q5('warm-up');
      let q5Alone = await q5('alone');
      const sets = [
        {
          name: `${images.toLocaleString('en-US')} × ${fmt(imageBytes / 1024, 0)} KiB`,
          count: images,
          size: imageBytes,
          hubIds: hubs.small,
        },
        {
          name: `${largeCount} × ${fmt(largeBytes / MB)} MB`,
          count: largeCount,
          size: largeBytes,
          hubIds: hubs.large,
        },
      ];
      const rows: string[] = [];
      const q5Rows: string[] = [];
      const cpuRows: string[] = [];
      const judged: string[] = [];
      for (const set of sets) {
        const bare = await fetchBaseline(set.count, set.size);
        const alone = await download(makeSet(set.count, set.size, set.hubIds));
        const row = (label: string, r: typeof alone) =>
          rows.push(
            `| ${set.name}, ${label} | ${fmt(bare.perSecond)} / ${fmt(bare.mbPerSecond)} | ${fmt(r.perSecond)} / ${fmt(r.mbPerSecond)} | ${(r.perSecond / bare.perSecond).toFixed(2)} | ${fmt(r.seconds)} (webhooks ${fmt(r.webhookSeconds, 2)}) |`,
          );
        row('alone', alone);
        // Q5 alone again: the window before each round's follows the set's last downloads.
        q5Alone = await q5(`alone-${set.count}-0`);
        const ratios: number[] = [];
        for (let round = 1; round <= rounds; round++) {
          const withLoad = await download(makeSet(set.count, set.size, set.hubIds), () =>
            q5(`during-${set.count}-${round}`),
          );
          row(`with Q5 running (${round})`, withLoad);
          const before = q5Alone;
          q5Alone = await q5(`alone-${set.count}-${round}`);
          const during = withLoad.q5?.eventsPerSecond ?? 0;
          const ratio = during / ((before.eventsPerSecond + q5Alone.eventsPerSecond) / 2);
          ratios.push(ratio);
          q5Rows.push(
            `| ${set.name} | ${round} | ${fmt(before.eventsPerSecond)} | ${fmt(during)} | ${fmt(q5Alone.eventsPerSecond)} | ${withLoad.throughout ? 'yes' : 'NO'} | ${ratio.toFixed(2)} |`,
          );
          cpuRows.push(
            `| ${set.name} | ${round} | ${before.cpu} | ${withLoad.q5?.cpu ?? ''} | ${q5Alone.cpu} |`,
          );
        }
        const middle = median(ratios);
        judged.push(
          `- ${set.name}: min ${Math.min(...ratios).toFixed(2)}, median ${middle.toFixed(2)}, max ${Math.max(...ratios).toFixed(2)} of ${ratios.length} (goal ≥ 0.90 by the median: ${middle >= 0.9 ? 'met' : 'MISSED'})`,
        );
      }
      say(`\n### ${kind}: 2. downloads from the fake LINE (two hubs; load average ${loadAverage()})\n`);
      say(
        '| set | bare client, 4 at once into fsynced files: downloads/s / MB/s | chatlog: downloads/s / MB/s | ratio | s from the first webhook to the last done |',
      );
      say('|---|---:|---:|---:|---:|');
      for (const row of rows) say(row);
      say(`\nQ5 (32 signed senders, 1 event per request, ${loadSeconds} s each), events/s:\n`);
      say(
        '| set | round | alone before | while downloads ran | alone after | downloads ran throughout | ratio to the mean alone |',
      );
      say('|---|---:|---:|---:|---:|---|---:|');
      for (const row of q5Rows) say(row);
      say(
        "\nCPU in those windows: the server's CPU ms per Q5 event / fake LINE CPU s / this bench's CPU s / the machine's busy cores / cores in iowait:\n",
      );
      say('| set | round | alone before | while downloads ran | alone after |');
      say('|---|---:|---|---|---|');
      for (const row of cpuRows) say(row);
      say('\nQ5 while downloads ran, ratio to Q5 alone:');
      for (const line of judged) say(line);
    }
  } finally {
    await counter.close().catch(() => undefined);
    await stopAll();
  }
  return out;
}

const store = args.choice('store', ['sqlite', 'postgres', 'both'], 'both');
const kinds: Kind[] = store === 'both' ? ['sqlite', 'postgres'] : [store];
const all: string[] = [];
for (const kind of kinds) {
  console.log(`\n== ${kind}`);
  all.push(...(await run(kind)), '');
}
console.log(`\n== summary (media.ts, ${new Date().toISOString()})\n`);
console.log(all.join('\n'));
