/**
 * Opens the content store the configuration names (CONTRACT §11): PostgreSQL when
 * CHATLOG_CONTENT_STORE=postgres (the default with DATABASE_URL), else files under the data
 * directory. pg is loaded only when it is used.
 */
import path from 'node:path';
import type { Config } from '../../config.js';
import type { ContentStore } from './content-store.js';

/** Connections for content (a long download holds one for its write): apart from the store's pools. */
const CONTENT_POOL_SIZE = 4;

export function contentStoreKind(config: Pick<Config, 'contentStore' | 'databaseUrl'>): 'files' | 'postgres' {
  return config.contentStore ?? (config.databaseUrl ? 'postgres' : 'files');
}

export async function openContentStore(
  config: Pick<Config, 'contentStore' | 'databaseUrl' | 'pgSchema' | 'dataDir'>,
  onPoolError?: (error: Error) => void,
): Promise<ContentStore> {
  if (contentStoreKind(config) === 'files') {
    const { FileContentStore } = await import('./content-store.files.js');
    return new FileContentStore(path.join(config.dataDir, 'content'));
  }
  const { PostgresContentStore } = await import('./content-store.postgres.js');
  const pool = PostgresContentStore.pool({
    connectionString: config.databaseUrl,
    max: CONTENT_POOL_SIZE,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    application_name: 'chatlog-content',
    options: config.pgSchema ? `-c search_path=${config.pgSchema}` : undefined,
  });
  pool.on('error', onPoolError ?? (() => undefined));
  return new PostgresContentStore(pool);
}
