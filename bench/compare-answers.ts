/**
 * Issue 15's rule "answers stay byte-identical", checked: the same requests to the servers of two
 * checkouts over the same data, and the same `chatlog export` runs, compared byte for byte.
 *
 *   node --import tsx bench/compare-answers.ts --before DIR --after DIR [--store sqlite|postgres|both]
 *        [--messages N] [--ignore-header-order]               (npm run bench -- compare-answers ...)
 *
 * The data is made afresh by the `before` checkout through its CLI and public API only (so any two
 * versions can be compared): `hub add`, `key issue|limit|revoke`, `import` (a JSON array, NDJSON),
 * signed LINE webhooks (every message type, follow, unfollow, unsend, a group) and the ingest API
 * (messages, contact links). Five hubs of rich data (UTC, Asia/Tokyo, America/New_York,
 * America/Sao_Paulo, Pacific/Chatham; 3,500 messages: Japanese, emoji, the characters JSON
 * escapes, names empty and set, contacts with and without vid, messages at local midnights and at
 * every DST change ±1 ms, a tie), an empty hub, and a Europe/London hub of --messages (200,000)
 * for whole exports. SQLite in a temporary directory; PostgreSQL in the schema chatlog_compare.
 * Both servers then serve that data side by side (started one after the other, so only the first
 * can find a schema to migrate) and each request goes to both.
 *
 * Compared: the status line; every header's value, and the headers' order and case
 * (--ignore-header-order: values only); the body bytes, and for gzip and br the decompressed bytes
 * too. Every request carries a fixed `Host` (the OpenAPI document and /docs name it) and a fixed
 * `X-Request-Id` (echoed), so both are compared too. `chatlog export` and its errors: exit code,
 * stdout bytes, stderr.
 *
 * Ignored, because they depend on the clock or the run rather than on the code: `Date`;
 * `Keep-Alive` (connection timing; each request has its own connection); an `X-Request-Id` the
 * server made itself (random; it must still be a UUID); the seconds left in a rate-limit window
 * (`t=` of `RateLimit`, `Retry-After` of a 429: they count down during the run); the random
 * sign-in cookie and form token of the sign-in page asked without a cookie (asked with a fixed
 * cookie, the page is compared whole); how a chunked answer is cut into chunks (transport, not
 * content). Not asked at all: /metrics (the run's counters and timings), the signed-in account
 * pages (times of the run), and any request that stores something, since the two servers must see
 * the same data.
 *
 * Over 400 lines because a third of it is the data and the table of requests (one line each), kept
 * beside the code that reads them so that a case is added in one place.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pg from 'pg';
import { readArgs } from './args.js';
import { exportHubBatches, FULL_SIZE, smallHubMessages } from './dataset.js';
import { killAll, startChatlog, stop, stopAll } from './processes.js';

const args = readArgs(
  'node --import tsx bench/compare-answers.ts --before DIR --after DIR [--store sqlite|postgres|both] [--messages N] [--ignore-header-order]',
  { values: ['before', 'after', 'store', 'messages'], flags: ['ignore-header-order'] },
);
const checkout = (name: string) => {
  const dir = path.resolve(args.string(name) ?? '/nowhere');
  if (!fs.existsSync(path.join(dir, 'dist', 'cli', 'main.js')))
    throw new Error(`--${name} must name a built checkout of chatlog (with dist/cli/main.js), got "${dir}"`);
  return dir;
};
const [BEFORE, AFTER] = [checkout('before'), checkout('after')];
const STORES = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] } as const;
const stores = STORES[args.choice('store', ['sqlite', 'postgres', 'both'], 'both')];
const LARGE_MESSAGES = args.number('messages', 200_000, { min: 1, whole: true });
const SECRET = 'chatlog-compare-answers-secret-0123456789abcdef';
const CHANNEL_SECRET = 'compare-answers-channel-secret';
const PG_URL = process.env.CHATLOG_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = 'chatlog_compare';
const HOST = 'chatlog.test';
process.on('exit', killAll);

type Kind = 'sqlite' | 'postgres';
type Env = Record<string, string | undefined>;
type Msg = ReturnType<typeof smallHubMessages>[number];
type Hub = { id: string; zone: string; rich?: number; json?: boolean; large?: boolean };
const HUBS: Hub[] = [
  { id: '6662225', zone: 'Asia/Tokyo', rich: 0, json: true }, // also the webhooks and the ingest API
  { id: '1001', zone: 'UTC', rich: 1 }, // no `hub add`: UTC by default
  { id: '1002', zone: 'America/New_York', rich: 2 },
  { id: '1003', zone: 'America/Sao_Paulo', rich: 3 }, // midnight skipped on 2018-11-04
  { id: '1004', zone: 'Pacific/Chatham', rich: 4 }, // +12:45 / +13:45
  { id: '1005', zone: 'Europe/London', large: true },
  { id: '1006', zone: 'UTC' }, // no message at all
];
const SPECIAL_DAYS = ['2018-11-04', '2019-02-16', '2023-01-01', '2023-03-01', '2024-02-29', '2024-12-31'];
const EDGE_TEXTS = [
  'quote " backslash \\ slash / tab\tcr\rlf\n end',
  'controls \u0001\u0008\u000b\u000c\u001f\u007f', // no U+0000: PostgreSQL text cannot hold it
  'separators \u2028 and \u2029',
  '𠮷野家で🍣 🇯🇵 👨‍👩‍👧‍👦 ❤️ é = e\u0301',
  'مرحبا بالعالم — שלום',
  '<script>alert("x")</script> &amp; \'single\'',
  '',
  '\uFEFFbyte order mark first',
  'ｱｲﾌｫﾝ　全角スペース',
  `long ${'長い文章です。'.repeat(1500)}`,
];

// ---- time zones: offsets, local midnights and DST changes, from Intl alone ----------------------
const formats = new Map<string, Intl.DateTimeFormat>();
function offsetMs(zone: string, t: number): number {
  const options = { timeZone: zone, dateStyle: 'short', timeStyle: 'medium' } as const;
  const format = formats.get(zone) ?? new Intl.DateTimeFormat('sv-SE', options); // 2023-03-12 02:00:00
  formats.set(zone, format);
  return Date.parse(`${format.format(t).replace(' ', 'T')}Z`) - Math.floor(t / 1000) * 1000;
}
const localDay = (zone: string, t: number) => new Date(t + offsetMs(zone, t)).toISOString().slice(0, 10);
function localMidnight(zone: string, day: string): number {
  const wall = Date.parse(`${day}T00:00:00Z`);
  return wall - offsetMs(zone, wall - offsetMs(zone, wall));
}
/** Every instant the zone's offset changes from 2018-10 to 2024, to the millisecond. */
function transitions(zone: string): number[] {
  const found: number[] = [];
  const step = 6 * 3_600_000;
  for (let t = Date.UTC(2018, 9, 1); t < Date.UTC(2025, 0, 1); t += step) {
    if (offsetMs(zone, t) === offsetMs(zone, t + step)) continue;
    let [low, high] = [t, t + step];
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (offsetMs(zone, mid) === offsetMs(zone, low)) low = mid;
      else high = mid;
    }
    found.push(high);
  }
  return found;
}
const daysOf = (hub: Hub) =>
  new Set([...SPECIAL_DAYS, ...transitions(hub.zone).map((t) => localDay(hub.zone, t))]);

// ---- the data -----------------------------------------------------------------------------------
/** Three small hubs of bench/dataset.ts in one, then the edge texts at every boundary of the zone. */
function richMessages(hub: Hub): Msg[] {
  const index = hub.rich ?? 0;
  const messages = [0, 1, 2].flatMap((k) => smallHubMessages({ ...FULL_SIZE, seed: 1515 }, index * 3 + k));
  const people = [...new Map(messages.map((m) => [m.lineId, m])).values()];
  const instants = transitions(hub.zone).flatMap((t) => [t - 1, t, t + 1]);
  for (const day of daysOf(hub)) {
    const midnight = localMidnight(hub.zone, day);
    instants.push(midnight - 1, midnight, midnight + 1, midnight + 3_600_000, midnight + 86_400_000 - 1);
  }
  instants.push(instants[0] ?? 0); // a tie: same contact, same millisecond, kept in the order received
  for (const [i, createdAt] of instants.entries()) {
    const [who, msg] = [people[(i * 7) % people.length] as Msg, EDGE_TEXTS[i % EDGE_TEXTS.length] ?? ''];
    const sender = i % 3 ? null : 'You';
    messages.push({ ...who, sender, msg, contentType: 'text', createdAt, sourceId: '' });
  }
  return messages;
}
/** A message as `chatlog import` reads it; a friend's own message keeps the friend's name as sender. */
const record = ({ sourceId: _, ...m }: Msg) =>
  JSON.stringify({
    ...m,
    sender: m.sender ?? (m.name || 'User'),
    createdAt: new Date(m.createdAt).toISOString(),
  });
async function writeImport(hub: Hub, file: string): Promise<void> {
  fs.writeFileSync(file, '');
  if (hub.large) {
    const options = {
      contactsUsed: new Set<number>(),
      signal: new AbortController().signal,
      onProgress() {},
    };
    for await (const batch of exportHubBatches(LARGE_MESSAGES, options))
      fs.appendFileSync(file, `${batch.map(record).join('\n')}\n`);
  } else if (!hub.json) fs.writeFileSync(file, `${richMessages(hub).map(record).join('\n')}\n`);
  else {
    const contacts = new Map<string, { lineId: string; vid: string; name: string; messages: object[] }>();
    for (const { lineId, vid, name, ...message } of richMessages(hub).map((m) => JSON.parse(record(m)))) {
      contacts.set(lineId, contacts.get(lineId) ?? { lineId, vid, name, messages: [] });
      contacts.get(lineId)?.messages.push(message);
    }
    fs.writeFileSync(file, JSON.stringify([...contacts.values()], null, 1)); // the answer's shape
  }
}

// ---- processes ----------------------------------------------------------------------------------
function storeEnv(kind: Kind, dataDir: string): Env {
  const env: Env = {};
  for (const name of Object.keys(process.env))
    if (/^(CHATLOG_|DATABASE_|REDIS_|LINE_API|PORT$|HOST$)/.test(name)) env[name] = undefined;
  Object.assign(env, { CHATLOG_SECRET: SECRET, CHATLOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  if (kind === 'postgres') Object.assign(env, { DATABASE_URL: PG_URL, CHATLOG_PG_SCHEMA: PG_SCHEMA });
  return env;
}
type CliResult = { code: number | null; stdout: Buffer; stderr: string };
function cli(root: string, env: Env, argv: readonly string[], input = ''): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete childEnv[name];
  const bin = path.join(root, 'bin', 'chatlog');
  const child = spawn(process.execPath, [bin, ...argv], { cwd: root, env: childEnv });
  const [out, err]: [Buffer[], Buffer[]] = [[], []];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.end(input);
  return new Promise((resolve, reject) =>
    child.on('error', reject).on('close', (code) => {
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() });
    }),
  );
}
async function dropSchema(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${PG_SCHEMA} CASCADE`);
  await client.end();
}

// ---- HTTP ---------------------------------------------------------------------------------------
type Req = {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** If-None-Match: the ETag this server answered to the request of that name. */
  etagOf?: string;
  /** Sent as these bytes on a raw socket (what Node's client refuses to send). */
  raw?: string;
  /** No X-Request-Id of ours (none, or an unusable one): the server makes one. */
  noId?: boolean;
};
/** The status line after the version, the header lines (`Name: value`) in order, the body. */
type Answer = { status: string; headers: string[]; body: Buffer };
function send(base: string, req: Req, n: number, etags: Map<string, string>): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const raw = req.raw;
    if (raw !== undefined) {
      const chunks: Buffer[] = [];
      // Written, not ended: the server closes once it has answered (a half-close could cut it short).
      const socket = net.connect(Number(port), hostname, () => socket.write(raw));
      socket.setTimeout(10_000, () => socket.destroy());
      socket.on('data', (c) => chunks.push(c)).on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks);
        const end = text.indexOf('\r\n\r\n');
        const [status = '', ...headers] = text.subarray(0, end).toString('latin1').split('\r\n');
        resolve({ status: status.replace(/^HTTP\/1\.1 /, ''), headers, body: text.subarray(end + 4) });
      });
      return;
    }
    const headers: Record<string, string> = { Host: HOST, 'X-Request-Id': `compare-${n}`, ...req.headers };
    if (req.noId && !req.headers['X-Request-Id']) delete headers['X-Request-Id'];
    if (req.etagOf) headers['If-None-Match'] = etags.get(req.etagOf) ?? 'W/"none"';
    const options = { host: hostname, port, method: req.method, path: req.path, headers, agent: false };
    const request = http.request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('error', reject);
      res.on('end', () => {
        const lines = res.rawHeaders.flatMap((name, i) => (i % 2 ? [] : `${name}: ${res.rawHeaders[i + 1]}`));
        resolve({
          status: `${res.statusCode} ${res.statusMessage}`,
          headers: lines,
          body: Buffer.concat(chunks),
        });
      });
    });
    request.on('error', reject).end(req.body);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const random = (req: Req) => req.path === '/account' && !req.headers.Cookie;
/** The header lines, with what depends on the clock or the run masked (see the top of the file). */
function headerLines(req: Req, answer: Answer): string[] {
  const lines: string[] = [];
  for (const header of answer.headers) {
    const name = header.slice(0, header.indexOf(':'));
    const lower = name.toLowerCase();
    let value = header.slice(name.length + 2);
    if (lower === 'date' || lower === 'keep-alive') continue;
    if (lower === 'x-request-id' && req.noId && UUID.test(value)) value = '<made by the server>';
    if (lower === 'ratelimit') value = value.replace(/\bt=\d+/, 't=<seconds>');
    if (lower === 'retry-after' && answer.status.startsWith('429')) value = '<seconds>';
    if (lower === 'set-cookie' && random(req)) value = value.replace(/^chatlog_signin=[^;]*/, '<random>');
    lines.push(`${name}: ${value}`);
  }
  return lines;
}
const bodyOf = (req: Req, { body }: Answer) =>
  random(req)
    ? Buffer.from(body.toString('latin1').replace(/name="csrf" value="[^"]*"/, '<random>'), 'latin1')
    : body;
function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const excerpt = (x: Buffer) => JSON.stringify(x.subarray(Math.max(0, i - 24), i + 40).toString('utf8'));
  return `first difference at byte ${i} (${a.length} / ${b.length} bytes): before ${excerpt(a)}, after ${excerpt(b)}`;
}
function decompress(encoding: string | undefined, body: Buffer): Buffer | string {
  try {
    if (encoding === 'gzip') return zlib.gunzipSync(body);
    return encoding === 'br' ? zlib.brotliDecompressSync(body) : body;
  } catch (error) {
    return `not ${encoding}: ${(error as Error).message}`;
  }
}
function compare(req: Req, a: Answer, b: Answer): string[] {
  const found = a.status === b.status ? [] : [`status ${a.status} / ${b.status}`];
  if (!a.status || !b.status) found.push('no answer at all'); // two silences are not "the same answer"
  const [ha, hb] = [headerLines(req, a), headerLines(req, b)];
  const valuesOf = (lines: string[], name: string) =>
    lines.filter((l) => l.toLowerCase().startsWith(`${name}:`)).map((l) => l.slice(name.length + 2));
  for (const name of new Set([...ha, ...hb].map((l) => l.slice(0, l.indexOf(':')).toLowerCase()))) {
    const [va, vb] = [JSON.stringify(valuesOf(ha, name)), JSON.stringify(valuesOf(hb, name))];
    if (va !== vb) found.push(`header ${name}: before ${va}, after ${vb}`);
  }
  const names = (lines: string[]) => lines.map((l) => l.slice(0, l.indexOf(':'))).join(', ');
  if (found.length === 0 && ha.join('\n') !== hb.join('\n') && !args.flag('ignore-header-order'))
    found.push(`header order or case: before [${names(ha)}], after [${names(hb)}]`);
  const [ba, bb] = [bodyOf(req, a), bodyOf(req, b)];
  if (!ba.equals(bb)) {
    const [ea, eb] = [valuesOf(ha, 'content-encoding')[0], valuesOf(hb, 'content-encoding')[0]];
    const [da, db] = [decompress(ea, ba), decompress(eb, bb)];
    const encoded = ea || eb ? ` (${ea ?? 'identity'} / ${eb ?? 'identity'})` : '';
    if (typeof da === 'string' || typeof db === 'string')
      found.push(
        `body${encoded}: ${typeof da === 'string' ? da : 'ok'} / ${typeof db === 'string' ? db : 'ok'}`,
      );
    else if (!da.equals(db))
      found.push(`body${encoded && `${encoded}, decompressed`}: ${firstDifference(da, db)}`);
    else
      found.push(
        `body${encoded}: compressed bytes differ (${ba.length} / ${bb.length}), decompressed identical`,
      );
  }
  return found;
}

// ---- the data written live: signed webhooks, then the ingest API --------------------------------
const sign = (body: string) => createHmac('sha256', CHANNEL_SECRET).update(body).digest('base64');
const [U1, U2, U3] = ['U4af4980629a0d8f0f1b1d9a3e8b1c2d3', `U${'0'.repeat(31)}2`, `U${'0'.repeat(31)}3`];
const T0 = Date.UTC(2023, 5, 1, 3); // 2023-06-01 12:00 in Tokyo
/** `seconds after T0, sender (G2: U2 in a group), follow or the message`; the last one is unsent. */
const EVENTS = `
0 U1 follow
1 U1 {"type":"text","text":"こんにちは！予約の変更をお願いしたいです🙏"}
2 U1 {"type":"sticker","packageId":"446","stickerId":"1988"}
3 U1 {"type":"image","contentProvider":{"type":"line"}}
4 U1 {"type":"video","duration":60000,"contentProvider":{"type":"line"}}
5 U1 {"type":"audio","duration":6000,"contentProvider":{"type":"line"}}
6 U1 {"type":"file","fileName":"見積書 (1).pdf","fileSize":2048}
7 U1 {"type":"location","title":"東京タワー","address":"東京都港区芝公園4丁目2-8","latitude":35.65858,"longitude":139.745433}
8 U1 {"type":"location","latitude":35.68,"longitude":139.7}
9 U1 {"type":"poll"}
10 G2 {"type":"text","text":"グループから 👋"}
10 U2 {"type":"text","text":"the same second as the group's, received after it"}
11 U1 {"type":"text","text":"この送信は取り消されます"}
20 U1 unsend
21 U2 unfollow`;
const INGESTED = `[
{"lineId":"${U1}","msg":"ご来店ありがとうございました😊","id":"crm-8812","createdAt":"2023-06-01T12:05:00.123456789+09:00"},
{"lineId":"${U3}","msg":"[Sticker]\\nID: 52002734","contentType":"sticker","sender":"Support","createdAt":"2023-06-01T03:06:00Z"},
{"lineId":"${U1}","msg":"leap second","createdAt":"2016-12-31T23:59:60Z"},
{"lineId":"${U3}","msg":"lower case, nulls","createdAt":"2023-06-02t00:00:00.5z","contentType":null,"sender":null}]`;
/** Two webhook bodies: the events, then the unsend and the unfollow once the messages are stored. */
function webhookBodies(): string[] {
  const events = EVENTS.trim()
    .split('\n')
    .map((row, i) => {
      const [seconds = '', who = '', ...rest] = row.split(' ');
      const userId = who === 'U1' ? U1 : U2;
      const group = { type: 'group', groupId: `C${'1'.repeat(32)}`, userId };
      const event = { mode: 'active', timestamp: T0 + Number(seconds) * 1000, webhookEventId: `01HCMP${i}` };
      const source = who === 'G2' ? group : { type: 'user', userId };
      const type = rest[0]?.startsWith('{') ? 'message' : rest[0];
      const id = (n: number) => String(4687895778982620 + n);
      if (type === 'unsend') return { type, ...event, source, unsend: { messageId: id(i - 1) } };
      if (type !== 'message') return { type, ...event, source };
      return { type, ...event, source, message: { id: id(i), ...JSON.parse(rest.join(' ')) } };
    });
  return [events.slice(0, -2), events.slice(-2)].map((part) =>
    JSON.stringify({ destination: 'U', events: part }),
  );
}
async function setup(kind: Kind, dataDir: string, work: string): Promise<Record<string, string>> {
  const env = storeEnv(kind, dataDir);
  const run = async (command: string, input?: string) => {
    const result = await cli(BEFORE, env, command.split(' '), input);
    if (result.code !== 0) throw new Error(`chatlog ${command}: ${result.stderr.trim()}`);
    return result.stdout.toString().trim();
  };
  await run('hub add 6662225 --time-zone Asia/Tokyo --line-channel-secret -', CHANNEL_SECRET);
  for (const hub of HUBS.slice(2)) await run(`hub add ${hub.id} --time-zone ${hub.zone}`);
  const keys: Record<string, string> = {};
  for (const hub of HUBS) keys[hub.id] = await run(`key issue ${hub.id} --label compare`);
  keys.ingest = await run('key issue 6662225 --scope ingest');
  keys.limited = await run('key issue 1001 --label limited');
  await run(`key limit ${keys.limited} --requests 2 --per-seconds 3600`);
  keys.revoked = await run('key issue 1001');
  await run(`key revoke ${keys.revoked}`);
  for (const hub of HUBS.filter((h) => h.rich !== undefined || h.large)) {
    const file = path.join(work, `import-${hub.id}.${hub.json ? 'json' : 'ndjson'}`);
    if (!fs.existsSync(file)) await writeImport(hub, file);
    await run(`import ${hub.id} ${file}`);
  }
  const server = await startChatlog(env, { root: BEFORE });
  const call = async (method: string, where: string, body: string, headers: Record<string, string>) => {
    headers['Content-Type'] = 'application/json';
    const req = { name: '', method, path: where, body, headers };
    const answer = await send(server.base, req, 0, new Map());
    if (!answer.status.startsWith('200'))
      throw new Error(`${method} ${where}: ${answer.status} ${answer.body}`);
  };
  for (const body of webhookBodies())
    await call('POST', '/webhooks/line/6662225', body, { 'X-Line-Signature': sign(body) });
  const bearer = { Authorization: `Bearer ${keys.ingest}` };
  await call('POST', '/ingest/line/6662225/messages', INGESTED, bearer);
  const renamed = richMessages(HUBS[0] as Hub)[0]?.lineId ?? '';
  const links = {
    [U1]: '{"vid":"101","name":"shinobu"}',
    [U3]: '{"vid":"303"}',
    [renamed]: '{"name":"改名"}',
  };
  for (const [lineId, link] of Object.entries(links))
    await call('PUT', `/ingest/line/6662225/contacts/${lineId}`, link, bearer);
  await stop(server.child);
  return keys;
}

// ---- the requests -------------------------------------------------------------------------------
/**
 * A row: `what | METHOD[,METHOD] target [target...] | header ; header... | body`. `@HUB?query` is
 * /api/line/HUB/messages?query; {k} is the read key of 1001, {k:NAME} that of hub NAME or the
 * ingest, limited or revoked key, {bad} {k} with its checksum broken, {sign} the body's
 * X-Line-Signature; `json` is Content-Type: application/json, `noid` sends no X-Request-Id of ours.
 * The read API's rows follow its check order (CONTRACT §1); some fail a later check too, to hold the order.
 */
const TABLE = `
1 missing_api_key     | GET,HEAD @1001 @1001?apikey=&from=x @abc?from=x
2 invalid_api_key     | GET,HEAD @1001?apikey=not-a-key @1001?apikey={bad} @1001?apikey={k:revoked} @6662225?apikey={k:ingest}
2 invalid_api_key     | GET,HEAD @1001?apikey={k}&apikey={k} @abc?apikey=nope
3 invalid_hub_id      | GET,HEAD @abc?apikey={k} @123456789012345678901?apikey={k} @?apikey={k} @%zz?apikey={k}
3 decoded hub         | GET,HEAD @%31001?apikey={k}&from=2023-03-01 /api/line/1001/messages/?apikey={k}&from=2023-03-01
4 forbidden           | GET,HEAD @1002?apikey={k} @424242?apikey={k} @1002?apikey={k}&from=2023-01-01&from=2023-01-02
5 duplicate_parameter | GET,HEAD @1001?apikey={k}&from=2023-01-01&from=2023-01-02 @1001?apikey={k}&tz=UTC&tz=UTC
5 duplicate_parameter | GET,HEAD @1001?apikey={k}&to=2023-01-01&to=x&from=2023-02-30
6 invalid_date        | GET,HEAD @1001?apikey={k}&from=2023-02-29 @1001?apikey={k}&to=2023-13-01 @1001?apikey={k}&from=20230101
6 invalid_date        | GET,HEAD @1001?apikey={k}&from= @1001?apikey={k}&from=2023-02-02&to=2023-02-30
7 invalid_range       | GET,HEAD @1001?apikey={k}&from=2023-02-02&to=2023-02-01 @1001?apikey={k}&from=2023-02-02&to=2023-02-01&tz=JST
7 invalid_time_zone   | GET,HEAD @1001?apikey={k}&tz=JST @1001?apikey={k}&tz=Mars%2FOlympus @1001?apikey={k}&tz=
  unknown parameters  | GET @1001?apikey={k}&foo=1&foo=2&callback=x&to=2023-06-30
8 rate limit: 2 of 2  | GET @1001?apikey={k:limited}&from=2023-01-01 @1001?apikey={k:limited}&from=nope @1001?apikey={k:limited}
8 rate_limited        | GET,HEAD @1001?apikey={k:limited}&from=2023-01-01 @1002?apikey={k:limited}
405                   | POST,PUT,PATCH @1001?apikey={k} | json | {}
405                   | DELETE,OPTIONS,PROPFIND,TRACE,POST @1001?apikey={k} @abc
405                   | GET /webhooks/line/6662225 /ingest/line/6662225/messages /ingest/line/6662225/contacts/{U1} /account/sign-in
405                   | POST / /docs /account /account/assets/account.js
404                   | GET,HEAD /nope /api/line/1001 @1001/x /API/line/1001/messages /account/assets/nope.js
404                   | POST /healthz /openapi.json
ingest 401            | POST /ingest/line/6662225/messages | json | []
ingest 401            | POST /ingest/line/6662225/messages | json ; Authorization: Basic eDp5 | []
ingest 401            | POST /ingest/line/6662225/messages | json ; Authorization: Bearer chl_nope | []
ingest 401 read key   | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:6662225} | []
ingest 400, 403       | POST /ingest/line/abc/messages /ingest/line/1001/messages | json ; Authorization: Bearer {k:ingest} | []
ingest 415            | POST /ingest/line/6662225/messages | Content-Type: text/plain ; Authorization: Bearer {k:ingest} | []
ingest 400 not JSON   | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} | [
ingest 400 empty      | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} |
ingest 400 object     | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} | {}
ingest 400 no msg     | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} | [{"lineId":"{U1}","msg":"ok"},{"lineId":"{U1}"}]
ingest 400 msg 5      | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} | [{"lineId":"{U1}","msg":5}]
ingest 400 date       | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} | [{"lineId":"{U1}","msg":"x","createdAt":"2019-02-30T00:00:00Z"}]
ingest 400 +0900      | POST /ingest/line/6662225/messages | json ; Authorization: Bearer {k:ingest} | [{"lineId":"{U1}","msg":"x","createdAt":"2019-02-01T00:00:00+0900"}]
ingest 400 vid -1     | PUT /ingest/line/6662225/contacts/{U1} | json ; Authorization: Bearer {k:ingest} | {"vid":-1}
ingest 400 name 5     | PUT /ingest/line/6662225/contacts/{U1} | json ; Authorization: Bearer {k:ingest} | {"name":5}
ingest 404 no LINE id | PUT /ingest/line/6662225/contacts/ | json ; Authorization: Bearer {k:ingest} | {}
webhook 401           | POST /webhooks/line/6662225 | json | {"destination":"U","events":[]}
webhook 401           | POST /webhooks/line/6662225 | json ; X-Line-Signature: bm9wZQ== | {"destination":"U","events":[]}
webhook 401           | POST /webhooks/line/6662225 | json ; X-Line-Signature: not base64! | {"destination":"U","events":[]}
webhook 401           | POST /webhooks/line/424242 /webhooks/line/abc | json ; X-Line-Signature: {sign} | {"events":[]}
webhook verification  | POST /webhooks/line/6662225 | json ; X-Line-Signature: {sign} | {"destination":"U","events":[]}
webhook 400, 415      | POST /webhooks/line/6662225 | json ; X-Line-Signature: {sign} | nope
webhook 400, 415      | POST /webhooks/line/6662225 | json ; X-Line-Signature: {sign} | {"events":5}
webhook 400, 415      | POST /webhooks/line/6662225 | Content-Type: text/plain ; X-Line-Signature: {sign} | {"events":[]}
pages                 | GET,HEAD /healthz /readyz /docs /openapi.json / /account/assets/account.js /account/assets/account.css
pages, compressed     | GET /openapi.json /docs | Accept-Encoding: gzip, br
sign-in page          | GET,HEAD /account /account?lang=ja /account?lang=xx | Cookie: chatlog_signin=compare-fixed-token
sign-in page          | GET /account | Cookie: chatlog_signin=compare-fixed-token ; Accept-Language: ja,en;q=0.5
sign-in page          | GET /account
sign-in refused       | POST /account/sign-in | Cookie: chatlog_signin=compare-fixed-token ; Content-Type: application/x-www-form-urlencoded ; Sec-Fetch-Site: same-origin | csrf=wrong&email=a%40b.c&password=x
request id            | GET /healthz | noid
request id            | GET /healthz | noid ; X-Request-Id: has space`;
const RAW = [
  'GARBAGE\r\n\r\n',
  'HEAD / HTTP/1.1\r\nBad Header\r\n\r\n',
  `GET /healthz HTTP/1.1\r\nHost: ${HOST}\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`,
  'GET /readyz HTTP/1.0\r\nX-Request-Id: raw-1\r\n\r\n',
];
/** Read in the hub's zone and in another: `zone day` pairs, asked of hubs 1001 (UTC) and 6662225. */
const TZ_DAYS = `America/Sao_Paulo 2018-11-04 America/Sao_Paulo 2019-02-16 us/pacific 2023-03-12
  Etc/GMT-9 2024-02-29 asia/tokyo 2023-01-01 UTC 2023-06-01`;
const MONTHS = ['2023-03-01/2023-03-31', '2023-06-01/2023-06-30', '2024-02-01/2024-02-29'];
function requests(keys: Record<string, string>): Req[] {
  const list: Req[] = [];
  const add = (name: string, where: string, more: Partial<Req> = {}) =>
    list.push({ name, method: 'GET', path: where, headers: {}, ...more });
  const api = (hub: string, query: string) => `/api/line/${hub}/messages?apikey=${keys[hub]}${query}`;
  for (const hub of HUBS) {
    const whole = `${hub.id} whole`;
    add(whole, api(hub.id, ''));
    for (const encoding of ['gzip', 'br', 'gzip, deflate, br;q=0.5', 'identity;q=1, *;q=0'])
      add(`${whole} ${encoding}`, api(hub.id, ''), { headers: { 'Accept-Encoding': encoding } });
    add(`${whole} HEAD`, api(hub.id, ''), { method: 'HEAD' });
    for (const method of ['GET', 'HEAD'])
      add(`${whole} If-None-Match`, api(hub.id, ''), { method, etagOf: whole });
    add(`${whole} If-None-Match *`, api(hub.id, ''), { headers: { 'If-None-Match': '*' } });
    for (const day of daysOf(hub)) add(`${hub.id} ${day}`, api(hub.id, `&from=${day}&to=${day}`));
    for (const [from, to] of MONTHS.map((m) => m.split('/')))
      add(`${hub.id} month`, api(hub.id, `&from=${from}&to=${to}`));
    const gzip = { 'Accept-Encoding': 'gzip' };
    add(`${hub.id} month gzip`, api(hub.id, '&from=2023-11-01&to=2023-11-30'), { headers: gzip });
    for (const query of ['&from=2024-06-01', '&to=2023-01-31', '&from=2030-01-01&to=2030-01-02'])
      add(`${hub.id} half-open or empty`, api(hub.id, query));
  }
  const pairs = TZ_DAYS.trim().split(/\s+/);
  for (let i = 0; i < pairs.length; i += 2) {
    const [tz = '', day = ''] = pairs.slice(i, i + 2);
    const query = `&from=${day}&to=${day}&tz=${encodeURIComponent(tz)}`;
    for (const hub of ['1001', '6662225']) add(`tz=${tz}`, api(hub, query));
  }
  const k = keys['1001'] ?? '';
  const bad = `${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`;
  const values: Record<string, string> = { ...keys, k, bad, U1 };
  for (const row of TABLE.trim().split('\n')) {
    const [name = '', target = '', headerText = '', body] = row.split(/ \|(?: |$)/).map((f) => f.trim());
    values.sign = sign(body ?? '');
    const fill = (text: string) => text.replace(/\{(?:k:)?(\w+)\}/g, (_, what) => values[what] ?? '');
    const headers: Record<string, string> = {};
    for (const header of headerText.replace(/^json\b/, 'Content-Type: application/json').split(' ; ')) {
      const [field = '', value = ''] = header.split(': ');
      if (value) headers[field] = fill(value);
    }
    const [methods = '', ...targets] = target.split(' ');
    for (const where of targets.map((t) => fill(t.replace(/^@([^?/]*)/, '/api/line/$1/messages'))))
      for (const method of methods.split(','))
        add(name, where, { method, headers, noId: headerText.includes('noid'), body: body && fill(body) });
  }
  for (const raw of RAW) add('raw', '', { raw, noId: true });
  return list;
}
const CLI_CASES = [
  ...HUBS.map((hub) => `export ${hub.id}`),
  'export 6662225 --from 2023-06-01 --to 2023-06-02',
  'export 1003 --from 2018-11-04 --to 2018-11-04',
  'export 1001 --from 2023-03-12 --to 2023-03-12 --tz us/pacific',
  'export 1001 --from 2023-02-29',
  'export 1001 --to 20230101',
  'export 1001 --from 2023-02-02 --to 2023-02-01',
  'export 1001 --tz JST',
  'export 424242',
  'export abc',
  'export',
];

// ---- the run ------------------------------------------------------------------------------------
async function compareStore(kind: Kind, work: string): Promise<string[]> {
  let started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const dataDir = path.join(work, kind);
  fs.mkdirSync(dataDir);
  if (kind === 'postgres') await dropSchema();
  const keys = await setup(kind, dataDir, work);
  const times = [`setup ${seconds()}`];
  started = performance.now();
  const env = storeEnv(kind, dataDir);
  // One after the other: only the first can find a schema to migrate.
  const servers = [await startChatlog(env, { root: BEFORE }), await startChatlog(env, { root: AFTER })];
  const etags = servers.map(() => new Map<string, string>());
  const statuses = new Map<string, number>();
  const found: string[] = [];
  const list = requests(keys);
  for (const [n, req] of list.entries()) {
    const answers = await Promise.all(servers.map((s, i) => send(s.base, req, n, etags[i] ?? new Map())));
    const [a, b] = answers as [Answer, Answer];
    for (const [i, answer] of [a, b].entries()) {
      const etag = answer.headers.find((line) => /^etag:/i.test(line))?.slice(6);
      if (etag) etags[i]?.set(req.name, etag);
    }
    statuses.set(a.status.slice(0, 3), (statuses.get(a.status.slice(0, 3)) ?? 0) + 1);
    const where =
      req.raw === undefined
        ? req.path.replace(/apikey=[^&]+/g, 'apikey=…')
        : JSON.stringify(req.raw.slice(0, 40));
    for (const line of compare(req, a, b))
      found.push(`DIFF ${kind} ${req.name} [${req.method} ${where}]: ${line}`);
  }
  for (const server of servers) await stop(server.child);
  times.push(`${list.length} requests ${seconds()}`);
  started = performance.now();
  for (const command of CLI_CASES) {
    const [a, b] = [await cli(BEFORE, env, command.split(' ')), await cli(AFTER, env, command.split(' '))];
    const what = `DIFF ${kind} chatlog ${command}:`;
    if (a.code !== b.code) found.push(`${what} exit code ${a.code} / ${b.code}`);
    if (!a.stdout.equals(b.stdout)) found.push(`${what} stdout: ${firstDifference(a.stdout, b.stdout)}`);
    const [ea, eb] = [Buffer.from(a.stderr), Buffer.from(b.stderr)];
    if (!ea.equals(eb)) found.push(`${what} stderr: ${firstDifference(ea, eb)}`);
  }
  times.push(`${CLI_CASES.length} CLI runs ${seconds()}`);
  const counts = [...statuses].sort().map(([status, count]) => `${status}×${count}`);
  found.push(`${kind}: ${found.length} difference(s); ${times.join(', ')}; statuses ${counts.join(' ')}`);
  return found;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-compare-'));
let differences = 0;
try {
  for (const kind of stores) {
    const lines = await compareStore(kind, work);
    for (const line of lines) process.stdout.write(`${line}\n`);
    differences += lines.length - 1;
  }
} finally {
  await stopAll();
  fs.rmSync(work, { recursive: true, force: true });
  if (stores.some((kind) => kind === 'postgres')) await dropSchema().catch(() => undefined);
}
const verdict = differences ? `${differences} difference(s) between` : 'identical answers from';
process.stdout.write(`${verdict} ${BEFORE} and ${AFTER} (${stores.join(', ')})\n`);
process.exitCode = differences ? 1 : 0;
