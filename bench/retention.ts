/**
 * `npm run bench -- retention`: issue 19's retention goal, on SQLite and PostgreSQL: webhook ingest
 * (Q5: 32 signed senders, one event per request) while the server purges a large backlog, against
 * Q5 on the same server and store with nothing to purge; and how fast the backlog goes. `chatlog
 * serve` (its own retention worker) and the load (bench/webhook-load.ts) run in their own processes.
 *
 *   node --import tsx bench/retention.ts [--store sqlite|postgres|both] [--messages 1000000] [--load-seconds 5] [--rounds 3]
 *
 * A scratch store gets a hub of --messages messages, all a year old, and a Q5 hub. Q5 runs alone
 * (rounds, alternating with nothing), then the hub is given --retention-days 30 and the server is
 * started again: its worker starts purging a second after it listens, and Q5 runs while it does
 * (the purge must still be going when each round ends: checked). Every webhook must be answered
 * 200; at the end every message of the backlog is gone and every Q5 message kept.
 */

import path from 'node:path';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import type { ImportMessage } from '../src/store/store.js';
import { readArgs } from './args.js';
import { dropScratchStore, type StoreKind, scratchStore } from './feed-common.js';
import { ROOT, runWebhookLoad, startChatlog, stop, stopAll } from './processes.js';

const SECRET = 'chatlog-bench-retention-secret-0123456789abc';
const CHANNEL_SECRET = 'bench-retention-channel-secret';
const BACKLOG = '9500001';
const Q5 = '9500002';
const DAY = 86_400_000;

const args = readArgs(
  'node --import tsx bench/retention.ts [--store sqlite|postgres|both] [--messages 1000000] [--load-seconds 5] [--rounds 3]',
  { values: ['store', 'messages', 'load-seconds', 'rounds'] },
);
const messages = args.number('messages', 1_000_000, { min: 10_000, whole: true });
const loadSeconds = args.number('load-seconds', 5, { min: 1 });
const rounds = args.number('rounds', 3, { min: 1, max: 10, whole: true });
const storeArg = args.string('store') ?? 'both';
const stores: StoreKind[] = storeArg === 'both' ? ['sqlite', 'postgres'] : [storeArg as StoreKind];
const NAME = 'retention';

function serverEnv(kind: StoreKind): Record<string, string | undefined> {
  return kind === 'sqlite'
    ? {
        CHATLOG_SECRET: SECRET,
        LOG_LEVEL: 'info',
        CHATLOG_DATA_DIR: path.join(ROOT, 'bench', '.data', 'scratch', NAME),
        DATABASE_URL: undefined,
      }
    : {
        CHATLOG_SECRET: SECRET,
        LOG_LEVEL: 'info',
        DATABASE_URL: process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
        CHATLOG_PG_SCHEMA: `chatlog_bench_${NAME}`,
      };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const fmt = (values: number[]) =>
  [...values]
    .sort((a, b) => a - b)
    .map((v) => Math.round(v).toLocaleString('en-US'))
    .join(' / ');

async function q5(base: string, label: string): Promise<number> {
  const result = await runWebhookLoad<{ eventsPerSecond: number; failed: number }>(
    `${base}/webhooks/line/${Q5}`,
    CHANNEL_SECRET,
    { concurrency: 32, seconds: loadSeconds, perRequest: 1, prefix: `retention-${label}-${Date.now()}` },
  );
  if (result.failed > 0) throw new Error(`${result.failed} webhooks were not answered 200 (${label})`);
  return result.eventsPerSecond;
}

async function bench(kind: StoreKind): Promise<void> {
  console.log(`\n## ${kind}: Q5 while ${messages.toLocaleString('en-US')} messages are purged`);
  await dropScratchStore(kind, NAME);
  let store = scratchStore(kind, NAME);
  await store.migrate();
  const hubs = new HubService(store, createSecretBox(SECRET));
  await hubs.add(BACKLOG, { timeZone: 'Asia/Tokyo' });
  await hubs.add(Q5, { lineChannelSecret: CHANNEL_SECRET });
  const yearAgo = Date.now() - 365 * DAY;
  const started = performance.now();
  async function* backlog(): AsyncGenerator<ImportMessage[]> {
    for (let done = 0; done < messages; done += 10_000) {
      yield Array.from({ length: Math.min(10_000, messages - done) }, (_, i) => ({
        lineId: `U${String((done + i) % 5000).padStart(32, '0')}`,
        vid: '',
        name: '',
        sender: null,
        msg: `ご予約の確認です ${done + i}`,
        contentType: 'text',
        createdAt: yearAgo + done + i,
        sourceId: `bench:${done + i}`,
      }));
    }
  }
  await store.messages.importAll(BACKLOG, backlog(), Date.now());
  console.log(`backlog imported in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  await store.close();

  // Q5 alone: the same server and store, nothing to purge.
  let server = await startChatlog(serverEnv(kind));
  const alone: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) alone.push(await q5(server.base, `alone-${round}`));
  } finally {
    await stop(server.child);
  }

  store = scratchStore(kind, NAME);
  await new HubService(store, createSecretBox(SECRET)).add(BACKLOG, { retentionDays: 30 });
  const left = async () => (await store.retention.preview(BACKLOG, Date.now() - 30 * DAY)).messages;
  const purgeStarted = performance.now();
  server = await startChatlog(serverEnv(kind));
  const during: number[] = [];
  let throughout = true;
  try {
    for (let round = 0; round < rounds; round++) {
      during.push(await q5(server.base, `during-${round}`));
      if ((await left()) === 0) throughout = false;
    }
    while ((await left()) > 0) await new Promise((resolve) => setTimeout(resolve, 2000));
  } finally {
    await stop(server.child);
  }
  const purgeSeconds = (performance.now() - purgeStarted) / 1000;
  const q5Kept = (await store.retention.preview(Q5, Date.now() + DAY)).messages;
  await store.close();
  await dropScratchStore(kind, NAME);
  const ratio = median(during) / median(alone);
  console.log(`Q5 alone, events/s (min / median / max): ${fmt(alone)}`);
  console.log(
    `Q5 while purging: ${fmt(during)}${throughout ? '' : ' (the purge ended before the last round: NOT throughout)'}: ratio ${ratio.toFixed(2)} to alone (goal: no stall; ≥ 0.9 as for the other background work)`,
  );
  console.log(
    `purge of ${messages.toLocaleString('en-US')} messages: ${purgeSeconds.toFixed(0)} s from the server's start (${Math.round(messages / purgeSeconds).toLocaleString('en-US')} messages/s while Q5 ran part of the time); every webhook answered 200, ${q5Kept.toLocaleString('en-US')} Q5 messages kept`,
  );
}

try {
  console.log(`# Retention (issue 19), ${new Date().toISOString()}, Node ${process.version}`);
  for (const kind of stores) await bench(kind);
} finally {
  await stopAll();
}
