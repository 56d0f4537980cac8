/** Opens the store the configuration names: PostgreSQL when DATABASE_URL is set, else SQLite in the data directory. */
import type { Config } from '../config.js';
import { SqliteStore } from './sqlite/sqlite.store.js';
import type { Store } from './store.js';

export async function openStore(
  config: Config,
  onPoolError?: (error: Error) => void,
  onFastPathFailure?: (error: Error, groups: number) => void,
): Promise<Store> {
  // pg is loaded only when it is used, so that the embedded store starts without it.
  const store: Store = config.databaseUrl
    ? new (await import('./postgres/postgres.store.js')).PostgresStore({
        connectionString: config.databaseUrl,
        readConnectionString: config.databaseReadUrl,
        schema: config.pgSchema,
        poolSize: config.pgPoolSize,
        statementTimeoutMs: config.pgStatementTimeoutMs,
        connectTimeoutMs: config.pgConnectTimeoutMs,
        onPoolError,
        onFastPathFailure,
      })
    : new SqliteStore({ dataDir: config.dataDir });
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
