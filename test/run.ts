/**
 * Finds the test files and runs them; package.json's test scripts call it, no list to keep.
 *
 *   node --import tsx test/run.ts             every test on SQLite, then the store tests on PostgreSQL
 *   node --import tsx test/run.ts --postgres  only the PostgreSQL pass
 *   node --import tsx test/run.ts --unit      the quick loop: no PostgreSQL, Redis, Chromium or build
 *   node --import tsx test/run.ts --list      which file runs in which pass, and why
 *
 * The rule for PostgreSQL: a test file that opens a store through test/helpers.ts (createTestStore,
 * startTestServer, reopenTestStore), directly or through another module of test/, runs on both
 * stores. A file that cannot run on PostgreSQL says so with a line `// sqlite-only: <why>`. A file
 * that constructs `new SqliteStore(` itself must carry that line too, so that a new store test can
 * never run on SQLite alone in silence.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const TEST_ROOT = import.meta.dirname;
const REPO_ROOT = path.dirname(TEST_ROOT);

/** The helpers that open a store: CHATLOG_TEST_STORE decides which. */
const OPENS_TEST_STORE = /\b(createTestStore|startTestServer|reopenTestStore)\b/;
const OPENS_SQLITE_DIRECTLY = /\bnew SqliteStore\(/;
const SQLITE_ONLY = /^\s*\/\/\s*sqlite-only:\s*(\S.*)$/m;
/** What the quick loop must not need: the servers and a browser (each file also reaches them itself). */
const NEEDS_SERVICE: [string, RegExp][] = [
  ['PostgreSQL', /\bPostgresStore\b|TEST_DATABASE_URL|from 'pg'/],
  ['Redis', /\bredisUrl\b|REDIS_URL|ioredis/],
  ['Chromium', /launchChromium|playwright-core/],
];
/** The quick loop's folders: code run in-process, no dist/ build, no tool run through npx. */
const UNIT_FOLDERS = ['lib', 'modules', 'store'];

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

/** node --test over the files; true when every test passed. */
function run(label: string, files: string[], store: 'sqlite' | 'postgres'): boolean {
  if (files.length === 0) return true;
  console.log(`\n== ${label}: ${files.length} files on ${store === 'postgres' ? 'PostgreSQL' : 'SQLite'}`);
  const started = Date.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...files], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, CHATLOG_TEST_STORE: store },
  });
  console.log(
    `== ${label}: ${result.status === 0 ? 'passed' : 'FAILED'} in ${(Date.now() - started) / 1000} s`,
  );
  return result.status === 0;
}

const mode = process.argv[2] ?? '--all';
let plans: Plan[] = [];
try {
  plans = testFiles(TEST_ROOT).map(plan);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const onPostgres = plans.filter((p) => p.postgres).map((p) => p.file);

if (mode === '--list') {
  for (const p of plans) {
    const passes = ['sqlite', p.postgres ? 'postgres' : '', p.unit ? 'unit' : ''].filter(Boolean).join(' ');
    console.log(`${p.file.padEnd(48)} ${passes.padEnd(22)} ${p.why}`);
  }
  console.log(
    `\n${plans.length} files; ${onPostgres.length} also on PostgreSQL; ${plans.filter((p) => p.unit).length} in the quick loop`,
  );
} else if (mode === '--unit') {
  process.exitCode = run(
    'unit',
    plans.filter((p) => p.unit).map((p) => p.file),
    'sqlite',
  )
    ? 0
    : 1;
} else if (mode === '--postgres') {
  process.exitCode = run('PostgreSQL pass', onPostgres, 'postgres') ? 0 : 1;
} else if (mode === '--all') {
  const passed =
    run(
      'every test',
      plans.map((p) => p.file),
      'sqlite',
    ) && run('PostgreSQL pass', onPostgres, 'postgres');
  process.exitCode = passed ? 0 : 1;
} else {
  console.error('usage: node --import tsx test/run.ts [--all | --postgres | --unit | --list]');
  process.exitCode = 2;
}
