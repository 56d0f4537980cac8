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
 * several statements in one round trip but no parameters (postgres.fast-ingest.ts). Every `?` of
 * the text is a value (none may stand in a string literal). Numbers must be safe integers, written
 * in parentheses (so that `-?` never makes a comment of a negative one); text is quoted by pg's own
 * escapeLiteral.
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
    if (!Number.isSafeInteger(value)) throw new Error('a literal number must be a safe integer');
    return `(${value})`;
  }
  if (typeof value === 'string') return pg.escapeLiteral(storable(value));
  throw new Error('bytes are not written as literals');
}

/**
 * PostgreSQL's text cannot hold U+0000 (a LINE text, a name, a search term may carry one): chatlog
 * keeps it there as U+FFFD, the replacement character. SQLite keeps it as it came.
 */
export const storable = (text: string): string =>
  text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;

const storableValue = (value: unknown): unknown =>
  typeof value === 'string' ? storable(value) : Array.isArray(value) ? value.map(storableValue) : value;

/**
 * The pools' client: every value of a statement (and every element of an array value) that is text
 * goes to PostgreSQL `storable`, whatever sent it, so that no text of a request can fail a
 * statement (a 500, and a LINE message lost) for holding U+0000.
 */
export class StorableTextClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg.Client's query has a dozen overloads; this passes them all through
  override query(config: any, values?: any, callback?: any): any {
    if (Array.isArray(values)) return super.query(config, values.map(storableValue), callback);
    if (config !== null && typeof config === 'object' && Array.isArray(config.values)) {
      const storableValues = config.values.map(storableValue);
      // A Submittable (a cursor) reads its own values when it is submitted; a config is copied.
      if (typeof config.submit === 'function') config.values = storableValues;
      else return super.query({ ...config, values: storableValues }, values, callback);
    }
    return super.query(config, values, callback);
  }
}
