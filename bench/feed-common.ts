/** What bench/feed.ts and bench/search.ts share: the dataset's stores as the suite opens them, and small helpers. */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres.store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { Store } from '../src/store/store.js';
import type { DatasetSize } from './dataset.js';
import { ROOT } from './processes.js';

export type StoreKind = 'sqlite' | 'postgres';

/** The suite's dataset (bench/suite.ts), in the same places. */
const DATA = path.join(ROOT, 'bench', '.data');
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = 'chatlog_bench';

/** bench/suite.ts's manifest of the generated dataset. */
export interface Manifest {
  size: DatasetSize;
  messages: number;
  /** A read key of the large hub. */
  key: string;
}

export function readManifest(kind: StoreKind): Manifest {
  const file = path.join(DATA, `${kind}.json`);
  if (!fs.existsSync(file)) throw new Error(`no ${kind} dataset: run \`npm run bench -- --generate\` first`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
}

export function openStore(kind: StoreKind, options: { searchIndex?: boolean } = {}): Store {
  return kind === 'sqlite'
    ? new SqliteStore({ dataDir: path.join(DATA, 'sqlite'), ...options })
    : new PostgresStore({
        connectionString: PG_URL,
        schema: PG_SCHEMA,
        statementTimeoutMs: 600_000,
        ...options,
      });
}

/** A fresh empty store of its own (a temporary directory, or a PostgreSQL schema), for imports. */
export function scratchStore(kind: StoreKind, name: string, options: { searchIndex?: boolean } = {}): Store {
  return kind === 'sqlite'
    ? new SqliteStore({ dataDir: path.join(DATA, 'scratch', name), ...options })
    : new PostgresStore({
        connectionString: PG_URL,
        schema: `chatlog_bench_${name}`,
        statementTimeoutMs: 600_000,
        ...options,
      });
}

/** Removes what scratchStore(kind, name) made. */
export async function dropScratchStore(kind: StoreKind, name: string): Promise<void> {
  if (kind === 'sqlite') {
    fs.rmSync(path.join(DATA, 'scratch', name), { recursive: true, force: true });
    return;
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS chatlog_bench_${name} CASCADE`);
  } finally {
    await client.end();
  }
}

/** The bench database's URL and schema (PostgreSQL), for a raw client. */
export const PG_BENCH = { url: PG_URL, schema: PG_SCHEMA };

export function serverEnv(kind: StoreKind, secret: string): Record<string, string | undefined> {
  return kind === 'sqlite'
    ? {
        CHATLOG_SECRET: secret,
        LOG_LEVEL: 'warn',
        CHATLOG_DATA_DIR: path.join(DATA, 'sqlite'),
        DATABASE_URL: undefined,
      }
    : { CHATLOG_SECRET: secret, LOG_LEVEL: 'warn', DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: PG_SCHEMA };
}

/**
 * PostgreSQL: ANALYZE of the change log's tables (and VACUUM of the outbox, below), which the
 * dataset's generation leaves without statistics (PostgresStore.analyze() covers contacts and
 * messages only), as autovacuum would in time. Without it the planner expects a handful of rows
 * in `changes` and sorts all of the large hub's contact changes on every page of the feed. The
 * webhook tables too, as autovacuum would once they have grown: with statistics, an endpoint newer
 * than them makes PostgreSQL update each delivery through webhook_deliveries_recent instead of its
 * primary key (see bench/results/2026-11-23-issue-16.md). Resolves to the seconds it took.
 */
export async function prepareChangeLogTables(kind: StoreKind): Promise<number | undefined> {
  if (kind !== 'postgres') return undefined;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const started = performance.now();
    await client.query(`ANALYZE ${PG_SCHEMA}.changes`);
    // Earlier runs' deliveries, each updated two or three times: dead rows every run would read
    // past (the machine's autovacuum may be off).
    await client.query(`VACUUM (ANALYZE) ${PG_SCHEMA}.webhook_endpoints, ${PG_SCHEMA}.webhook_deliveries`);
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

/** The value at quantile `q` of `values` (sorted here), as bench/webhook-load.ts takes it. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** The middle value (the mean of the two middle ones when there are an even number). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle)
    ? ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2
    : (sorted[Math.floor(middle)] ?? Number.NaN);
}

export interface ReceiverStats {
  received: number;
  verified: number;
  failed: number;
  firstAt: number;
  lastAt: number;
}

/** GET /stats of bench/feed-receiver.ts or of bench/feed-client.ts's follower. */
export async function receiverStats<T = ReceiverStats>(base: string, query = ''): Promise<T> {
  const response = await fetch(`${base}/stats${query}`);
  return (await response.json()) as T;
}

/** Resolves once `check` is true (looked at every 20 ms); rejects after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`not done within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface DeliveryRound {
  ingestSeconds: number;
  /** Deliveries/s from the first ingest request to the last arrival. */
  endToEnd: number;
  /** Deliveries/s from the first arrival to the last. */
  firstToLast: number;
  /** Verified deliveries when the ingest ended, and when the load run during them ended. */
  atIngestEnd: number;
  afterLoad: number;
  failed: number;
  serverCpu: number;
  q5During: number | undefined;
}
