/**
 * `npm run bench -- q1-busy`: Q1 (one past day of the large hub, answer cache on, 32 connections, as
 * in bench/suite.ts) while signed LINE webhooks for the same hub arrive at a steady rate, each message
 * "now" (newer than every message of the dataset); against Q1 with no webhooks in the same run, before
 * and after the webhook phases. The server, the webhook sender and the Q1 load each run in their own
 * process; this process also asks for Q1 with If-None-Match every 100 ms and counts how often its
 * ETag changed (a change: every cached answer of that day was dropped).
 *
 *   node --import tsx bench/q1-busy.ts --generate [--dataset NAME] [--root DIR] [--store sqlite|postgres|both]
 *                                      [--messages N] [--contacts N] [--small-hubs N] [--seed S]
 *   node --import tsx bench/q1-busy.ts [--dataset NAME] [--root DIR] [--store sqlite|postgres|both]
 *                                      [--seconds S] [--rates 50,200]
 *                                      [--orders concurrent,ordered] [--connections 32]
 *                                      [--ahead-hours 12]
 *
 * `--root`: the checkout whose build (dist/, bin/chatlog) generates the dataset and serves it (this
 * one unless given), so that the same bench drives an older commit's build in a git worktree.
 * `--dataset`: the dataset's name: SQLite in bench/.data/q1-busy/NAME/sqlite, PostgreSQL in the schema
 * chatlog_q1busy_NAME (not the suite's: an older checkout may not understand a newer schema). Its large
 * hub has a LINE channel secret, which the suite's dataset has not.
 *
 * `--ahead-hours` (default 12; 0: none): before the server starts, one message dated that far ahead
 * of now is stored (as the ingest API stores) in the large hub, as a hub holds when its data was loaded with a whole "today"
 * or from a clock ahead: the webhooks then arrive older than its newest message (issue 45's hidden
 * check saw a cached read cost 3.4 times as much with them; each was a change of every range). Each
 * run adds one such message to the dataset.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Store } from '../src/store/store.js';
import { readArgs } from './args.js';
import { type DatasetSize, FULL_SIZE, LARGE_HUB, loadDataset, START_MS } from './dataset.js';
import type { RpsResult } from './load.js';
import { treeCpuSeconds } from './proc.js';
import { ROOT, runJson, startChatlog, stop, stopAll, waitForLine } from './processes.js';
import { type SenderResult, spawnWebhookSender } from './webhook-rate.js';

const SECRET = 'chatlog-bench-q1-busy-secret-0123456789abcdef';
const CHANNEL_SECRET = 'bench-q1-busy-channel-secret';
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The suite's Q1: day 400 of the dataset (2024-02-05 in Asia/Tokyo). */
const Q1_DAY = 400;
type StoreKind = 'sqlite' | 'postgres';
/**
 * How the webhooks are sent: `concurrent`, each when due whatever the answers before (as LINE does:
 * a slow answer does not hold back the next event), so the server may store them out of timestamp
 * order; `ordered`, one at a time, each stored after the one before it (and fewer than the rate when
 * answers take longer than its interval).
 */
type Order = 'concurrent' | 'ordered';

const args = readArgs(
  'node --import tsx bench/q1-busy.ts --generate [--dataset NAME] [--root DIR] [--store sqlite|postgres|both] [--messages N] [--contacts N] [--small-hubs N] [--seed S]\n' +
    '       node --import tsx bench/q1-busy.ts [--dataset NAME] [--root DIR] [--store sqlite|postgres|both] [--seconds S] [--rates 50,200] [--orders concurrent,ordered] [--connections N] [--ahead-hours H]',
  {
    values: [
      'store',
      'seconds',
      'rates',
      'connections',
      'root',
      'dataset',
      'messages',
      'contacts',
      'small-hubs',
      'seed',
      'orders',
      'ahead-hours',
    ],
    flags: ['generate'],
  },
);

// ---------------------------------------------------------------------------------------------
// The dataset, made by the build of --root.

const root = path.resolve(args.string('root') ?? ROOT);
const datasetName = args.string('dataset') ?? 'current';
if (!/^[a-z0-9_]{1,40}$/.test(datasetName)) throw new Error('--dataset must be [a-z0-9_]{1,40}');
const dataDir = path.join(ROOT, 'bench', '.data', 'q1-busy', datasetName);
const pgSchema = `chatlog_q1busy_${datasetName}`;

interface Manifest {
  root: string;
  commit: string;
  size: DatasetSize;
  messages: number;
  loadSeconds: number;
  key: string;
}

/** A module of the build in `root` (its dist/), typed as this checkout's source. */
async function built<T>(relative: string): Promise<T> {
  const file = path.join(root, 'dist', relative);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` in ${root}`);
  return (await import(pathToFileURL(file).href)) as T;
}

async function openStore(kind: StoreKind): Promise<Store> {
  if (kind === 'sqlite') {
    const { SqliteStore } = await built<typeof import('../src/store/sqlite/sqlite.store.js')>(
      'store/sqlite/sqlite.store.js',
    );
    return new SqliteStore({ dataDir: path.join(dataDir, 'sqlite') });
  }
  const { PostgresStore } = await built<typeof import('../src/store/postgres/postgres.store.js')>(
    'store/postgres/postgres.store.js',
  );
  return new PostgresStore({ connectionString: PG_URL, schema: pgSchema, statementTimeoutMs: 600_000 });
}

function commitOf(dir: string): string {
  const git = (...gitArgs: string[]) =>
    (spawnSync('git', ['-C', dir, ...gitArgs], { encoding: 'utf8' }).stdout ?? '').trim();
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'src');
  return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' (src/ with uncommitted changes)' : ''}`;
}

async function generate(kind: StoreKind, size: DatasetSize): Promise<void> {
  console.log(
    `generating the ${kind} dataset "${datasetName}" with the build in ${root}: ${size.messages.toLocaleString('en-US')} messages in the large hub...`,
  );
  if (kind === 'sqlite') fs.rmSync(path.join(dataDir, 'sqlite'), { recursive: true, force: true });
  const store = await openStore(kind);
  try {
    if (kind === 'postgres') await (store as unknown as { dropSchema(): Promise<void> }).dropSchema();
  } finally {
    await store.close();
  }
  const fresh = await openStore(kind);
  try {
    await fresh.migrate();
    const { createSecretBox } = await built<typeof import('../src/lib/secrets.js')>('lib/secrets.js');
    const { HubService } = await built<typeof import('../src/modules/hubs/hubs.usecases.js')>(
      'modules/hubs/hubs.usecases.js',
    );
    const { KeyService } = await built<typeof import('../src/modules/keys/keys.usecases.js')>(
      'modules/keys/keys.usecases.js',
    );
    const secrets = createSecretBox(SECRET);
    const hubs = new HubService(fresh, secrets);
    const loaded = await loadDataset(
      fresh,
      async (hubId) => {
        await hubs.add(
          hubId,
          hubId === LARGE_HUB
            ? { timeZone: 'Asia/Tokyo', lineChannelSecret: CHANNEL_SECRET }
            : { timeZone: 'Asia/Tokyo' },
        );
      },
      size,
      (line) => console.log(line),
    );
    if (kind === 'postgres') await (fresh as unknown as { analyze(): Promise<void> }).analyze();
    const { key } = await new KeyService(fresh, secrets).issue(LARGE_HUB, 'read', 'bench q1-busy');
    const manifest: Manifest = {
      root,
      commit: commitOf(root),
      size,
      messages: loaded.messages,
      loadSeconds: loaded.seconds,
      key,
    };
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, `${kind}.json`), `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(
      `loaded ${loaded.messages.toLocaleString('en-US')} messages in ${loaded.seconds.toFixed(1)} s`,
    );
  } finally {
    await fresh.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The measurement.

const aheadHours = args.number('ahead-hours', 12, { min: 0 });

/**
 * One message of the large hub dated `hours` ahead of now, stored as the ingest API would, just after
 * a change of history: the hub's answers then count messages from that time on as appends, and
 * older ones as changes (until the build treats them otherwise).
 */
async function storeAhead(kind: StoreKind, hours: number): Promise<void> {
  const store = await openStore(kind);
  try {
    const createdAt = Date.now() + hours * 3_600_000;
    const message = {
      kind: 'message' as const,
      lineId: `Ua${'0'.repeat(30)}`,
      sender: null,
      msg: `ahead of the clock by ${hours} hours`,
      contentType: 'text',
      createdAt,
      sourceId: `q1busy-ahead-${createdAt}`,
      sourceKind: null,
      sourceChatId: null,
    };
    // After a change of history (a contact's new name), so that this message sets where appends
    // begin, as the last of a hub's data loaded in time order would.
    await store.contacts.upsert(LARGE_HUB, message.lineId, { name: `ahead ${createdAt}` }, Date.now());
    await store.messages.ingest(LARGE_HUB, [message], Date.now());
  } finally {
    await store.close();
  }
}

interface Phase {
  name: string;
  rate: number;
  order: Order | null;
  q1: RpsResult;
  webhooks: SenderResult | null;
  /** Q1's ETag as seen every 100 ms during the phase: polls, and how many found it changed. */
  polls: number;
  etagChanges: number;
  /** The server's CPU (its threads, /proc) while the phase ran, seconds. */
  serverCpuSeconds: number;
  /** The phase's length as run, seconds. */
  wallSeconds: number;
}

const day = (offset: number) =>
  new Date(START_MS + 9 * 3_600_000 + offset * 86_400_000).toISOString().slice(0, 10);

function serverEnv(kind: StoreKind): Record<string, string | undefined> {
  return kind === 'sqlite'
    ? {
        CHATLOG_SECRET: SECRET,
        LOG_LEVEL: 'warn',
        CHATLOG_DATA_DIR: path.join(dataDir, 'sqlite'),
        DATABASE_URL: undefined,
      }
    : { CHATLOG_SECRET: SECRET, LOG_LEVEL: 'warn', DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: pgSchema };
}

/** GET with If-None-Match: the status and the answer's ETag. */
function conditionalGet(
  url: string,
  agent: http.Agent,
  etag: string | undefined,
): Promise<{ status: number; etag: string | undefined; body: Buffer }> {
  return new Promise((resolve) => {
    http
      .get(url, { agent, headers: etag ? { 'if-none-match': etag } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            etag: typeof res.headers.etag === 'string' ? res.headers.etag : undefined,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', () => resolve({ status: 0, etag: undefined, body: Buffer.alloc(0) }));
      })
      .on('error', () => resolve({ status: 0, etag: undefined, body: Buffer.alloc(0) }));
  });
}

/** Asks for `url` with its last ETag every 100 ms until stopped: polls and changes seen. */
function watchEtag(url: string, first: string | undefined) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let etag = first;
  let polls = 0;
  let changes = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const answer = await conditionalGet(url, agent, etag);
      polls += 1;
      if (answer.status === 200 && answer.etag !== etag) {
        changes += 1;
        etag = answer.etag;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    running = false;
    await loop;
    agent.destroy();
    return { polls, changes, etag };
  };
}

function spawnSender(
  url: string,
  rate: number,
  order: Order,
  seconds: number,
  contacts: number,
): ChildProcess {
  return spawnWebhookSender({
    url,
    secret: CHANNEL_SECRET,
    rate,
    order,
    seconds,
    contacts,
    prefix: `q1busy-${Date.now()}-${rate}`,
  });
}

async function measure(
  kind: StoreKind,
  seconds: number,
  rates: number[],
  orders: Order[],
  connections: number,
) {
  const manifestFile = path.join(dataDir, `${kind}.json`);
  if (!fs.existsSync(manifestFile)) {
    throw new Error(
      `no ${kind} dataset "${datasetName}": run \`npm run bench -- q1-busy --generate --dataset ${datasetName}${args.string('root') ? ` --root ${root}` : ''}\` first`,
    );
  }
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
  if (aheadHours > 0) await storeAhead(kind, aheadHours);
  const server = await startChatlog(serverEnv(kind), { root });
  const phases: Phase[] = [];
  try {
    const q1Url = `${server.base}/api/line/${LARGE_HUB}/messages?apikey=${manifest.key}&from=${day(Q1_DAY)}&to=${day(Q1_DAY)}`;
    const warmAgent = new http.Agent({ keepAlive: true });
    let first = await conditionalGet(q1Url, warmAgent, undefined);
    for (let i = 0; i < 50 && first.status !== 200; i++)
      first = await conditionalGet(q1Url, warmAgent, undefined);
    warmAgent.destroy();
    if (first.status !== 200)
      throw new Error(`Q1 answered ${first.status}: ${first.body.toString().slice(0, 200)}`);
    const contactsOfDay = JSON.parse(first.body.toString('utf8')) as Array<{ messages: unknown[] }>;
    const q1Messages = contactsOfDay.reduce((n, c) => n + c.messages.length, 0);
    const webhookUrl = `${server.base}/webhooks/line/${LARGE_HUB}`;

    const phase = async (name: string, rate: number, order: Order | null, reads = true) => {
      const senderChild = order
        ? spawnSender(webhookUrl, rate, order, seconds + 2, manifest.size.contacts)
        : null;
      const senderResult = senderChild
        ? waitForLine(senderChild, 'stdout', /^(\{.*\})\n/m).then(
            (match) => JSON.parse(match[1] ?? '{}') as SenderResult,
          )
        : Promise.resolve(null);
      senderResult.catch(() => undefined);
      // A second of webhooks before Q1's load starts, so that it meets them at their rate.
      if (senderChild) await new Promise((resolve) => setTimeout(resolve, 1000));
      const currentAgent = new http.Agent();
      const current = await conditionalGet(q1Url, currentAgent, undefined);
      currentAgent.destroy();
      const stopWatching = watchEtag(q1Url, current.etag);
      const cpu0 = treeCpuSeconds(server.pid);
      const started = performance.now();
      const q1 = reads
        ? await runJson<RpsResult>('load.ts', ['rps', q1Url, String(connections), String(seconds)])
        : await new Promise<RpsResult>((resolve) =>
            setTimeout(
              () =>
                resolve({
                  requestsPerSecond: 0,
                  requests: 0,
                  p50ms: 0,
                  p99ms: 0,
                  bytesPerSecond: 0,
                  errors: 0,
                  non2xx: 0,
                  seconds,
                }),
              seconds * 1000,
            ),
          );
      const serverCpuSeconds = treeCpuSeconds(server.pid) - cpu0;
      const wallSeconds = (performance.now() - started) / 1000;
      const watched = await stopWatching();
      const webhooks = await senderResult;
      if (senderChild) await stop(senderChild);
      const result: Phase = {
        name,
        rate,
        order,
        q1,
        webhooks,
        polls: watched.polls,
        etagChanges: watched.changes,
        serverCpuSeconds,
        wallSeconds,
      };
      phases.push(result);
      console.log(
        `  ${name}: Q1 ${Math.round(q1.requestsPerSecond)} requests/s, p99 ${q1.p99ms} ms, ` +
          `${q1.errors} errors, ${q1.non2xx} non-2xx; ETag changed ${watched.changes} times in ${watched.polls} polls` +
          (webhooks
            ? `; webhooks ${webhooks.eventsPerSecond.toFixed(1)}/s acknowledged (${webhooks.failed} failed), p99 ${webhooks.p99ms.toFixed(1)} ms`
            : ''),
      );
    };
    // Not measured: the first seconds of a server read slower (its caches fill, its code is compiled).
    await runJson<RpsResult>('load.ts', ['rps', q1Url, String(connections), '3']);
    await phase('Q1 alone', 0, null);
    for (const rate of rates) {
      for (const order of orders) {
        const how = order === 'concurrent' ? 'sent when due (concurrent)' : 'one at a time';
        // The webhooks' own CPU, taken away from the next phase's to leave the reads' (issue 45).
        await phase(`${rate} webhooks/s alone, ${how}`, rate, order, false);
        await phase(`Q1 with ${rate} webhooks/s, ${how}`, rate, order);
      }
    }
    await phase('Q1 alone, again', 0, null);
    return { manifest, q1Messages, phases, server: root, commit: commitOf(root) };
  } finally {
    await stop(server.child).catch(() => undefined);
    await stopAll();
  }
}

function table(kind: StoreKind, result: Awaited<ReturnType<typeof measure>>): string {
  const base = result.phases[0];
  const lines = [
    `### ${kind}: ${result.commit} (${result.server}), Q1 = ${day(Q1_DAY)}, ${result.q1Messages} messages, of ${result.manifest.size.messages.toLocaleString('en-US')} in the large hub`,
    '',
    "| phase | Q1 requests/s | ratio | Q1 p50 (ms) | Q1 p99 (ms) | ratio | Q1 errors + non-2xx | Q1 ETag changes / polls | webhooks acknowledged/s | webhook p99 (ms) | server CPU µs a read (webhooks' own taken away) | ratio |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  // Issue 45's goal 4: the server's CPU a read, less what the same webhooks cost it alone (the phase
  // before, at the same rate), against a read's with no webhooks; at most 1.25 times.
  const perRead = (p: Phase, i: number) => {
    if (p.q1.requests === 0) return undefined;
    const alone = p.webhooks ? result.phases[i - 1] : undefined;
    const webhookCpu =
      alone && alone.q1.requests === 0 ? (alone.serverCpuSeconds / alone.wallSeconds) * p.wallSeconds : 0;
    return ((p.serverCpuSeconds - webhookCpu) / p.q1.requests) * 1e6;
  };
  const baseRead = base ? perRead(base, 0) : undefined;
  result.phases.forEach((p, i) => {
    const read = perRead(p, i);
    lines.push(
      `| ${p.name} | ${Math.round(p.q1.requestsPerSecond)} | ${base ? (p.q1.requestsPerSecond / base.q1.requestsPerSecond).toFixed(2) : ''} | ${p.q1.p50ms} | ${p.q1.p99ms} | ${base ? (p.q1.p99ms / Math.max(1, base.q1.p99ms)).toFixed(2) : ''} | ${p.q1.errors + p.q1.non2xx} | ${p.etagChanges} / ${p.polls} | ${p.webhooks ? `${p.webhooks.eventsPerSecond.toFixed(1)}${p.webhooks.failed ? ` (${p.webhooks.failed} failed)` : ''}` : ''} | ${p.webhooks ? p.webhooks.p99ms.toFixed(1) : ''} | ${read === undefined ? `(${((p.serverCpuSeconds / p.wallSeconds) * 100).toFixed(0)} % of a core)` : read.toFixed(0)} | ${read !== undefined && baseRead ? (read / baseRead).toFixed(2) : ''} |`,
    );
  });
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

{
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
    const seconds = args.number('seconds', 10, { min: 1 });
    const connections = args.number('connections', 32, { min: 1, whole: true });
    const orders = (args.string('orders') ?? 'concurrent,ordered').split(',').map((text) => {
      if (text !== 'concurrent' && text !== 'ordered')
        throw new Error(`--orders must be concurrent and/or ordered, got "${text}"`);
      return text as Order;
    });
    const rates = (args.string('rates') ?? '50,200').split(',').map((text) => {
      const rate = Number(text);
      if (!Number.isFinite(rate) || rate <= 0)
        throw new Error(`--rates must be positive numbers, got "${text}"`);
      return rate;
    });
    for (const kind of stores) {
      console.log(`\n== ${kind}: the build in ${root}, dataset "${datasetName}"`);
      const result = await measure(kind, seconds, rates, orders, connections);
      const text = table(kind, result);
      console.log(`\n${text}\n`);
      console.log(
        JSON.stringify({ store: kind, root, dataset: datasetName, seconds, connections, ...result }),
      );
    }
  }
}
