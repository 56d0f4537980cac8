/** The dialect adapter (../sql/executor.ts) over a better-sqlite3 connection: statements prepared once. */
import type Database from 'better-sqlite3';
import type { Transaction } from '../sql/executor.js';

export function sqliteSql(db: Database.Database): Transaction {
  const statements = new Map<string, Database.Statement>();
  const prepare = (text: string): Database.Statement => {
    let statement = statements.get(text);
    if (!statement) {
      statement = db.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  // better-sqlite3 is synchronous: each call runs to its end before it resolves.
  return {
    all: async <T>(text: string, params: readonly unknown[] = []) => prepare(text).all(...params) as T[],
    get: async <T>(text: string, params: readonly unknown[] = []) =>
      prepare(text).get(...params) as T | undefined,
    run: async (text, params = []) => prepare(text).run(...params).changes,
    exec: async (text) => {
      db.exec(text);
    },
  };
}
