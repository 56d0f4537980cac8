/** Test fixtures: a fresh store in a temporary directory, and a real listening server over it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app.js';
import { appSettings, type Config, loadConfig } from '../src/config.js';
import { SETTINGS } from '../src/config.settings.js';
import { createLogger } from '../src/lib/logger.js';
import type { Metrics } from '../src/lib/metrics.js';
import { createSecretBox } from '../src/lib/secrets.js';
import { AccountService } from '../src/modules/account/account.usecases.js';
import type { FeedReadAhead } from '../src/modules/changes/changes.read-ahead.js';
import { readChanges } from '../src/modules/changes/changes.usecases.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import type { AnswerCache } from '../src/modules/messages/messages.cache.js';
import type { ReportColumns } from '../src/modules/reports/reports.columns.js';
import type { ContentStore } from '../src/store/content/content-store.js';
import { openContentStore } from '../src/store/content/open.js';
import { PostgresStore, type PostgresStoreOptions } from '../src/store/postgres/postgres.store.js';
import { AnswerThreads } from '../src/store/sqlite/answers/answers.threads.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { AnswerSource, Change, ImportMessage, Store } from '../src/store/store.js';

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123456789';

export function tempDir(prefix = 'chatlog-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A LINE that refuses every connection (nothing listens on port 9 here). */
const NO_LINE = 'http://127.0.0.1:9';

/** Which store the tests run on: SQLite unless CHATLOG_TEST_STORE=postgres. */
export const TEST_STORE_KIND: 'sqlite' | 'postgres' =
  process.env.CHATLOG_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
export const TEST_DATABASE_URL =
  process.env.CHATLOG_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * How long a test's PostgreSQL connection may take to open. chatlog's default (2 s) is a server's;
 * test files run side by side on a loaded machine, where a connection (or the event loop that times
 * it) can take longer without anything being wrong.
 */
export const TEST_PG_CONNECT_TIMEOUT_MS = 30_000;

/** A PostgresStore on the test database, with a test's connect timeout. */
export function testPostgresStore(
  options: Partial<PostgresStoreOptions> & { schema: string | undefined },
): PostgresStore {
  return new PostgresStore({
    connectionString: TEST_DATABASE_URL,
    connectTimeoutMs: TEST_PG_CONNECT_TIMEOUT_MS,
    ...options,
  });
}

/** The environment of a `chatlog` child process on a schema of the test database. */
export function testPostgresEnv(schema: string): Record<string, string> {
  return {
    DATABASE_URL: TEST_DATABASE_URL,
    CHATLOG_PG_SCHEMA: schema,
    CHATLOG_PG_CONNECT_TIMEOUT_MS: String(TEST_PG_CONNECT_TIMEOUT_MS),
  };
}

export interface TestStore {
  dir: string;
  store: Store;
  /** Environment for a child process (`chatlog serve`, `chatlog import`) over the same store. */
  env: Record<string, string>;
  hubs: HubService;
  keys: KeyService;
  accounts: AccountService;
  close(): Promise<void>;
}

/**
 * A fresh, empty store: a SQLite file in a new directory, or a new PostgreSQL schema. `writerThread`
 * false: SQLite's writes on this thread (requests made in one turn are then one group for sure).
 */
export async function createTestStore(options: { writerThread?: boolean } = {}): Promise<TestStore> {
  const dir = tempDir();
  let store: Store;
  let env: Record<string, string> = {
    CHATLOG_DATA_DIR: dir,
    CHATLOG_SECRET: TEST_SECRET,
    LINE_API_DATA_BASE_URL: NO_LINE,
  };
  let cleanUp = async (): Promise<void> => {};
  if (TEST_STORE_KIND === 'postgres') {
    const schema = `chatlog_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    store = testPostgresStore({ schema, statementTimeoutMs: 30_000 });
    env = { ...env, ...testPostgresEnv(schema) };
    cleanUp = async () => {
      const dropper = testPostgresStore({ schema });
      await dropper.dropSchema();
      await dropper.close();
    };
  } else {
    store = new SqliteStore({ dataDir: dir, writerThread: options.writerThread });
  }
  await store.migrate();
  const secrets = createSecretBox(TEST_SECRET);
  const hubs = new HubService(store, secrets);
  const keys = new KeyService(store, secrets);
  return {
    dir,
    store,
    env,
    hubs,
    keys,
    accounts: new AccountService({ store, hubs, keys, secrets }),
    close: async () => {
      await store.close();
      await cleanUp();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Opens another connection to a test store (after a child process wrote to it, say). */
export function reopenTestStore(t: Pick<TestStore, 'dir' | 'env'>): Store {
  if (t.env.DATABASE_URL) {
    return testPostgresStore({ connectionString: t.env.DATABASE_URL, schema: t.env.CHATLOG_PG_SCHEMA });
  }
  return new SqliteStore({ dataDir: t.dir });
}

/** The store's own soundness check: SQLite's integrity_check; PostgreSQL keeps its own. */
export async function assertStoreSound(store: Store): Promise<void> {
  if (store instanceof SqliteStore) {
    if (store.integrityCheck() !== 'ok') throw new Error(`integrity check failed: ${store.integrityCheck()}`);
  } else if (!(await store.ready())) {
    throw new Error('the store does not answer');
  }
}

/** Collects every log line the server writes. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestServer extends TestStore {
  url: string;
  /** Where the server keeps media: files under `dir`, or PostgreSQL (the test schema) on PostgreSQL. */
  blobs: ContentStore;
  logs: LogCapture;
  /** GET/HEAD/etc. against the listening server. */
  request(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** How many connections the server holds open now. */
  openConnections(): Promise<number>;
}

/**
 * A test store's settings: chatlog's defaults (src/config.settings.ts; the environment of the test run
 * is not read), its directory and secret, and the test's own.
 */
export function testConfig(dir: string, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ CHATLOG_DATA_DIR: dir, CHATLOG_SECRET: TEST_SECRET }),
    // Media are never downloaded from the real LINE: a test that wants them names its fake.
    lineApiDataBaseUrl: NO_LINE,
    ...overrides,
  };
}

/** An environment without any of chatlog's settings (as a newcomer's shell has), for a child process. */
export function withoutSettings(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const names = new Set(Object.values(SETTINGS).map((setting) => setting.env));
  return Object.fromEntries(Object.entries(env).filter(([name]) => !names.has(name)));
}

export async function startTestServer(
  options: Partial<Config> & {
    metrics?: Metrics;
    answers?: (store: Store) => AnswerSource;
    answerCache?: AnswerCache;
    /** The messages reports count, made of the server's store (else the app makes its own). */
    reports?: (store: Store) => ReportColumns;
  } = {},
): Promise<TestServer> {
  const base = await createTestStore();
  const logs = new LogCapture();
  const { metrics, answers, answerCache, reports, ...settings } = options;
  const config = testConfig(base.dir, settings);
  const blobs = await openContentStore({
    contentStore: undefined,
    databaseUrl: base.env.DATABASE_URL,
    pgSchema: base.env.CHATLOG_PG_SCHEMA,
    dataDir: base.dir,
  });
  const built = buildApp({
    store: base.store,
    blobs,
    secrets: createSecretBox(TEST_SECRET),
    logger: createLogger(config.logLevel, logs),
    ...appSettings(config),
    metrics,
    answers: answers?.(base.store),
    answerCache,
    answerThreads: 1,
    reports: reports?.(base.store),
  });
  const { app } = built;
  await app.listen({ port: 0, host: '127.0.0.1' });
  // On SQLite the read API's answers come from an answer thread, as they do once a server has
  // started (src/store/sqlite/answers/): the contract is tested on that path, not on the first moment's.
  if (built.answers instanceof AnswerThreads) await built.answers.whenReady();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  return {
    ...base,
    url,
    blobs,
    logs,
    request: (pathAndQuery, init) => fetch(url + pathAndQuery, init),
    openConnections: () =>
      new Promise<number>((resolve, reject) =>
        app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      ),
    close: async () => {
      await app.close();
      await blobs.close();
      await base.close();
    },
  };
}

let sequence = 0;

/** A message to import, with defaults for what a test does not care about. */
export function message(overrides: Partial<ImportMessage> & { createdAt: number }): ImportMessage {
  sequence += 1;
  return {
    lineId: 'U0001',
    vid: '',
    name: '',
    sender: null,
    msg: `message ${sequence}`,
    contentType: 'text',
    sourceId: `test:${sequence}`,
    ...overrides,
  };
}

export async function storeMessages(store: Store, hubId: string, messages: ImportMessage[]): Promise<void> {
  async function* batches() {
    yield messages;
  }
  await store.messages.importAll(hubId, batches(), Date.now());
}

export interface RawResponse {
  status: number;
  headers: import('node:http').IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose path is sent exactly as given (no normalisation), body decoded as sent. */
export async function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<RawResponse> {
  const http = await import('node:http');
  const { hostname, port } = new URL(baseUrl);
  const allHeaders =
    body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, method, path, headers: allHeaders }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Bytes written straight to the socket: for requests no HTTP client would send. */
export async function socketRequest(baseUrl: string, bytes: Buffer | string): Promise<string> {
  const net = await import('node:net');
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('socket timed out')));
  });
}

/** A TCP port that was free a moment ago (for child processes that must be told their port). */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Waits until a child process prints `text` on stderr; rejects if it exits first. */
export function waitForStderr(child: import('node:child_process').ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before printing "${text}": ${seen}`)));
  });
}

/** One page of a hub's feed through the feed's use case, as GET /changes reads it (with its checks and read-ahead). */
export async function readFeedPage(
  store: Store,
  readAhead: FeedReadAhead,
  hubId: string,
  after: number,
  limit: number,
): Promise<Change[]> {
  const position = await store.changes.position(hubId);
  const checked = { hubId, after, limit, waitMs: 0, position, headers: {} };
  return changesOfJson((await readChanges(store, checked, undefined, readAhead)).body);
}

/** The changes a page's body holds (FeedJsonPage), back as the store's Change values. */
export function changesOfJson(body: Uint8Array): Change[] {
  const served = JSON.parse(`[${Buffer.from(body).toString('utf8')}]`) as Array<Record<string, unknown>>;
  return served.map((json) => {
    const change = { ...json, seq: Number(json.seq), at: Date.parse(json.at as string) };
    if (json.type === 'retention.applied')
      return { ...change, before: Date.parse(json.before as string) } as Change;
    if (json.type !== 'message.created') return change as Change;
    const message = json.message as { createdAt: string };
    return {
      ...change,
      message: { ...message, createdAt: Date.parse(message.createdAt) },
      line: json.line === undefined ? null : JSON.stringify(json.line),
    } as Change;
  });
}
