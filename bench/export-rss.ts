/**
 * Peak resident memory of `chatlog serve` while a client downloads a whole-hub export.
 *
 *   node --import tsx bench/export-rss.ts [--messages N]      (default 1,000,000)
 *
 * 1. Fills a fresh data directory (under os.tmpdir()) with one hub of N deterministic messages
 *    through the store's own API, and issues a read key.
 * 2. For each of identity, br and gzip: starts the real server (`bin/chatlog serve --workers 1 --port 0`) as a
 *    child process, takes its baseline VmRSS after one small request, downloads the whole hub
 *    while sampling VmRSS every 50 ms, reads VmHWM, validates the body, stops the server.
 *    A fresh server per encoding keeps VmHWM (a high-water mark since start) per run.
 * 3. Prints a table and writes bench/results/export-rss-<YYYY-MM-DD>.json.
 *
 * Sizes: RSS in MiB (1024 × 1024 bytes), throughput in MB/s (10^6 bytes).
 * The client never holds the whole body, except when N <= 100,000, where it parses it as JSON.
 *
 * Over 400 lines because it is one experiment end to end (fill, serve, download, sample RSS, per
 * encoding); its shared parts are in bench/dataset.ts, processes.ts and proc.ts.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import { readArgs } from './args.js';
import { EXPORT_SEED, exportHubBatches } from './dataset.js';
import { cpuSeconds, RssSampler, readStatus } from './proc.js';
import { type Chatlog, killAll, ROOT, startChatlog, stop, stopAll } from './processes.js';

const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

const HUB_ID = '900001';
const TIME_ZONE = 'Asia/Tokyo';
/** Shared by the loader and the server, so the issued key verifies. Bench only, never a real secret. */
const SECRET = 'chatlog-bench-export-rss-secret-0123456789';
const DEFAULT_MESSAGES = 1_000_000;
const DEADLINE_MS = 8 * 60 * 1000;
const SAMPLE_EVERY_MS = 50;
const PARSE_LIMIT = 100_000;
const HEAD_TAIL_BYTES = 64;
const MiB = 1024 * 1024;
const MB = 1_000_000;
const RSS_LIMIT_MIB = 150;

type Encoding = 'identity' | 'br' | 'gzip';
const ENCODINGS: readonly Encoding[] = ['identity', 'br', 'gzip'];

async function loadHub(
  dataDir: string,
  messages: number,
  signal: AbortSignal,
): Promise<{ key: string; seconds: number; contacts: number; dbBytes: number }> {
  const store = new SqliteStore({ dataDir });
  const started = performance.now();
  const contactsUsed = new Set<number>();
  let key: string;
  try {
    await store.migrate();
    const secrets = createSecretBox(SECRET);
    await new HubService(store, secrets).add(HUB_ID, { timeZone: TIME_ZONE });
    let reported = 0;
    const outcome = await store.messages.importAll(
      HUB_ID,
      exportHubBatches(messages, {
        contactsUsed,
        signal,
        onProgress: (done) => {
          if (done - reported >= 100_000 || done === messages) {
            reported = done;
            const seconds = (performance.now() - started) / 1000;
            process.stderr.write(
              `  loaded ${done.toLocaleString('en-US')} messages (${seconds.toFixed(1)} s)\n`,
            );
          }
        },
      }),
      Date.now(),
    );
    if (outcome.inserted !== messages) {
      throw new Error(`import stored ${outcome.inserted} messages, expected ${messages}`);
    }
    if (outcome.contactsCreated !== contactsUsed.size) {
      throw new Error(`import created ${outcome.contactsCreated} contacts, expected ${contactsUsed.size}`);
    }
    key = (await new KeyService(store, secrets).issue(HUB_ID, 'read', 'bench')).key;
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { key, seconds, contacts: contactsUsed.size, dbBytes: fs.statSync(store.file).size };
}

// ---------------------------------------------------------------------------------------------
// The server process

/**
 * `chatlog serve` on this data directory, with none of this shell's settings for another server.
 * One process (--workers 1): with the default, one per core, the pid read would be the cluster's
 * primary, which serves nothing, and every figure would be its idle memory and CPU.
 */
function startServer(dataDir: string, signal: AbortSignal): Promise<Chatlog> {
  return startChatlog(
    {
      PORT: undefined,
      HOST: undefined,
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      CHATLOG_PUBLIC_URL: undefined,
      CHATLOG_DATA_DIR: dataDir,
      CHATLOG_SECRET: SECRET,
      LOG_LEVEL: 'warn',
      CHATLOG_SHUTDOWN_GRACE_MS: '3000',
    },
    { workers: 1, host: '127.0.0.1', signal },
  );
}

// ---------------------------------------------------------------------------------------------
// The client

interface Download {
  status: number;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** Bytes on the wire (compressed when encoded). */
  bytes: number;
  /** Bytes after decoding (equal to bytes for identity). */
  decodedBytes: number;
  sha256: string;
  seconds: number;
  headersMs: number;
  ttfbMs: number;
  head: string;
  tail: string;
  /** The decoded body, only when asked for (N <= PARSE_LIMIT). */
  body: Buffer | undefined;
}

function get(
  port: number,
  urlPath: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: urlPath, headers, signal, agent: false },
      resolve,
    );
    request.on('error', reject);
    request.setTimeout(60_000, () => request.destroy(new Error(`no answer to ${urlPath} for 60 s`)));
  });
}

async function readSmall(response: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function download(
  port: number,
  urlPath: string,
  encoding: Encoding,
  keepBody: boolean,
  signal: AbortSignal,
): Promise<Download> {
  const started = performance.now();
  const headers: Record<string, string> = encoding === 'identity' ? {} : { 'Accept-Encoding': encoding };
  const response = await get(port, urlPath, headers, signal);
  const headersMs = performance.now() - started;
  if (response.statusCode !== 200) {
    throw new Error(`export answered ${response.statusCode}: ${(await readSmall(response)).slice(0, 500)}`);
  }
  let bytes = 0;
  let ttfbMs = -1;
  const wire = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (ttfbMs < 0) ttfbMs = performance.now() - started;
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  let decodedBytes = 0;
  let head = Buffer.alloc(0);
  let tail = Buffer.alloc(0);
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      decodedBytes += chunk.length;
      hash.update(chunk);
      if (head.length < HEAD_TAIL_BYTES) head = Buffer.concat([head, chunk.subarray(0, HEAD_TAIL_BYTES)]);
      tail = Buffer.concat([tail, chunk.subarray(-HEAD_TAIL_BYTES)]).subarray(-HEAD_TAIL_BYTES);
      if (keepBody) chunks.push(chunk);
      callback();
    },
  });
  if (encoding === 'identity') await pipeline(response, wire, sink, { signal });
  else if (encoding === 'br') await pipeline(response, wire, createBrotliDecompress(), sink, { signal });
  else await pipeline(response, wire, createGunzip(), sink, { signal });
  const contentEncoding = response.headers['content-encoding'];
  return {
    status: response.statusCode,
    contentType: response.headers['content-type'],
    contentEncoding,
    bytes,
    decodedBytes,
    sha256: hash.digest('hex'),
    seconds: (performance.now() - started) / 1000,
    headersMs,
    ttfbMs,
    head: head.subarray(0, HEAD_TAIL_BYTES).toString('utf8'),
    tail: tail.toString('utf8'),
    body: keepBody ? Buffer.concat(chunks) : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Validation

interface ParsedContact {
  lineId: unknown;
  vid: unknown;
  name: unknown;
  messages: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Problems found in a download; empty when it is a valid whole-hub answer. */
function validate(result: Download, encoding: Encoding, messages: number, contacts: number): string[] {
  const problems: string[] = [];
  const expectedEncoding = encoding === 'identity' ? undefined : encoding;
  if (result.contentEncoding !== expectedEncoding) {
    problems.push(
      `Content-Encoding is ${result.contentEncoding ?? '(none)'}, expected ${expectedEncoding ?? '(none)'}`,
    );
  }
  if (!result.contentType?.startsWith('application/json')) {
    problems.push(`Content-Type is ${result.contentType ?? '(none)'}`);
  }
  if (!result.head.startsWith('[{"lineId":'))
    problems.push(`body starts with ${JSON.stringify(result.head)}`);
  if (!result.tail.endsWith(']}]')) problems.push(`body ends with ${JSON.stringify(result.tail)}`);
  if (result.body === undefined) return problems;

  let parsed: unknown;
  try {
    parsed = JSON.parse(result.body.toString('utf8'));
  } catch (error) {
    problems.push(`body is not JSON: ${(error as Error).message}`);
    return problems;
  }
  if (!Array.isArray(parsed)) return [...problems, 'body is not a JSON array'];
  let total = 0;
  const seen = new Set<string>();
  for (const entry of parsed as unknown[]) {
    if (!isRecord(entry)) return [...problems, 'a contact is not an object'];
    const contact = entry as unknown as ParsedContact;
    if (
      typeof contact.lineId !== 'string' ||
      typeof contact.vid !== 'string' ||
      typeof contact.name !== 'string'
    ) {
      return [...problems, `contact fields of the wrong type: ${JSON.stringify(entry).slice(0, 200)}`];
    }
    if (seen.has(contact.lineId)) problems.push(`contact ${contact.lineId} appears twice`);
    seen.add(contact.lineId);
    if (!Array.isArray(contact.messages))
      return [...problems, `contact ${contact.lineId} has no messages array`];
    let previous = '';
    for (const message of contact.messages as unknown[]) {
      if (
        !isRecord(message) ||
        typeof message.sender !== 'string' ||
        typeof message.msg !== 'string' ||
        typeof message.contentType !== 'string' ||
        typeof message.createdAt !== 'string' ||
        message.createdAt.length !== 24
      ) {
        return [...problems, `malformed message: ${JSON.stringify(message).slice(0, 200)}`];
      }
      if (message.createdAt < previous) problems.push(`messages of ${contact.lineId} out of order`);
      previous = message.createdAt;
      total += 1;
    }
  }
  if (total !== messages) problems.push(`the body holds ${total} messages, expected ${messages}`);
  if (seen.size !== contacts) problems.push(`the body holds ${seen.size} contacts, expected ${contacts}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// One measured run

interface Run {
  encoding: Encoding;
  bytes: number;
  decodedBytes: number;
  sha256: string;
  messages: number;
  seconds: number;
  mbPerSecond: number;
  decodedMbPerSecond: number;
  messagesPerSecond: number;
  headersMs: number;
  ttfbMs: number;
  baselineRssMiB: number;
  peakSampledRssMiB: number;
  hwmMiB: number;
  peakRssMiB: number;
  rssAfterMiB: number;
  serverCpuSeconds: number;
  samples: number;
  /** [ms since the request, VmRSS KiB], at most 400 evenly thinned points. */
  rssTimeline: Array<[number, number]>;
  serverOutput: string[];
  serverExitCode: number | null;
  problems: string[];
}

async function measure(
  dataDir: string,
  key: string,
  encoding: Encoding,
  messages: number,
  contacts: number,
  signal: AbortSignal,
): Promise<Run> {
  const server = await startServer(dataDir, signal);
  let exitCode: number | null = null;
  try {
    // One small request (one day of the hub, which also proves the key), then the baseline.
    const small = await get(
      server.port,
      `/api/line/${HUB_ID}/messages?apikey=${key}&from=2023-06-01&to=2023-06-01`,
      {},
      signal,
    );
    const smallBody = await readSmall(small);
    if (small.statusCode !== 200)
      throw new Error(`the small request answered ${small.statusCode}: ${smallBody}`);
    await sleep(500, undefined, { signal });
    const baseline = readStatus(server.pid);
    const cpuBefore = cpuSeconds(server.pid);

    const sampler = new RssSampler(server.pid, SAMPLE_EVERY_MS, baseline.rssKb);
    let result: Download;
    try {
      sampler.sample();
      result = await download(
        server.port,
        `/api/line/${HUB_ID}/messages?apikey=${key}`,
        encoding,
        messages <= PARSE_LIMIT,
        signal,
      );
      sampler.sample();
    } finally {
      sampler.stop();
    }
    const { timeline, peakKb } = sampler;
    const end = readStatus(server.pid);
    const serverCpuSeconds = cpuSeconds(server.pid) - cpuBefore;
    await sleep(1000, undefined, { signal });
    const after = readStatus(server.pid);
    const peakRssKb = Math.max(peakKb, end.hwmKb);
    const problems = validate(result, encoding, messages, contacts);
    result.body = undefined;

    exitCode = await stop(server.child);
    if (exitCode !== 0) problems.push(`the server exited with ${exitCode} after SIGTERM`);
    const step = Math.max(1, Math.ceil(timeline.length / 400));
    return {
      encoding,
      bytes: result.bytes,
      decodedBytes: result.decodedBytes,
      sha256: result.sha256,
      messages,
      seconds: result.seconds,
      mbPerSecond: result.bytes / MB / result.seconds,
      decodedMbPerSecond: result.decodedBytes / MB / result.seconds,
      messagesPerSecond: messages / result.seconds,
      headersMs: result.headersMs,
      ttfbMs: result.ttfbMs,
      baselineRssMiB: baseline.rssKb / 1024,
      peakSampledRssMiB: peakKb / 1024,
      hwmMiB: end.hwmKb / 1024,
      peakRssMiB: peakRssKb / 1024,
      rssAfterMiB: after.rssKb / 1024,
      serverCpuSeconds,
      samples: timeline.length,
      rssTimeline: timeline.filter((_, i) => i % step === 0 || i === timeline.length - 1),
      serverOutput: server.output,
      serverExitCode: exitCode,
      problems,
    };
  } finally {
    await stop(server.child).catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function fixed(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(runs: readonly Run[]): string {
  const header = [
    'encoding',
    'bytes',
    'decoded',
    's',
    'MB/s',
    'msg/s',
    'TTFB ms',
    'base MiB',
    'peak MiB',
    'after MiB',
    'CPU s',
  ];
  const rows = runs.map((run) => [
    run.encoding,
    run.bytes.toLocaleString('en-US'),
    run.decodedBytes.toLocaleString('en-US'),
    fixed(run.seconds, 2),
    fixed(run.mbPerSecond, 1),
    fixed(run.messagesPerSecond, 0),
    fixed(run.ttfbMs, 1),
    fixed(run.baselineRssMiB, 1),
    fixed(run.peakRssMiB, 1),
    fixed(run.rssAfterMiB, 1),
    fixed(run.serverCpuSeconds, 2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  const messages = readArgs('node --import tsx bench/export-rss.ts [--messages N]', {
    values: ['messages'],
  }).number('messages', DEFAULT_MESSAGES, { min: 1, max: 50_000_000, whole: true });
  const controller = new AbortController();
  const { signal } = controller;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-export-rss-'));

  const cleanUpNow = () => {
    killAll();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  // Last resort: whatever happens, the server dies and the directory goes with this process.
  process.on('exit', cleanUpNow);
  const deadline = setTimeout(() => {
    process.stderr.write(`bench: deadline of ${DEADLINE_MS / 60_000} minutes reached; aborting\n`);
    controller.abort(new Error('deadline reached'));
    setTimeout(() => {
      process.stderr.write('bench: still running 20 s after the deadline; exiting\n');
      process.exit(2);
    }, 20_000).unref();
  }, DEADLINE_MS);
  deadline.unref();
  const onSignal = (name: NodeJS.Signals) => controller.abort(new Error(`interrupted by ${name}`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    process.stderr.write(`bench: data directory ${dataDir}\n`);
    process.stderr.write(
      `bench: loading ${messages.toLocaleString('en-US')} messages into hub ${HUB_ID} (${TIME_ZONE})\n`,
    );
    const load = await loadHub(dataDir, messages, signal);
    process.stdout.write(
      `loaded ${messages.toLocaleString('en-US')} messages over ${load.contacts} contacts in ${fixed(load.seconds, 1)} s ` +
        `(${fixed(messages / load.seconds, 0)} messages/s; database ${fixed(load.dbBytes / MiB, 1)} MiB)\n`,
    );

    const runs: Run[] = [];
    for (const encoding of ENCODINGS) {
      process.stderr.write(`bench: downloading the whole hub (${encoding})\n`);
      runs.push(await measure(dataDir, load.key, encoding, messages, load.contacts, signal));
    }
    const identity = runs.find((run) => run.encoding === 'identity');
    for (const run of runs) {
      if (identity && run.sha256 !== identity.sha256) {
        run.problems.push(
          `decoded body differs from the identity body (${run.decodedBytes} vs ${identity.bytes} bytes)`,
        );
      }
    }

    process.stdout.write(`\n${table(runs)}\n\n`);
    const problems = runs.flatMap((run) => run.problems.map((p) => `${run.encoding}: ${p}`));
    const outputs = runs.flatMap((run) => run.serverOutput.map((line) => `${run.encoding}: ${line}`));
    const peak = Math.max(...runs.map((run) => run.peakRssMiB));
    process.stdout.write(
      `body: ${problems.length === 0 ? 'valid' : 'INVALID'} (${messages <= PARSE_LIMIT ? 'parsed as JSON, message and contact counts checked' : 'start and end checked'}; decoded br and gzip bodies identical to identity: ${runs.every((run) => run.sha256 === identity?.sha256) ? 'yes' : 'no'})\n`,
    );
    process.stdout.write(
      `peak server RSS: ${fixed(peak, 1)} MiB${peak > RSS_LIMIT_MIB ? ` (over ${RSS_LIMIT_MIB} MiB)` : ''}\n`,
    );
    for (const problem of problems) process.stdout.write(`problem: ${problem}\n`);
    for (const line of outputs) process.stdout.write(`server said: ${line}\n`);

    const now = new Date();
    const file = path.join(RESULTS_DIR, `export-rss-${now.toISOString().slice(0, 10)}.json`);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    const report = {
      bench: 'export-rss',
      at: now.toISOString(),
      command: `node --import tsx bench/export-rss.ts ${process.argv.slice(2).join(' ')}`.trim(),
      units: { rss: 'MiB (1024 * 1024 bytes)', throughput: 'MB/s (10^6 bytes)', time: 'seconds, except *Ms' },
      machine: {
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryMiB: Math.round(os.totalmem() / MiB),
      },
      dataset: {
        hubId: HUB_ID,
        timeZone: TIME_ZONE,
        messages,
        contacts: load.contacts,
        seed: EXPORT_SEED,
        loadSeconds: load.seconds,
        databaseBytes: load.dbBytes,
      },
      valid: problems.length === 0,
      problems,
      runs,
    };
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    clearTimeout(deadline);
    await stopAll();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
