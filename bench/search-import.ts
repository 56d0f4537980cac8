/**
 * What indexing costs an import, in its own process: the first N messages of the bench's large hub
 * imported (`store.messages.importAll`, the `chatlog import` path) into a fresh empty store, with
 * the search index written or not. Prints one JSON line: messages/s and CPU µs a message.
 *
 *   node --import tsx bench/search-import.ts sqlite|postgres index|no-index <messages>
 */
import type { ImportMessage } from '../src/store/store.js';
import { FULL_SIZE, largeHubBatches } from './dataset.js';
import { dropScratchStore, type StoreKind, scratchStore } from './feed-common.js';

const [kind = 'sqlite', indexing = 'index', messagesText = '200000'] = process.argv.slice(2) as [
  StoreKind,
  string,
  string,
];
const messages = Number(messagesText);
const name = `import_${indexing.replace('-', '_')}_${process.pid}`;
await dropScratchStore(kind, name);
const store = scratchStore(kind, name, { searchIndex: indexing === 'index' });
try {
  await store.migrate();
  await store.hubs.upsert('1', {}, Date.now());
  // Made before the clock starts: only the import is timed.
  const batches: ImportMessage[][] = [];
  for await (const batch of largeHubBatches({ ...FULL_SIZE, messages })) batches.push(batch);
  async function* given() {
    yield* batches;
  }
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const outcome = await store.messages.importAll('1', given(), Date.now());
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  // CPU µs a message (this process, every thread): steadier than the rate on a shared machine.
  const cpuMicros = (cpu.user + cpu.system) / outcome.inserted;
  process.stdout.write(
    `${JSON.stringify({ inserted: outcome.inserted, seconds, perSecond: outcome.inserted / seconds, cpuMicros })}\n`,
  );
} finally {
  await store.close();
  await dropScratchStore(kind, name);
}
