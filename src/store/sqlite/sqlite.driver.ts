/**
 * better-sqlite3, in the build this Node can run. better-sqlite3 13 (Node-API, prebuilt inside its npm
 * package: no compiler needed) loads only where Node-API 10 exists, Node 22.14 and later; 12, which
 * `npm install` compiles from source as an optional dependency, is kept for older Nodes (20). 12 is
 * never used where 13 loads: built for Node 24.19 or later it aborts the process when a statement
 * is garbage-collected (nodejs/node#65446). Both have the API chatlog uses.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const NODE_API = Number(process.versions.napi);
/** The first Node-API version better-sqlite3 13 loads on. */
const NODE_API_OF_13 = 10;

function load(): typeof BetterSqlite3 {
  if (NODE_API >= NODE_API_OF_13) return require('better-sqlite3');
  try {
    return require('better-sqlite3-12');
  } catch {
    throw new Error(
      `Node ${process.version} (Node-API ${NODE_API}) runs SQLite through better-sqlite3 12, which npm install ` +
        'compiles from source and could not: install a C++ tool chain (python3, make, g++) and run npm install ' +
        'again, or use Node 22 or 24',
    );
  }
}

const Database = load();

export function openDatabase(file: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
  return new Database(file, options);
}
