/**
 * The small dialect adapter every query of the store is written against, once for both engines.
 *
 * A statement is written with `?` placeholders in the SQL both SQLite and PostgreSQL understand;
 * the PostgreSQL engine numbers them (`$1`, `$2`, ...). Rows come back as objects named by their
 * columns, BIGINT and INTEGER as numbers (every value chatlog stores is below 2^53), BLOB and
 * BYTEA as Buffers.
 */

export type SqlValue = string | number | Buffer | null;

export interface Sql {
  all<T>(text: string, params?: readonly SqlValue[]): Promise<T[]>;
  get<T>(text: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(text: string, params?: readonly SqlValue[]): Promise<number>;
}

/** The statements of one write transaction. */
export interface Transaction extends Sql {
  /** Runs SQL without parameters, several statements at once (DDL, savepoints). */
  exec(text: string): Promise<void>;
}

/**
 * The transaction cannot go on: a savepoint could not be rolled back (the engine already undid the
 * whole transaction, after a disk error say). `original` is what went wrong first.
 */
export class TransactionAborted extends Error {
  constructor(
    readonly original: unknown,
    readonly rollbackError: unknown,
  ) {
    super('the transaction was aborted');
    this.name = 'TransactionAborted';
  }
}

/**
 * Runs `work` inside a savepoint of `tx`: undone alone when it throws, the rest of the
 * transaction going on (one bad request in a group commit fails alone). When even the savepoint
 * cannot be undone, throws TransactionAborted: the whole transaction must be given up.
 */
export async function inSavepoint<T>(tx: Transaction, work: () => Promise<T>): Promise<T> {
  await tx.exec('SAVEPOINT request');
  try {
    const result = await work();
    await tx.exec('RELEASE SAVEPOINT request');
    return result;
  } catch (error) {
    try {
      await tx.exec('ROLLBACK TO SAVEPOINT request');
      await tx.exec('RELEASE SAVEPOINT request');
    } catch (rollbackError) {
      throw new TransactionAborted(error, rollbackError);
    }
    throw error;
  }
}

/**
 * `?` placeholders numbered for PostgreSQL (`$1`, `$2`, ...), remembered per text. The store's
 * statements hold no `?` inside string literals or identifiers, which this does not parse.
 */
const numbered = new Map<string, string>();
export function numberPlaceholders(text: string): string {
  let result = numbered.get(text);
  if (result === undefined) {
    let n = 0;
    result = text.replace(/\?/g, () => `$${++n}`);
    numbered.set(text, result);
  }
  return result;
}
