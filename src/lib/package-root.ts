/**
 * The folder of chatlog's package.json, whichever way the code runs: src/ under tsx, dist/ as tsc
 * wrote it, or dist/bundle/ (scripts/bundle.ts), where a file's depth below the root differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (
      fs.existsSync(file) &&
      (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === 'chatlog'
    ) {
      root = dir;
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error("chatlog's package.json was not found above its code");
  }
}

let version: string | undefined;

/** chatlog's version, from its package.json. */
export function packageVersion(): string {
  version ??= (
    JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }
  ).version;
  return version;
}
