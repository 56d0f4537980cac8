/**
 * The second half of `npm run build`: bundles what tsc wrote to dist/ into dist/bundle/, which
 * bin/chatlog runs. One file per entry (the command line, the SQLite writer thread, the answer
 * threads) and chunks they share, dependencies included, whitespace removed: a start opens ~20 files
 * of code instead of ~500 (`npm run bench -- start` measures it against the unbundled dist/: a
 * quarter to a third less time to the first answer).
 *
 * Kept out: the SQLite drivers (native code) and pg's optional native binding. Names are kept
 * (no mangling), so a stack trace still says which function threw; `node --enable-source-maps
 * bin/chatlog ...` gives each frame's file and line in src/.
 *
 *   node --import tsx scripts/bundle.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const BUNDLE = path.join(DIST, 'bundle');

/**
 * The entries. A thread is started by its file's name beside the code that starts it
 * (`new URL('./sqlite.writer.js', import.meta.url)`): every entry and chunk is written to the same
 * folder, under the entry's own file name, so those names hold bundled as they do in dist/.
 */
const ENTRIES = ['cli/main.js', 'store/sqlite/sqlite.writer.js', 'store/sqlite/answers/answers.thread.js'];

fs.rmSync(BUNDLE, { recursive: true, force: true });
await build({
  entryPoints: ENTRIES.map((entry) => path.join(DIST, entry)),
  outdir: BUNDLE,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  // Maps back to src/*.ts (through tsc's maps), read only by `node --enable-source-maps`: a start
  // without the flag does not pay for them.
  sourcemap: 'linked',
  external: ['better-sqlite3', 'better-sqlite3-12', 'pg-native'],
  // CommonJS dependencies call require(): an ES module has none of its own.
  banner: {
    js: "import { createRequire as __chatlogRequire } from 'node:module'; const require = __chatlogRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
