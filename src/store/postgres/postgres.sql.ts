/** The dialect adapter (../sql/executor.ts) over `pg`: `?` placeholders numbered, rows as objects. */
import pg from 'pg';
import { numberPlaceholders, type SqlValue, type Transaction } from '../sql/executor.js';

/** Statements on a pool (each on whichever connection is free) or on one checked-out client. */
export function postgresSql(client: pg.Pool | pg.ClientBase, queryTimeoutMs?: number): Transaction {
  const query = <T extends pg.QueryResultRow>(text: string, values: readonly SqlValue[] = []) =>
    client.query<T>({
      text: numberPlaceholders(text),
      values: values as unknown[],
      ...(queryTimeoutMs === undefined ? {} : { query_timeout: queryTimeoutMs }),
    } as pg.QueryConfig);
  return {
    all: async <T>(text: string, params?: readonly SqlValue[]) =>
      (await query<T & pg.QueryResultRow>(text, params)).rows as T[],
    get: async <T>(text: string, params?: readonly SqlValue[]) =>
      (await query<T & pg.QueryResultRow>(text, params)).rows[0] as T | undefined,
    run: async (text, params) => (await query(text, params)).rowCount ?? 0,
    exec: async (text) => {
      // Without parameters pg uses the simple protocol, which takes several statements at once.
      await client.query(text);
    },
  };
}

/**
 * A statement written with its values in it, as literals: for the simple protocol, which takes
 * several statements in one round trip but no parameters (postgres.fast-ingest.ts). Numbers must
 * be finite; text is quoted by pg's own escapeLiteral.
 */
export function withLiterals(text: string, values: readonly SqlValue[]): string {
  let i = 0;
  const written = text.replace(/\?/g, () => {
    if (i >= values.length) throw new Error('a statement has more placeholders than values');
    return literal(values[i++] ?? null);
  });
  if (i !== values.length) throw new Error('a statement has fewer placeholders than values');
  return written;
}

function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a literal number must be finite');
    return String(value);
  }
  if (typeof value === 'string') return pg.escapeLiteral(value);
  throw new Error('bytes are not written as literals');
}
