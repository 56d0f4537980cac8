/** The dialect adapter (../sql/executor.ts) over `pg`: `?` placeholders numbered, rows as objects. */
import type pg from 'pg';
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
