/** Child processes of the benchmarks: wait for what they print, stop them. */
import type { ChildProcess } from 'node:child_process';

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
