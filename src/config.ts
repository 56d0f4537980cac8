/**
 * Every setting of chatlog: its environment variable, default and meaning, validated once at start.
 * Flags of the command line override the environment.
 */
import path from 'node:path';
import { UserError } from './lib/errors.js';

export interface Config {
  /** Where the embedded SQLite store and the generated server secret live. */
  dataDir: string;
  /** PostgreSQL connection string; unset means the embedded SQLite store. */
  databaseUrl: string | undefined;
  /** PostgreSQL read replica for the read API's streaming answers. */
  databaseReadUrl: string | undefined;
  /** PostgreSQL schema of chatlog's tables (created when missing); `public` when unset. */
  pgSchema: string | undefined;
  pgPoolSize: number;
  pgStatementTimeoutMs: number;
  pgConnectTimeoutMs: number;
  /** Redis connection string for shared rate-limit counters. */
  redisUrl: string | undefined;
  port: number;
  host: string;
  /** Server secret for key hashes and encrypted copies; generated into the data directory when unset. */
  secret: string | undefined;
  logLevel: string;
  /** How long a stopping server waits for in-flight answers (a streaming export included). */
  shutdownGraceMs: number;
  /** A connection with no traffic either way for this long is closed (a client that stopped reading). */
  idleTimeoutMs: number;
  /** A request whose headers have not all arrived after this long is refused (slow-header clients). */
  headersTimeoutMs: number;
  /** A request (headers and body) not wholly received after this long is refused (slow-body clients). */
  requestTimeoutMs: number;
  /** Public base URL printed in curl examples (defaults to http://HOST:PORT). */
  publicUrl: string | undefined;
  /** LINE Messaging API base URL, for display-name look-ups. */
  lineApiBaseUrl: string;
  /** Memory for recent small answers, keyed by their ETag; 0 turns the cache off. */
  answerCacheBytes: number;
  /** Bearer token for /metrics; without one, /metrics answers only when bound to localhost. */
  metricsToken: string | undefined;
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UserError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<'port' | 'host' | 'dataDir', string>> = {},
): Config {
  const secret = nonEmpty(env.CHATLOG_SECRET);
  if (secret !== undefined && secret.length < 32) {
    throw new UserError('CHATLOG_SECRET must be at least 32 characters long');
  }
  const logLevel = nonEmpty(env.LOG_LEVEL) ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) {
    throw new UserError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}, got "${logLevel}"`);
  }
  const port = overrides.port ?? nonEmpty(env.PORT) ?? '3000';
  return {
    dataDir: path.resolve(overrides.dataDir ?? nonEmpty(env.CHATLOG_DATA_DIR) ?? './data'),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    databaseReadUrl: nonEmpty(env.DATABASE_READ_URL),
    pgSchema: pgSchema(nonEmpty(env.CHATLOG_PG_SCHEMA)),
    pgPoolSize: integer('CHATLOG_PG_POOL_SIZE', nonEmpty(env.CHATLOG_PG_POOL_SIZE) ?? '10', 1, 1000),
    pgStatementTimeoutMs: integer(
      'CHATLOG_PG_STATEMENT_TIMEOUT_MS',
      nonEmpty(env.CHATLOG_PG_STATEMENT_TIMEOUT_MS) ?? '5000',
      100,
      3_600_000,
    ),
    pgConnectTimeoutMs: integer(
      'CHATLOG_PG_CONNECT_TIMEOUT_MS',
      nonEmpty(env.CHATLOG_PG_CONNECT_TIMEOUT_MS) ?? '2000',
      100,
      600_000,
    ),
    redisUrl: nonEmpty(env.REDIS_URL),
    port: integer('PORT', port, 0, 65535),
    host: overrides.host ?? nonEmpty(env.HOST) ?? '127.0.0.1',
    secret,
    logLevel,
    idleTimeoutMs: integer(
      'CHATLOG_IDLE_TIMEOUT_MS',
      nonEmpty(env.CHATLOG_IDLE_TIMEOUT_MS) ?? '60000',
      1000,
      86_400_000,
    ),
    ...requestTimeouts(env),
    shutdownGraceMs: integer(
      'CHATLOG_SHUTDOWN_GRACE_MS',
      nonEmpty(env.CHATLOG_SHUTDOWN_GRACE_MS) ?? '10000',
      0,
      3_600_000,
    ),
    publicUrl: nonEmpty(env.CHATLOG_PUBLIC_URL)?.replace(/\/+$/, ''),
    lineApiBaseUrl: lineApiBaseUrl(nonEmpty(env.LINE_API_BASE_URL) ?? 'https://api.line.me'),
    metricsToken: metricsToken(nonEmpty(env.CHATLOG_METRICS_TOKEN)),
    answerCacheBytes:
      integer('CHATLOG_ANSWER_CACHE_MB', nonEmpty(env.CHATLOG_ANSWER_CACHE_MB) ?? '64', 0, 65_536) *
      1024 *
      1024,
  };
}

function requestTimeouts(env: NodeJS.ProcessEnv) {
  const headersTimeoutMs = integer(
    'CHATLOG_HEADERS_TIMEOUT_MS',
    nonEmpty(env.CHATLOG_HEADERS_TIMEOUT_MS) ?? '15000',
    500,
    3_600_000,
  );
  const requestTimeoutMs = integer(
    'CHATLOG_REQUEST_TIMEOUT_MS',
    nonEmpty(env.CHATLOG_REQUEST_TIMEOUT_MS) ?? '120000',
    500,
    86_400_000,
  );
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new UserError('CHATLOG_HEADERS_TIMEOUT_MS must not be longer than CHATLOG_REQUEST_TIMEOUT_MS');
  }
  return { headersTimeoutMs, requestTimeoutMs };
}

function metricsToken(raw: string | undefined): string | undefined {
  if (raw !== undefined && raw.length < 16) {
    throw new UserError('CHATLOG_METRICS_TOKEN must be at least 16 characters long');
  }
  return raw;
}

/** /metrics is served when a token protects it, or when the server is reachable from this host only. */
export function metricsEnabled(config: Config): boolean {
  return config.metricsToken !== undefined || ['127.0.0.1', '::1', 'localhost'].includes(config.host);
}

function pgSchema(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === 'public') return undefined;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) {
    throw new UserError(`CHATLOG_PG_SCHEMA must be a lower-case SQL identifier, got "${raw}"`);
  }
  return raw;
}

function lineApiBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UserError(`LINE_API_BASE_URL must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UserError(`LINE_API_BASE_URL must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

export function publicBaseUrl(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}
