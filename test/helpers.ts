/** Test fixtures: a fresh store in a temporary directory, and a real listening server over it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app.js';
import { createLogger } from '../src/lib/logger.js';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { ImportMessage } from '../src/store/store.js';

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123456789';

export function tempDir(prefix = 'chatlog-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface TestStore {
  dir: string;
  store: SqliteStore;
  hubs: HubService;
  keys: KeyService;
  close(): Promise<void>;
}

export async function createTestStore(): Promise<TestStore> {
  const dir = tempDir();
  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  const secrets = createSecretBox(TEST_SECRET);
  return {
    dir,
    store,
    hubs: new HubService(store, secrets),
    keys: new KeyService(store, secrets),
    close: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
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
  logs: LogCapture;
  /** GET/HEAD/etc. against the listening server. */
  request(pathAndQuery: string, init?: RequestInit): Promise<Response>;
}

export async function startTestServer(
  options: { logLevel?: string; lineApiBaseUrl?: string } = {},
): Promise<TestServer> {
  const base = await createTestStore();
  const logs = new LogCapture();
  const { app } = buildApp({
    store: base.store,
    secrets: createSecretBox(TEST_SECRET),
    logger: createLogger(options.logLevel ?? 'info', logs),
    lineApiBaseUrl: options.lineApiBaseUrl,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  return {
    ...base,
    url,
    logs,
    request: (pathAndQuery, init) => fetch(url + pathAndQuery, init),
    close: async () => {
      await app.close();
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

export async function storeMessages(
  store: SqliteStore,
  hubId: string,
  messages: ImportMessage[],
): Promise<void> {
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
