/**
 * Child processes of the benchmarks: `chatlog serve`, the baseline servers and the load processes,
 * each in its own process; wait for what they print, stop them, and never leave one behind.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every child started here and not yet exited, so that stopAll() and killAll() find them. */
const running = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Resolves with the first match of `pattern` in what the child prints; rejects if it exits first,
 * after `timeoutMs`, or when `signal` aborts.
 */
export function waitForLine(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
  pattern: RegExp,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () => fail(new Error(`nothing matched ${pattern} within ${options.timeoutMs} ms`)),
            options.timeoutMs,
          );
    const onAbort = () => fail(new Error('aborted while waiting for the process to start'));
    const onExit = (code: number | null) => fail(new Error(`exited ${code}: ${seen.trim()}`));
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) {
        done();
        resolve(match);
      }
    };
    const done = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      child.off('exit', onExit);
      child[stream]?.off('data', onData);
    };
    const fail = (error: Error) => {
      done();
      reject(error);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('exit', onExit);
    child[stream]?.on('data', onData);
  });
}

/** SIGTERM, and the exit code; SIGKILL and an error when it has not exited within `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs);
  });
  child.kill('SIGTERM');
  const code = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (code === 'late') {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`process ${child.pid} did not stop within ${graceMs / 1000} s of SIGTERM (killed)`);
  }
  return code;
}

/** Stops every child still running (SIGKILL after 5 s); for a benchmark's `finally`. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => stop(child, 5000).catch(() => undefined)));
}

/** SIGKILL to every child still running: the last resort, from a process 'exit' handler. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

export interface Chatlog {
  child: ChildProcess;
  pid: number;
  base: string;
  port: number;
  /** What the server printed after it started listening (warn and error logs), up to 200 chunks. */
  output: string[];
}

/**
 * `chatlog serve --port 0` in its own process, with `env` over this process's environment (an
 * `undefined` value removes the variable); resolves once it listens (within 30 s).
 * `workers`: `--workers`, or the CLI's default (one per core) when null. `root`: the checkout whose
 * `bin/chatlog` runs (this one unless given; bench/compare-answers.ts runs two).
 */
export async function startChatlog(
  env: Record<string, string | undefined>,
  options: { workers?: number | null; host?: string; signal?: AbortSignal; root?: string } = {},
): Promise<Chatlog> {
  const { workers = 1, host, signal, root = ROOT } = options;
  const args = [path.join(root, 'bin', 'chatlog'), 'serve'];
  if (workers !== null) args.push('--workers', String(workers));
  args.push('--port', '0');
  if (host !== undefined) args.push('--host', host);
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete childEnv[name];
  // The node process itself (bin/chatlog imports the CLI in-process), so its pid is the server's.
  // CHATLOG_BENCH_CPU_PROF=<dir>: each of its threads writes a V8 CPU profile there when it exits.
  const child = track(
    spawn(
      process.execPath,
      [
        ...(process.env.CHATLOG_BENCH_CPU_PROF
          ? ['--cpu-prof', '--cpu-prof-dir', process.env.CHATLOG_BENCH_CPU_PROF]
          : []),
        ...args,
      ],
      { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  if (child.pid === undefined) throw new Error('could not start chatlog serve');
  const output: string[] = [];
  // CHATLOG_BENCH_SERVER_LOG=<file>: everything the server says is appended there too.
  const logFile = process.env.CHATLOG_BENCH_SERVER_LOG;
  const keep = (chunk: Buffer) => {
    if (logFile) fs.appendFileSync(logFile, chunk);
    if (output.length < 200) output.push(chunk.toString('utf8').trimEnd());
  };
  child.stdout?.on('data', keep);
  const base =
    (await waitForLine(child, 'stderr', /listening on (http:\S+)/, { signal, timeoutMs: 30_000 }))[1] ?? '';
  child.stderr?.on('data', keep);
  return { child, pid: child.pid, base, port: Number(new URL(base).port), output };
}

/** A bench script run with tsx in its own process, its output on stdout; stderr is this process's. */
function spawnScript(script: string, args: readonly string[]): ChildProcess {
  return track(
    spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', script), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
}

/**
 * The baseline server's side of startBaseline(): listen on a free port of 127.0.0.1, say which,
 * and close on SIGTERM.
 */
export function listenAsBaseline(server: Server): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening on ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

/** A baseline server (memory-server.ts, webhook-baseline-server.ts); resolves once it listens. */
export async function startBaseline(
  script: string,
  args: readonly string[],
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawnScript(script, args);
  const port = (await waitForLine(child, 'stdout', /listening on (\d+)/))[1];
  return { child, base: `http://127.0.0.1:${port}` };
}

/** A load process (load.ts, webhook-load.ts) run to its one JSON result line. */
export async function runJson<T>(script: string, args: readonly string[]): Promise<T> {
  const match = await waitForLine(spawnScript(script, args), 'stdout', /^(\{.*\})\n/m);
  return JSON.parse(match[1] ?? '{}') as T;
}

/** bench/webhook-load.ts: signed senders for a while; its JSON result line. */
export function runWebhookLoad<T>(
  url: string,
  channelSecret: string,
  options: { concurrency: number; seconds: number; perRequest: number; prefix: string },
): Promise<T> {
  return runJson<T>('webhook-load.ts', [
    url,
    channelSecret,
    String(options.concurrency),
    String(options.seconds),
    String(options.perRequest),
    options.prefix,
  ]);
}
