/**
 * `npm run bench -- write-steps` (issue 45, goal 2): where one webhook event's microseconds go, step
 * by step, measured in one process with no HTTP. On a copy of the q1-busy dataset's SQLite store
 * (300,000 messages: `npm run bench -- q1-busy --generate --store sqlite --dataset m300k --messages
 * 300000 --contacts 3000 --small-hubs 0`), for `--events` signed LINE bodies of one text message:
 *
 * - the request's own steps, each timed over all the bodies: the signature (HMAC-SHA256, as
 *   lineSignatureProblem), JSON.parse, the translation (translateWebhook);
 * - the store's write as the writer thread runs it (a SqliteStore writing on this thread), groups of
 *   `--group` events (16 is what 32 senders at one event a request make): every SQLite statement
 *   timed by its text (better-sqlite3's run/get/all/exec), COMMIT apart, and the fdatasync of the WAL
 *   that makes each group durable (its wall time: it runs on libuv's pool, in the kernel);
 * - each secondary index of `messages`: the same writes on a copy without it, the INSERT's time less.
 *
 * What it does not time (HTTP, Fastify's hooks, the hand-off between threads) is the rest of the
 * server's CPU an event in `npm run bench -- webhook-ingest`, which the README's table puts beside it.
 *
 *   node --import tsx bench/write-steps.ts [--dataset m300k] [--events 4000] [--group 16] [--rounds 3]
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { translateWebhook } from '../src/modules/ingest/line.webhook.js';
import type { IngestOperation } from '../src/store/store.js';
import { readArgs } from './args.js';
import { LARGE_HUB } from './dataset.js';
import { ROOT } from './processes.js';

const args = readArgs(
  'node --import tsx bench/write-steps.ts [--dataset m300k] [--events 4000] [--group 16] [--rounds 3]',
  { values: ['dataset', 'events', 'group', 'rounds'] },
);
const dataset = args.string('dataset') ?? 'm300k';
const events = args.number('events', 4000, { min: 100, whole: true });
const groupSize = args.number('group', 16, { min: 1, whole: true });
const rounds = args.number('rounds', 3, { min: 1, whole: true });
const source = path.join(ROOT, 'bench', '.data', 'q1-busy', dataset, 'sqlite');
if (!fs.existsSync(path.join(source, 'chatlog.db'))) {
  throw new Error(
    `no SQLite dataset "${dataset}": run \`npm run bench -- q1-busy --generate --store sqlite --dataset ${dataset} --messages 300000 --contacts 3000 --small-hubs 0\``,
  );
}
const CHANNEL_SECRET = 'bench-write-steps-channel-secret';
/** Events written before the measured ones, on each copy of the store. */
const WARM_UP = 500;

/** A signed LINE body of one text message from one of the large hub's contacts, as bench/webhook-rate.ts. */
function body(n: number, prefix: string): { raw: Buffer; signature: string } {
  const id = `${prefix}-${n}`;
  const raw = Buffer.from(
    JSON.stringify({
      destination: 'U00000000000000000000000000000000',
      events: [
        {
          type: 'message',
          mode: 'active',
          timestamp: Date.now() + n,
          source: { type: 'user', userId: `Ua${(n % 3000).toString(16).padStart(30, '0')}` },
          webhookEventId: id,
          deliveryContext: { isRedelivery: false },
          message: { id, type: 'text', quoteToken: 'q', text: `いま届いたメッセージ ${n} 😀` },
        },
      ],
    }),
  );
  return { raw, signature: createHmac('sha256', CHANNEL_SECRET).update(raw).digest('base64') };
}

/** µs an item of `work` over every item, after a warm-up pass. */
function perItem<T>(items: readonly T[], work: (item: T) => unknown): number {
  for (const item of items.slice(0, 200)) work(item);
  const started = process.hrtime.bigint();
  for (const item of items) work(item);
  return Number(process.hrtime.bigint() - started) / 1000 / items.length;
}

/** Times every statement better-sqlite3 runs, by its text, from the moment it is called. */
class StatementTimes {
  readonly micros = new Map<string, number>();
  private readonly undo: Array<() => void> = [];

  install(db: { prepare(text: string): object; exec(text: string): unknown }): void {
    const statementProto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, unknown>;
    for (const method of ['run', 'get', 'all']) {
      const original = statementProto[method] as (...values: unknown[]) => unknown;
      const times = this;
      statementProto[method] = function (this: { source: string }, ...values: unknown[]) {
        const started = process.hrtime.bigint();
        try {
          return original.apply(this, values);
        } finally {
          times.add(this.source, started);
        }
      };
      this.undo.push(() => {
        statementProto[method] = original;
      });
    }
    const dbProto = Object.getPrototypeOf(db) as Record<string, unknown>;
    const exec = dbProto.exec as (text: string) => unknown;
    const times = this;
    dbProto.exec = function (this: unknown, text: string) {
      const started = process.hrtime.bigint();
      try {
        return exec.call(this, text);
      } finally {
        times.add(text, started);
      }
    };
    this.undo.push(() => {
      dbProto.exec = exec;
    });
  }

  uninstall(): void {
    for (const undo of this.undo.splice(0)) undo();
  }

  private add(text: string, started: bigint): void {
    const name = text.replace(/\s+/g, ' ').trim().slice(0, 70);
    this.micros.set(name, (this.micros.get(name) ?? 0) + Number(process.hrtime.bigint() - started) / 1000);
  }
}

interface WriteRun {
  /** µs an event: each statement's, the fdatasyncs' wall time, the whole write's wall time, the CPU. */
  statements: Map<string, number>;
  syncMicros: number;
  wallMicros: number;
  /** Pages the commits wrote to the WAL, an event. */
  pagesPerEvent: number;
  cpuMicros: number;
}

/** A copy of the dataset's store. */
function copyStore(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-write-steps-'));
  for (const file of fs.readdirSync(source)) fs.copyFileSync(path.join(source, file), path.join(dir, file));
  return dir;
}

let fdatasyncMicros = 0;
{
  // WalSync promisifies fs.fdatasync when its module loads: timed from here on.
  const original = fs.fdatasync;
  (fs as { fdatasync: unknown }).fdatasync = (fd: number, callback: (error: Error | null) => void) => {
    const started = process.hrtime.bigint();
    original(fd, (error) => {
      fdatasyncMicros += Number(process.hrtime.bigint() - started) / 1000;
      callback(error);
    });
  };
}
const { SqliteStore } = await import('../src/store/sqlite/sqlite.store.js');

async function writeRun(
  operations: IngestOperation[][],
  options: { dropIndex?: string; checkpoints: boolean },
): Promise<WriteRun> {
  const { dropIndex } = options;
  const dir = copyStore();
  const store = new SqliteStore({ dataDir: dir, writerThread: false });
  const db = (
    store as unknown as {
      db: {
        prepare(text: string): object;
        exec(text: string): unknown;
        pragma(text: string, o?: object): unknown;
      };
    }
  ).db;
  if (dropIndex) db.exec(`DROP INDEX ${dropIndex}`);
  const times = new StatementTimes();
  try {
    // A warm-up of WARM_UP events, not counted.
    for (const ops of operations.slice(0, WARM_UP)) await store.messages.ingest(LARGE_HUB, ops, Date.now());
    // Without checkpoints the WAL is emptied and left to grow while measuring: its frames are the
    // pages the commits wrote. With them (as the server runs), COMMIT copies the WAL back now and then.
    db.pragma('wal_checkpoint(TRUNCATE)');
    if (!options.checkpoints) db.pragma('wal_autocheckpoint = 0');
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    times.install(db);
    fdatasyncMicros = 0;
    const measured = operations.slice(WARM_UP);
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    for (let i = 0; i < measured.length; i += groupSize) {
      // Added in one turn, the requests form one group (GroupCommit), as concurrent senders' do.
      await Promise.all(
        measured.slice(i, i + groupSize).map((ops) => store.messages.ingest(LARGE_HUB, ops, Date.now())),
      );
    }
    const wallMicros = Number(process.hrtime.bigint() - started) / 1000;
    const used = process.cpuUsage(cpu);
    times.uninstall();
    const n = measured.length;
    const frames = options.checkpoints
      ? Number.NaN
      : (fs.statSync(path.join(dir, 'chatlog.db-wal')).size - 32) / (pageSize + 24);
    return {
      pagesPerEvent: frames / n,
      statements: new Map([...times.micros].map(([name, micros]) => [name, micros / n])),
      syncMicros: fdatasyncMicros / n,
      wallMicros: wallMicros / n,
      cpuMicros: (used.user + used.system) / n,
    };
  } finally {
    times.uninstall();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const fmt = (micros: number) => micros.toFixed(1);
const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${fmt(sorted[0] ?? 0)} / ${fmt(median(sorted))} / ${fmt(sorted[sorted.length - 1] ?? 0)}`;
};

const steps = { signature: [] as number[], parse: [] as number[], translate: [] as number[] };
const perStatement = new Map<string, number[]>();
const whole = { sync: [] as number[], wall: [] as number[], cpu: [] as number[], pages: [] as number[] };
const indexes = [
  'messages_by_contact_and_time',
  'messages_by_hub_and_time',
  'messages_by_public_id',
  'messages_in_feed_order',
];
const withoutIndex = new Map<string, number[]>();
const INSERT = 'INSERT INTO messages';
const checkpointShare: number[] = [];
const commitOf = (r: WriteRun) => r.statements.get('COMMIT') ?? 0;

for (let round = 1; round <= rounds; round++) {
  const prefix = `steps-${Date.now()}-${round}`;
  const roundBodies = Array.from({ length: events + WARM_UP }, (_, n) => body(n, prefix));
  steps.signature.push(
    perItem(roundBodies, ({ raw, signature }) =>
      timingSafeEqual(
        Buffer.from(signature, 'base64'),
        createHmac('sha256', CHANNEL_SECRET).update(raw).digest(),
      ),
    ),
  );
  const parsed = roundBodies.map(({ raw }) => JSON.parse(raw.toString('utf8')) as unknown);
  steps.parse.push(perItem(roundBodies, ({ raw }) => JSON.parse(raw.toString('utf8'))));
  steps.translate.push(perItem(parsed, (json) => translateWebhook(json, Date.now())));
  const operations = parsed.map((json) => translateWebhook(json, Date.now()).operations);
  const run = await writeRun(operations, { checkpoints: true });
  const noCheckpoints = await writeRun(operations, { checkpoints: false });
  for (const [name, micros] of run.statements)
    perStatement.set(name, [...(perStatement.get(name) ?? []), micros]);
  whole.sync.push(run.syncMicros);
  whole.wall.push(run.wallMicros);
  whole.cpu.push(run.cpuMicros);
  whole.pages.push(noCheckpoints.pagesPerEvent);
  checkpointShare.push(commitOf(run) - commitOf(noCheckpoints));
  const insertOf = (r: WriteRun) => [...r.statements].find(([name]) => name.startsWith(INSERT))?.[1] ?? 0;
  for (const index of indexes) {
    // Each beside a run with every index, one after the other: the machine's speed drifts.
    const withIt = await writeRun(operations, { checkpoints: true });
    const without = await writeRun(operations, { dropIndex: index, checkpoints: true });
    withoutIndex.set(index, [...(withoutIndex.get(index) ?? []), insertOf(withIt) - insertOf(without)]);
  }
  console.log(
    `round ${round}: write ${fmt(run.cpuMicros)} µs of CPU an event, fdatasync ${fmt(run.syncMicros)} µs of wall time`,
  );
}

console.log(
  `\none LINE text event, ${events.toLocaleString('en-US')} events a round in groups of ${groupSize}, store of the "${dataset}" dataset; µs an event, min / median / max of ${rounds}\n`,
);
console.log('| step | µs an event |');
console.log('|---|---:|');
console.log(`| signature (HMAC-SHA256 of the body, constant-time compare) | ${spread(steps.signature)} |`);
console.log(`| JSON.parse of the body | ${spread(steps.parse)} |`);
console.log(`| translation (translateWebhook) | ${spread(steps.translate)} |`);
const rows = [...perStatement].sort((a, b) => median(b[1]) - median(a[1]));
let statementsTotal = 0;
for (const [name, values] of rows) {
  statementsTotal += median(values);
  if (median(values) < 0.05) continue;
  console.log(`| SQL: \`${name.replace(/\|/g, '\\|')}\` | ${spread(values)} |`);
}
console.log(`| of the COMMITs: the checkpoints (against a run without) | ${spread(checkpointShare)} |`);
for (const [index, values] of withoutIndex)
  console.log(`| of the INSERT: the index ${index} | ${spread(values)} |`);
console.log(`| every statement together (the list above) | ${fmt(statementsTotal)} |`);
console.log(
  `| the write's CPU, the whole process (statements, the store's JS and promises, the kernel's share of the fdatasyncs) | ${spread(whole.cpu)} |`,
);
console.log(
  `| pages the commits wrote to the WAL, an event (not µs; ${(median(whole.pages) * groupSize).toFixed(1)} a group) | ${spread(whole.pages)} |`,
);
console.log(`| fdatasync of the WAL, wall time (on libuv's pool, a group's share) | ${spread(whole.sync)} |`);
