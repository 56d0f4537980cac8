/**
 * What each part of src/ may import (docs/architecture.md, "Who may import what"), checked on every
 * relative import of every source file, so a shortcut across layers fails here rather than in review.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every relative import of the tree, as [importer, imported], both relative to src/ (`modules/keys/keys.usecases`). */
function imports(): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(file), match[1] ?? '').replace(/\.js$/, '');
      pairs.push([path.relative(SRC, file).replace(/\.ts$/, ''), path.relative(SRC, target)]);
    }
  }
  return pairs;
}

/** [who, may not import, why]: both as path prefixes under src/. */
const RULES: Array<[RegExp, RegExp, string]> = [
  [/^lib\//, /^(modules|cli|app|server|config)/, 'lib/ is small pure helpers: it knows no module'],
  [/^lib\//, /^store\//, 'lib/ is small pure helpers: it knows no storage'],
  [
    /^store\/store$/,
    /^store\/(?!types$|ports\/)/,
    'the interface imports no implementation, only its types and its ports (store/ports/)',
  ],
  [/^store\/types$/, /./, 'the shared types are types only: they import nothing'],
  [
    /^(?!store\/|app$|cli\/)/,
    /^store\/(sql|sqlite|postgres)\//,
    "an engine's code lives in the store (the answer threads with SQLite's); only a composition root picks an engine",
  ],
  [/^store\//, /^(modules|cli|lib|app|server)/, 'the store knows nothing of HTTP, the CLI or the use cases'],
  [/^store\/sql\//, /^store\/(sqlite|postgres)\//, 'the shared SQL is written for both engines, not for one'],
  [/^store\/sqlite\//, /^store\/postgres\//, 'one engine never reaches into the other'],
  [/^store\/postgres\//, /^store\/sqlite\//, 'one engine never reaches into the other'],
  [
    /^modules\//,
    /^store\/(?!store$|types$|content\/content-store$)/,
    'use cases see the Store and ContentStore interfaces (store/store.ts, store/types.ts, store/content/content-store.ts), never SQL or an engine',
  ],
  [/^modules\//, /^(cli|app|server)/, 'modules are called by the composition roots, never the other way'],
  [/^(?!app$|server$|cli\/)/, /\.routes$/, 'only the composition roots (app.ts) register routes'],
];

test('each part of src/ imports only what its layer may', () => {
  const found = imports();
  assert.ok(found.length > 100, 'the imports were read');
  const broken = found.flatMap(([from, to]) =>
    RULES.filter(([who, banned]) => who.test(from) && banned.test(to)).map(
      ([, , why]) => `${from} imports ${to}: ${why}`,
    ),
  );
  assert.deepEqual(broken, []);
});

// A bundle's import() of a CommonJS package has only `default` (scripts/bundle.ts): what would work
// from dist/ and break in dist/bundle/ is refused here, where it shows.
test('a package loaded on demand is required (createRequire), never import()-ed', () => {
  const found = sourceFiles(SRC).flatMap((file) =>
    [
      ...fs
        .readFileSync(file, 'utf8')
        .matchAll(/(?<!typeof )\bimport\(\s*'((?!\.{1,2}\/)(?!node:)[^']+)'\s*\)/g),
    ].map((match) => `${path.relative(SRC, file)}: import('${match[1]}')`),
  );
  assert.deepEqual(found, []);
});

// A long file says in its first lines why it is kept whole (issue 43): one longer than this is a
// place to split unless it says so.
test('a source file of more than 450 lines says in its first comment why it is kept whole', () => {
  const long = sourceFiles(SRC).flatMap((file) => {
    const text = fs.readFileSync(file, 'utf8');
    if (text.split('\n').length <= 450) return [];
    const opening = /^\/\*\*[\s\S]*?\*\//.exec(text)?.[0] ?? '';
    return /Kept whole/.test(opening) ? [] : [path.relative(SRC, file)];
  });
  assert.deepEqual(long, []);
});
