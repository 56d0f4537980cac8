/**
 * `chatlog serve`'s app over the bench dataset's store, with the store's search indexing on or off,
 * in its own process: bench/search.ts measures what writing the index costs webhook ingest (Q5).
 * The same script serves both sides of that comparison, so they differ only in the index writes.
 *
 *   node --import tsx bench/search-server.ts sqlite|postgres index|no-index
 */
import { buildApp } from '../src/app.js';
import { appSettings, loadConfig } from '../src/config.js';
import { createLogger } from '../src/lib/logger.js';
import { createSecretBox } from '../src/lib/secrets.js';
import { openContentStore } from '../src/store/content/open.js';
import { openStore, type StoreKind, serverEnv } from './feed-common.js';

const [kind = 'sqlite', indexing = 'index', secret = ''] = process.argv.slice(2) as [
  StoreKind,
  string,
  string,
];
const env = Object.fromEntries(
  Object.entries(serverEnv(kind, secret)).filter(([, v]) => v !== undefined),
) as Record<string, string>;
const config = loadConfig(env);
const store = openStore(kind, { searchIndex: indexing === 'index' });
await store.migrate();
const blobs = await openContentStore(config);
const { app } = buildApp({
  store,
  blobs,
  secrets: createSecretBox(secret),
  logger: createLogger('warn'),
  ...appSettings(config),
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stderr.write(
  `listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`,
);
process.on('SIGTERM', async () => {
  await app.close();
  await blobs.close();
  await store.close();
  process.exit(0);
});
