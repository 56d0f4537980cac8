/** Opens the store the configuration names: SQLite in the data directory unless DATABASE_URL is set. */
import type { Config } from '../config.js';
import { UserError } from '../lib/errors.js';
import { SqliteStore } from './sqlite/sqlite.store.js';
import type { Store } from './store.js';

export async function openStore(config: Config): Promise<Store> {
  if (config.databaseUrl !== undefined) {
    throw new UserError(
      'DATABASE_URL is set, but this version of chatlog runs on its embedded SQLite store only; unset DATABASE_URL',
    );
  }
  const store = new SqliteStore({ dataDir: config.dataDir });
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
