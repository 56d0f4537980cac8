/**
 * `npm run bench`: every benchmark in turn, each printing its figures and its ratio to a baseline
 * measured in the same run (the machine is shared and noisy).
 *
 *   npm run bench                      all of them
 *   npm run bench -- export-rss        one of them (extra arguments are passed on)
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BENCHMARKS: Record<string, string> = {
  'export-rss': 'bench/export-rss.ts',
  'webhook-ingest': 'bench/webhook-ingest.ts',
};

const [only, ...rest] = process.argv.slice(2);
const chosen = only && !only.startsWith('--') ? [only] : Object.keys(BENCHMARKS);
const extra = only && !only.startsWith('--') ? rest : process.argv.slice(2);
for (const name of chosen) {
  const file = BENCHMARKS[name];
  if (!file) {
    console.error(`unknown benchmark "${name}"; choose one of ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(1);
  }
  console.log(`\n=== ${name}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, file), ...extra], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
