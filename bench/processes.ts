/** Child processes of the benchmarks: wait for what they print, stop them. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Resolves with the first match of `pattern` in what the child prints; rejects if it exits first. */
export function waitForLine(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
  pattern: RegExp,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child[stream]?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) resolve(match);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${seen}`)));
  });
}

/** SIGTERM, and wait for the exit. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * `chatlog serve --port 0` (one process unless `workers` says otherwise) in its own process, with
 * this environment added; resolves once it listens, with its base URL.
 */
export async function startChatlog(
  env: NodeJS.ProcessEnv,
  workers = '1',
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'chatlog'), 'serve', '--workers', workers, '--port', '0'],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const base = (await waitForLine(child, 'stderr', /listening on (http:\S+)/))[1] ?? '';
  return { child, base };
}

/** bench/webhook-load.ts in its own process: signed senders for a while; its JSON result line. */
export async function runWebhookLoad<T>(
  url: string,
  channelSecret: string,
  options: { concurrency: number; seconds: number; perRequest: number; prefix: string },
): Promise<T> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'bench', 'webhook-load.ts'),
      url,
      channelSecret,
      String(options.concurrency),
      String(options.seconds),
      String(options.perRequest),
      options.prefix,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const match = await waitForLine(child, 'stdout', /^(\{.*\})\n/m);
  return JSON.parse(match[1] ?? '{}') as T;
}
