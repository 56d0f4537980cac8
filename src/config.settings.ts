/**
 * Every setting of chatlog, declared once: its environment variable, default, meaning, command-line
 * option and check. From this table follow the `Config` type and `loadConfig` (config.ts), the options
 * and `--help` of the command line (cli/program.ts), the README's table of settings
 * (scripts/settings-table.ts; test/lib/settings.test.ts fails when the README differs) and the
 * settings of the tests' servers (test/helpers.ts).
 *
 * The order is the order of the checks: when several settings are wrong, the first one here is the one
 * named. It is also the order of the README's table.
 */
import path from 'node:path';
import { UserError } from './lib/errors.js';

export interface Setting<T> {
  /** The environment variable. */
  env: string;
  /** The value when the variable is unset or empty, as it would be written in the environment. */
  default?: string;
  /** The README's default column when `default` does not say it: `generated`; `unset` when left out. */
  shownDefault?: string;
  /** What it does, in the README's words (Markdown, one line). */
  doc: string;
  /** The command-line option that overrides the variable, and its help without the variable and default. */
  flag?: { flags: string; help: string };
  /** The value from the variable's text (undefined when unset); throws a UserError naming the variable. */
  parse(raw: string | undefined, env: string): T;
}

/** A setting that always has a value: `parse` sees the default when the variable is unset. */
function withDefault<T>(
  setting: Omit<Setting<T>, 'parse' | 'default'> & { default: string; parse(raw: string, env: string): T },
): Setting<T> {
  return { ...setting, parse: (raw, env) => setting.parse(raw ?? setting.default, env) };
}

/** A setting that may be unset: undefined then, else the text (checked by `parse` when one is given). */
function optional<T = string>(
  setting: Omit<Setting<T>, 'parse'> & { parse?(raw: string, env: string): T },
): Setting<T | undefined> {
  const parse = setting.parse ?? ((raw: string) => raw as T);
  return { ...setting, parse: (raw, env) => (raw === undefined ? undefined : parse(raw, env)) };
}

const text = (raw: string) => raw;

function integer(min: number, max: number) {
  return (raw: string, env: string): number => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new UserError(`${env} must be a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
}

function atLeast(characters: number) {
  return (raw: string, env: string): string => {
    if (raw.length < characters) throw new UserError(`${env} must be at least ${characters} characters long`);
    return raw;
  };
}

function yesOrNo(raw: string, env: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new UserError(`${env} must be true or false, got "${raw}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function httpUrl(raw: string, env: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UserError(`${env} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UserError(`${env} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

export const SETTINGS = {
  dataDir: withDefault({
    env: 'CHATLOG_DATA_DIR',
    default: './data',
    doc: 'directory of the SQLite store (`chatlog.db`) and the generated secret',
    flag: { flags: '--data-dir <dir>', help: 'data directory of the embedded store' },
    parse: (raw) => path.resolve(raw),
  }),
  secret: optional({
    env: 'CHATLOG_SECRET',
    shownDefault: 'generated',
    doc: 'server secret (at least 32 characters) for key hashes and encrypted copies. Unset: generated once into `CHATLOG_DATA_DIR/secret` with mode 0600. Keep it: keys stop working if it changes.',
    parse: atLeast(32),
  }),
  logLevel: withDefault({
    env: 'LOG_LEVEL',
    default: 'info',
    doc: `${LOG_LEVELS.slice(0, -1)
      .map((level) => `\`${level}\``)
      .join(', ')} or \`${LOG_LEVELS.at(-1)}\``,
    parse: (raw, env) => {
      if (!LOG_LEVELS.includes(raw)) {
        throw new UserError(`${env} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
      }
      return raw;
    },
  }),
  databaseUrl: optional({
    env: 'DATABASE_URL',
    doc: 'PostgreSQL connection string (`postgres://user:pass@host:5432/db`); unset means SQLite in `CHATLOG_DATA_DIR`',
  }),
  databaseReadUrl: optional({
    env: 'DATABASE_READ_URL',
    doc: "a PostgreSQL read replica for the read API's answers (key checks still read the primary)",
  }),
  pgSchema: withDefault({
    env: 'CHATLOG_PG_SCHEMA',
    default: 'public',
    doc: "schema of chatlog's tables, created when missing",
    // `public` is PostgreSQL's own default: undefined, so the store names no schema.
    parse: (raw, env) => {
      if (raw === 'public') return undefined;
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) {
        throw new UserError(`${env} must be a lower-case SQL identifier, got "${raw}"`);
      }
      return raw;
    },
  }),
  pgPoolSize: withDefault({
    env: 'CHATLOG_PG_POOL_SIZE',
    default: '10',
    doc: "connections per pool (one pool for writes and small reads, one for streaming answers, one for the change feed's pages)",
    parse: integer(1, 1000),
  }),
  pgStatementTimeoutMs: withDefault({
    env: 'CHATLOG_PG_STATEMENT_TIMEOUT_MS',
    default: '5000',
    doc: 'longest one statement (or one fetch of a streaming answer) may run',
    parse: integer(100, 3_600_000),
  }),
  pgConnectTimeoutMs: withDefault({
    env: 'CHATLOG_PG_CONNECT_TIMEOUT_MS',
    default: '2000',
    doc: 'longest to wait for a database connection before answering 503',
    parse: integer(100, 600_000),
  }),
  redisUrl: optional({
    env: 'REDIS_URL',
    doc: 'Redis for rate-limit counters shared by several nodes (`redis://127.0.0.1:6379`); unset: counters in the process (or the cluster primary with `--workers`)',
  }),
  port: withDefault({
    env: 'PORT',
    default: '3000',
    doc: 'port of `./bin/chatlog serve`',
    flag: { flags: '--port <n>', help: 'TCP port' },
    parse: integer(0, 65535),
  }),
  host: withDefault({
    env: 'HOST',
    default: '127.0.0.1',
    doc: 'address to bind; `0.0.0.0` for every interface',
    flag: { flags: '--host <address>', help: 'address to bind' },
    parse: text,
  }),
  idleTimeoutMs: withDefault({
    env: 'CHATLOG_IDLE_TIMEOUT_MS',
    default: '60000',
    doc: 'a connection with no traffic either way for this long is closed (a client that stopped reading an export gives its cursor back)',
    parse: integer(1000, 86_400_000),
  }),
  headersTimeoutMs: withDefault({
    env: 'CHATLOG_HEADERS_TIMEOUT_MS',
    default: '15000',
    doc: 'a request whose headers have not all arrived by then is answered `408 request_timeout` and its connection closed (a client sending a byte now and then is not idle, so the idle timeout would not end it)',
    parse: integer(500, 3_600_000),
  }),
  requestTimeoutMs: withDefault({
    env: 'CHATLOG_REQUEST_TIMEOUT_MS',
    default: '120000',
    doc: 'the same for the whole request, body included (a 16 MiB ingest body must arrive at 140 KB/s or faster); answers may take longer, only receiving is timed',
    parse: integer(500, 86_400_000),
  }),
  shutdownGraceMs: withDefault({
    env: 'CHATLOG_SHUTDOWN_GRACE_MS',
    default: '10000',
    doc: 'how long SIGTERM waits for in-flight answers; answers still running then are cut',
    parse: integer(0, 3_600_000),
  }),
  publicUrl: optional({
    env: 'CHATLOG_PUBLIC_URL',
    doc: "base URL clients reach chatlog at, shown in `./bin/chatlog demo`'s curl line, on the account screen and in `/docs`'s examples (unset: `http://HOST:PORT` for the demo, the request's own host for the pages); `https://` also marks the session cookie `Secure`",
    parse: (raw) => raw.replace(/\/+$/, ''),
  }),
  hubspotClientSecret: optional({
    env: 'CHATLOG_HUBSPOT_CLIENT_SECRET',
    doc: "your HubSpot app's client secret: HubSpot's webhooks (`POST /webhooks/hubspot`, erasing the contacts of each `contact.privacyDeletion`, and `POST /webhooks/hubspot/channel`, agents' replies) are checked with it (signature v3), and with the client id it connects hubs to HubSpot inboxes; unset, those endpoints refuse every request (401)",
    parse: atLeast(8),
  }),
  hubspotClientId: optional({
    env: 'CHATLOG_HUBSPOT_CLIENT_ID',
    doc: "your HubSpot app's client id: with the client secret, hubs can be connected to a HubSpot inbox (`Connect HubSpot`) and their messages are published there (CONTRACT §18); unset, nothing is published",
    parse: atLeast(8),
  }),
  hubspotAppId: optional({
    env: 'CHATLOG_HUBSPOT_APP_ID',
    doc: "your HubSpot app's id, for `./bin/chatlog hubspot channel register`",
    parse: (raw, env) => {
      if (!/^\d{1,12}$/.test(raw))
        throw new Error(`${env} must be your HubSpot app's id (digits), got "${raw}"`);
      return raw;
    },
  }),
  hubspotDeveloperApiKey: optional({
    env: 'CHATLOG_HUBSPOT_DEVELOPER_API_KEY',
    doc: "your HubSpot developer account's API key, for `./bin/chatlog hubspot channel register` (it is sent to HubSpot only)",
    parse: atLeast(8),
  }),
  hubspotApiBaseUrl: withDefault({
    env: 'HUBSPOT_API_BASE_URL',
    default: 'https://api.hubapi.com',
    doc: "HubSpot's API base URL: custom channels, OAuth tokens, inboxes (tests point it at a local fake)",
    parse: httpUrl,
  }),
  hubspotAppBaseUrl: withDefault({
    env: 'HUBSPOT_APP_BASE_URL',
    default: 'https://app.hubspot.com',
    doc: "HubSpot's app base URL, where `Connect HubSpot` sends the owner to authorise chatlog (tests point it at a local fake)",
    parse: httpUrl,
  }),
  lineApiBaseUrl: withDefault({
    env: 'LINE_API_BASE_URL',
    default: 'https://api.line.me',
    doc: 'LINE Messaging API base URL for display-name look-ups (tests point it at a local fake)',
    parse: httpUrl,
  }),
  lineApiDataBaseUrl: withDefault({
    env: 'LINE_API_DATA_BASE_URL',
    default: 'https://api-data.line.me',
    doc: "LINE's content API base URL, where images, videos, audio and files are downloaded from (tests point it at a local fake)",
    parse: httpUrl,
  }),
  contentStore: optional<'files' | 'postgres'>({
    env: 'CHATLOG_CONTENT_STORE',
    shownDefault: '`postgres` with `DATABASE_URL`, else `files`',
    doc: 'where downloaded media are kept: `files` (under `CHATLOG_DATA_DIR/content`) or `postgres` (in the database, so that several nodes need no shared disk)',
    parse: (raw, env) => {
      if (raw !== 'files' && raw !== 'postgres') {
        throw new UserError(`${env} must be files or postgres, got "${raw}"`);
      }
      return raw;
    },
  }),
  downloadConcurrency: withDefault({
    env: 'CHATLOG_DOWNLOAD_CONCURRENCY',
    default: '8',
    doc: 'media downloads from LINE at once per server process (each hub has at most 4 at once on all nodes together); `0` downloads nothing on this node',
    parse: integer(0, 64),
  }),
  downloadMbps: optional({
    env: 'CHATLOG_DOWNLOAD_MBPS',
    shownDefault: '`32` with `CHATLOG_CONTENT_STORE=postgres`, else `0`',
    doc: 'megabytes per second that all media downloads of a process write together, so that large downloads leave the store to webhooks (PostgreSQL writes them to the WAL that every commit waits for); a thirty-second of it while the server is busy with clients; `0`: no limit, except 1 MB/s while the server is busy. Each download counts as 64 KiB beside its bytes',
    parse: integer(0, 100_000),
  }),
  metricsToken: optional({
    env: 'CHATLOG_METRICS_TOKEN',
    doc: 'bearer token for `/metrics`; required for `/metrics` to exist when `HOST` is not localhost',
    parse: atLeast(16),
  }),
  webhookAllowPrivate: withDefault({
    env: 'CHATLOG_WEBHOOK_ALLOW_PRIVATE',
    default: 'false',
    doc: '`true` lets outgoing webhook endpoints be `http` URLs on private or loopback addresses (a receiver on your own network); link-local and cloud metadata addresses stay refused',
    parse: yesOrNo,
  }),
  webhookTimeoutMs: withDefault({
    env: 'CHATLOG_WEBHOOK_TIMEOUT_MS',
    default: '15000',
    doc: 'an outgoing webhook delivery not answered 2xx within this long is tried again later (CONTRACT §10 says 15 s)',
    parse: integer(100, 60_000),
  }),
  sendTimeoutMs: withDefault({
    env: 'CHATLOG_SEND_TIMEOUT_MS',
    default: '30000',
    doc: 'a push of a reply that LINE has not answered within this long is tried again later (with the same retry key); a node that died holds its sends this plus 15 s',
    parse: integer(100, 120_000),
  }),
  reportsMemoryMb: withDefault({
    env: 'CHATLOG_REPORTS_MEMORY_MB',
    default: '256',
    doc: "memory a node gives the messages reports count (22 bytes a message, read from the store at a hub's first report and after an erasure or retention); the hubs least recently reported are let go past it",
    parse: integer(1, 1_048_576),
  }),
  changesKeepDays: withDefault({
    env: 'CHATLOG_CHANGES_KEEP_DAYS',
    default: '90',
    doc: "days the change feed keeps deletions and contact changes (a message's own change stays as long as the message); a cursor older than that is 410 cursor_expired",
    parse: integer(1, 36_500),
  }),
  auditKeepDays: withDefault({
    env: 'CHATLOG_AUDIT_KEEP_DAYS',
    default: '400',
    doc: 'days the audit log keeps its records of authorised API requests (who read what); older ones are deleted daily',
    parse: integer(1, 36_500),
  }),
  mcpMaxChars: withDefault({
    env: 'CHATLOG_MCP_MAX_CHARS',
    default: '20000',
    doc: "the longest result of an MCP tool, in characters of JSON: a longer page is cut at a whole item and gives a cursor, a longer message is cut and marked truncated (an assistant's context is small)",
    parse: integer(1000, 1_000_000),
  }),
  answerCacheBytes: withDefault({
    env: 'CHATLOG_ANSWER_CACHE_MB',
    default: '64',
    doc: "memory per server process for recent answers, reused while the hub's data is unchanged (an answer larger than a sixteenth of it is never kept); `0` turns the cache off",
    parse: (raw, env) => integer(0, 65_536)(raw, env) * 1024 * 1024,
  }),
};

export type SettingName = keyof typeof SETTINGS;

/** Every setting of chatlog, checked: the values of the table above. */
export type Config = {
  [K in SettingName]: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never;
};

/** A rule between settings, checked as soon as the last of them is read (so in the table's order). */
export interface CrossRule {
  settings: SettingName[];
  check(config: Config): void;
}

export const CROSS_RULES: CrossRule[] = [
  {
    settings: ['databaseUrl', 'contentStore'],
    check: (config) => {
      if (config.contentStore === 'postgres' && config.databaseUrl === undefined) {
        throw new UserError(`${SETTINGS.contentStore.env}=postgres needs ${SETTINGS.databaseUrl.env}`);
      }
    },
  },
  {
    settings: ['headersTimeoutMs', 'requestTimeoutMs'],
    check: (config) => {
      if (config.headersTimeoutMs > config.requestTimeoutMs) {
        throw new UserError(
          `${SETTINGS.headersTimeoutMs.env} must not be longer than ${SETTINGS.requestTimeoutMs.env}`,
        );
      }
    },
  },
];

/** The default as the README and `--help` show it: the value, `generated`, or `unset`. */
export function shownDefault(setting: Setting<unknown>): string {
  return setting.default ?? setting.shownDefault ?? 'unset';
}
