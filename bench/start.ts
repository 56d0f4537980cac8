/**
 * `npm run bench -- start` (issue 20, goal 6): from spawning the server to its first answered read,
 * on the embedded store (the demo hub, made in a temporary folder), each start in its own process:
 * - `bare`: a Node process that answers HTTP from memory (what any Node server pays: the floor);
 * - `chatlog`: `bin/chatlog serve` as installed (dist/bundle/, scripts/bundle.ts);
 * - `unbundled`: the same command from dist/ as tsc wrote it (the start before bundling).
 * The three take turns, `--rounds` times; min, median and max, and the medians' ratio to `bare`.
 * Node 22+ keeps compiled code between runs (bin/chatlog turns it on): the first round of each is
 * left out, so that every figure is a start with a warm compile cache, as a restarted server has.
 * Run it with each Node on PATH to compare them.
 *
 *   node --import tsx bench/start.ts [--rounds 9]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { readArgs } from './args.js';
import { ROOT, stop, stopAll } from './processes.js';

const args = readArgs('node --import tsx bench/start.ts [--rounds 9]', { values: ['rounds'] });
const rounds = args.number('rounds', 9, { min: 2, max: 100, whole: true });

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-start-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  CHATLOG_DATA_DIR: path.join(work, 'data'),
  CHATLOG_SECRET: 'start-bench-secret-0123456789abcdef',
  LOG_LEVEL: 'warn',
};
// The embedded store, whatever this shell points at.
delete env.DATABASE_URL;
delete env.REDIS_URL;

const BIN = path.join(ROOT, 'bin', 'chatlog');
const demo = spawnSync(process.execPath, [BIN, 'demo'], { env, encoding: 'utf8' });
if (demo.status !== 0) throw new Error(`chatlog demo failed: ${demo.stderr}`);
const readPath = /curl 'http:\/\/[^/]+(\/api\/line\/[^']+)'/.exec(demo.stdout)?.[1];
if (!readPath) throw new Error(`chatlog demo printed no read URL:\n${demo.stdout}`);

// The command line from dist/ as tsc wrote it, started as bin/chatlog starts the bundle.
const unbundled = path.join(work, 'unbundled.mjs');
fs.writeFileSync(
  unbundled,
  `import module from 'node:module';\nmodule.enableCompileCache?.();\nawait import(${JSON.stringify(
    new URL('dist/cli/main.js', `file://${ROOT}/`).href,
  )});\n`,
);
const BARE = `require('node:http').createServer((req, res) => res.end('[]')).listen(Number(process.argv[1]), '127.0.0.1');`;

const VARIANTS: Record<string, (port: number) => string[]> = {
  bare: (port) => ['-e', BARE, String(port)],
  chatlog: (port) => [BIN, 'serve', '--port', String(port)],
  unbundled: (port) => [unbundled, 'serve', '--port', String(port)],
};

function status(port: number): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: readPath, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
  });
}

/** Milliseconds from spawn to the first 200 of the demo hub's read (polled every 2 ms). */
async function startOnce(argv: string[], port: number): Promise<number> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${argv.join(' ')} exited ${child.exitCode}`);
      if ((await status(port)) === 200) return performance.now() - started;
      if (performance.now() - started > 30_000) throw new Error(`${argv.join(' ')}: no answer within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    await stop(child);
  }
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

try {
  const times = new Map<string, number[]>(Object.keys(VARIANTS).map((name) => [name, []]));
  for (let round = 0; round < rounds + 1; round++) {
    for (const [name, argv] of Object.entries(VARIANTS)) {
      const port = await freePort();
      const ms = await startOnce(argv(port), port);
      if (round > 0) times.get(name)?.push(ms);
    }
    process.stderr.write(`round ${round}/${rounds}\r`);
  }
  const median = (values: number[]) => values[Math.floor(values.length / 2)] ?? Number.NaN;
  const bare = median([...(times.get('bare') ?? [])].sort((a, b) => a - b));
  console.log(`Start to the first answered read, Node ${process.version}, ${rounds} rounds (ms)`);
  console.log('| start | min | median | max | median / bare |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, values] of times) {
    values.sort((a, b) => a - b);
    const cells = [values[0], median(values), values[values.length - 1]].map((ms) => (ms ?? 0).toFixed(0));
    console.log(`| ${name} | ${cells.join(' | ')} | ${(median(values) / bare).toFixed(2)} |`);
  }
  console.log('Goal (issue 20, 6): chatlog ≤ 300 ms.');
} finally {
  await stopAll();
  fs.rmSync(work, { recursive: true, force: true });
}
