/**
 * Finds the test files and runs them, several at a time; package.json's test scripts call it, no
 * list to keep.
 *
 *   node --import tsx test/run.ts                   every file on SQLite and every store file on PostgreSQL
 *   node --import tsx test/run.ts test/contract     the files under a folder (or named), on both stores
 *   node --import tsx test/run.ts --store postgres  one store only (sqlite or postgres)
 *   node --import tsx test/run.ts --unit            the quick loop: no PostgreSQL, Redis, Chromium or build
 *   node --import tsx test/run.ts --repeat 5 FILE   each chosen file 5 times (a flaky test shows itself)
 *   node --import tsx test/run.ts --list            which file runs on which store, and why
 *
 * The rule for PostgreSQL: a test file that opens a store through test/helpers.ts (createTestStore,
 * startTestServer, reopenTestStore), directly or through another module of test/, runs on both
 * stores. A file that cannot run on PostgreSQL says so with a line `// sqlite-only: <why>`. A file
 * that constructs `new SqliteStore(` itself must carry that line too, so that a new store test can
 * never run on SQLite alone in silence.
 *
 * Each run of a file is its own process (`node --import tsx FILE`: node:test runs it in-process), with
 * its own temporary directory, PostgreSQL schema and ports, so files run side by side: `--jobs`
 * of them at once (twice the cores by default: most files wait on sockets, child processes and
 * fsync more than they compute). A file's output is shown when it fails (all of it, with `--verbose`);
 * a file still running after `--timeout` seconds is stopped with its children and counts as failed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const TEST_ROOT = import.meta.dirname;
const REPO_ROOT = path.dirname(TEST_ROOT);

/** The helpers that open a store: CHATLOG_TEST_STORE decides which. */
const OPENS_TEST_STORE = /\b(createTestStore|startTestServer|reopenTestStore)\b/;
const OPENS_SQLITE_DIRECTLY = /\bnew SqliteStore\(/;
const SQLITE_ONLY = /^\s*\/\/\s*sqlite-only:\s*(\S.*)$/m;
/** What the quick loop must not need: the servers and a browser (each file also reaches them itself). */
const NEEDS_SERVICE: [string, RegExp][] = [
  ['PostgreSQL', /\bPostgresStore\b|\btestPostgres(Store|Env)\b|TEST_DATABASE_URL|from 'pg'/],
  ['Redis', /\bredisUrl\b|REDIS_URL|ioredis/],
  ['Chromium', /launchChromium|playwright-core/],
];
/** The quick loop's folders: code run in-process, no dist/ build, no tool run through npx. */
const UNIT_FOLDERS = ['lib', 'modules', 'store'];
/**
 * Which folders start first: the longest files (scale tests, Chromium, tools run through npx, child
 * processes) begin while there is room, so that no one of them is left running alone at the end.
 */
const FIRST = ['scale', 'browser', 'tools', 'cli', 'contract', 'clients', 'store', 'modules', 'lib'];

type StoreKind = 'sqlite' | 'postgres';

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => path.relative(REPO_ROOT, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** A file's text and that of every module of test/ it imports, transitively (helpers.ts excluded). */
function sourceWithLocalImports(file: string, seen = new Set<string>()): string {
  const absolute = path.resolve(REPO_ROOT, file);
  if (seen.has(absolute)) return '';
  seen.add(absolute);
  const text = fs.readFileSync(absolute, 'utf8');
  let all = text;
  for (const [, specifier] of text.matchAll(/from '(\.\.?\/[^']+)'/g)) {
    const imported = path.resolve(path.dirname(absolute), specifier!.replace(/\.js$/, '.ts'));
    if (imported === path.join(TEST_ROOT, 'helpers.ts')) continue;
    if (imported.startsWith(TEST_ROOT + path.sep) && fs.existsSync(imported)) {
      all += `\n${sourceWithLocalImports(imported, seen)}`;
    }
  }
  return all;
}

interface Plan {
  file: string;
  postgres: boolean;
  unit: boolean;
  why: string;
}

function plan(file: string): Plan {
  const own = fs.readFileSync(path.resolve(REPO_ROOT, file), 'utf8');
  const all = sourceWithLocalImports(file);
  const sqliteOnly = own.match(SQLITE_ONLY)?.[1];
  const services = NEEDS_SERVICE.filter(([, pattern]) => pattern.test(all)).map(([name]) => name);
  const unit = UNIT_FOLDERS.some((folder) => file.startsWith(`test/${folder}/`)) && services.length === 0;
  if (sqliteOnly) return { file, postgres: false, unit, why: `sqlite-only: ${sqliteOnly}` };
  if (OPENS_SQLITE_DIRECTLY.test(own)) {
    throw new Error(
      `${file} opens a SqliteStore itself: open it with createTestStore() from test/helpers.ts so it runs ` +
        'on PostgreSQL too, or say why it cannot with a line `// sqlite-only: <why>`',
    );
  }
  const postgres = OPENS_TEST_STORE.test(all);
  const why = [postgres ? 'opens a test store' : '', ...services.map((name) => `needs ${name}`)]
    .filter(Boolean)
    .join(', ');
  return { file, postgres, unit, why };
}

interface Job {
  file: string;
  store: StoreKind;
  round: number;
}

interface Outcome extends Job {
  passed: boolean;
  seconds: number;
  output: string;
}

function folderRank(file: string): number {
  const rank = FIRST.indexOf(file.split('/')[1] ?? '');
  return rank === -1 ? FIRST.length : rank;
}

/**
 * The files running now. Each is a process group of its own (so that it can be stopped with what it
 * started), which a Ctrl-C at the terminal does not reach: the runner stops them when it is stopped.
 */
const running = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    for (const child of running) killGroup(child);
    console.error(`\n== stopped (${signal}): ${running.size} running test file(s) stopped with it`);
    process.exit(130);
  });
}

/** Runs one file in its own process group; its output is kept, shown when it fails. */
function runJob(job: Job, timeoutSeconds: number, verbose: boolean): Promise<Outcome> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', job.file], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CHATLOG_TEST_STORE: job.store, FORCE_COLOR: '0' },
  });
  running.add(child);
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => chunks.push(chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutSeconds * 1000);
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      // Whatever the file left behind (a server it spawned, Chromium) goes with it.
      killGroup(child);
      let output = Buffer.concat(chunks).toString('utf8');
      if (timedOut) output += `\n${job.file} was still running after ${timeoutSeconds} s: stopped\n`;
      else if (code !== 0) output += `\n${job.file} exited with ${signal ?? code}\n`;
      const passed = code === 0 && !timedOut;
      resolve({
        ...job,
        passed,
        seconds: (performance.now() - started) / 1000,
        output: verbose || !passed ? output : '',
      });
    });
  });
}

/** The first error a failed file printed, a few lines of it, each cut short. */
function firstError(output: string, lines = 12): string[] {
  const all = output.split('\n');
  const at = all.findIndex((line) => /\b\w*Error\b(\s*\[\w+\])?:|was still running after/.test(line));
  if (at < 0) return all.filter((line) => line.trim() !== '').slice(-lines);
  return all.slice(at, at + lines).map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line));
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const STORE_NAME: Record<StoreKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

async function runAll(
  jobs: Job[],
  options: { jobs: number; timeout: number; verbose: boolean },
): Promise<boolean> {
  const started = performance.now();
  const outcomes: Outcome[] = [];
  const queue = [...jobs];
  const width = String(jobs.length).length;
  console.log(`== ${jobs.length} runs of test files, ${options.jobs} at a time`);
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const outcome = await runJob(job, options.timeout, options.verbose);
      outcomes.push(outcome);
      const mark = outcome.passed ? 'ok  ' : 'FAIL';
      console.log(
        `${String(outcomes.length).padStart(width)}/${jobs.length} ${mark} ${outcome.seconds.toFixed(1).padStart(6)} s  ${STORE_NAME[outcome.store].padEnd(10)} ${outcome.file}`,
      );
      if (outcome.output) console.log(outcome.output);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.jobs, jobs.length) }, worker));
  const failed = outcomes.filter((o) => !o.passed);
  const seconds = (performance.now() - started) / 1000;

  console.log('\n== the slowest files');
  for (const o of [...outcomes].sort((a, b) => b.seconds - a.seconds).slice(0, 15)) {
    console.log(`${o.seconds.toFixed(1).padStart(7)} s  ${STORE_NAME[o.store].padEnd(10)} ${o.file}`);
  }
  for (const store of ['sqlite', 'postgres'] as const) {
    const mine = outcomes.filter((o) => o.store === store);
    if (mine.length === 0) continue;
    const busy = mine.reduce((sum, o) => sum + o.seconds, 0);
    const bad = mine.filter((o) => !o.passed).length;
    console.log(
      `== ${STORE_NAME[store]}: ${mine.length} runs, ${bad === 0 ? 'all passed' : `${bad} FAILED`} (${busy.toFixed(0)} s of file time)`,
    );
  }
  for (const o of failed) {
    console.log(
      `FAILED on ${STORE_NAME[o.store]}: ${o.file}${o.round > 0 ? ` (repeat ${o.round + 1})` : ''}`,
    );
    // Again at the end, where a CI log's tail shows it: the first error's lines.
    for (const line of firstError(o.output)) console.log(`  | ${line}`);
  }
  console.log(`== ${failed.length === 0 ? 'passed' : 'FAILED'} in ${seconds.toFixed(1)} s`);
  // For .ci/run's table of phases: this run's seconds and each store's file time.
  if (process.env.CHATLOG_TEST_SUMMARY) {
    const lines = [`seconds ${Math.round(seconds)}`, `jobs ${options.jobs}`];
    for (const store of ['sqlite', 'postgres'] as const) {
      const busy = outcomes.filter((o) => o.store === store).reduce((sum, o) => sum + o.seconds, 0);
      if (busy > 0) lines.push(`store ${STORE_NAME[store]} ${Math.round(busy)}`);
    }
    fs.writeFileSync(process.env.CHATLOG_TEST_SUMMARY, `${lines.join('\n')}\n`);
  }
  return failed.length === 0;
}

const USAGE =
  'usage: node --import tsx test/run.ts [FILE or FOLDER ...] [--store sqlite|postgres] [--unit] [--jobs N] ' +
  '[--repeat N] [--timeout SECONDS] [--verbose] [--list]';

function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      store: { type: 'string' },
      postgres: { type: 'boolean' },
      unit: { type: 'boolean' },
      list: { type: 'boolean' },
      jobs: { type: 'string', default: process.env.CHATLOG_TEST_JOBS },
      repeat: { type: 'string' },
      timeout: { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse();
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = args;
  const count = (name: string, text: string | undefined, fallback: number): number => {
    const n = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`--${name} must be a whole number of at least 1, not ${text}`);
    return n;
  };
  let jobs: number;
  let repeat: number;
  let timeout: number;
  try {
    jobs = count('jobs', values.jobs, 2 * os.availableParallelism());
    repeat = count('repeat', values.repeat, 1);
    timeout = count('timeout', values.timeout, 600);
    if (values.store !== undefined && values.store !== 'sqlite' && values.store !== 'postgres') {
      throw new Error(`--store is sqlite or postgres, not ${values.store}`);
    }
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const stores: StoreKind[] = values.postgres
    ? ['postgres']
    : values.store
      ? [values.store as StoreKind]
      : values.unit
        ? ['sqlite']
        : ['sqlite', 'postgres'];

  let plans: Plan[];
  try {
    plans = testFiles(TEST_ROOT).map(plan);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  if (positionals.length > 0) {
    const wanted = positionals.map((p) => path.relative(REPO_ROOT, path.resolve(p)));
    const unknown = wanted.filter((w) => !plans.some((p) => p.file === w || p.file.startsWith(`${w}/`)));
    if (unknown.length > 0) {
      console.error(`no test file is or is under: ${unknown.join(', ')}\n${USAGE}`);
      return 2;
    }
    plans = plans.filter((p) => wanted.some((w) => p.file === w || p.file.startsWith(`${w}/`)));
  }
  if (values.unit) plans = plans.filter((p) => p.unit);

  if (values.list) {
    for (const p of plans) {
      const passes = ['sqlite', p.postgres ? 'postgres' : '', p.unit ? 'unit' : ''].filter(Boolean).join(' ');
      console.log(`${p.file.padEnd(48)} ${passes.padEnd(22)} ${p.why}`);
    }
    console.log(
      `\n${plans.length} files; ${plans.filter((p) => p.postgres).length} also on PostgreSQL; ${plans.filter((p) => p.unit).length} in the quick loop`,
    );
    return 0;
  }

  const ordered = [...plans].sort((a, b) => folderRank(a.file) - folderRank(b.file));
  const queue: Job[] = [];
  for (let round = 0; round < repeat; round++) {
    for (const p of ordered) {
      for (const store of stores) {
        if (store === 'postgres' && !p.postgres) continue;
        queue.push({ file: p.file, store, round });
      }
    }
  }
  if (queue.length === 0) {
    console.error('no test file runs on the store(s) asked for');
    return 2;
  }
  return (await runAll(queue, { jobs, timeout, verbose: values.verbose ?? false })) ? 0 : 1;
}

process.exitCode = await main();
