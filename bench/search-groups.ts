/**
 * What indexing costs live ingest's group commit, in one process without the server: a store of
 * 200,000 messages of the bench's large hub (imported), then 30,000 more, one message a request,
 * 32 requests at once (one group each), into SQLite without its writer thread (the thread runs the
 * same code). Prints messages/s and CPU µs a message (steadier than the rate on a shared machine).
 * For comparing two versions of the group's index writes (src/store/sql/ingest.ts applyGroup);
 * bench/search.ts measures the server's webhook ingest (Q5) with and without the index.
 *
 *   node --import tsx bench/search-groups.ts index|no-index
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import type { ImportMessage } from '../src/store/store.js';
import { FULL_SIZE, largeHubBatches } from './dataset.js';

const index = process.argv[2] !== 'no-index';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-bench-groups-'));
const store = new SqliteStore({ dataDir: dir, writerThread: false, searchIndex: index });
try {
  await store.migrate();
  await store.hubs.upsert('1', {}, Date.now());
  const all: ImportMessage[] = [];
  for await (const batch of largeHubBatches({ ...FULL_SIZE, messages: 230_000 })) all.push(...batch);
  async function* first() {
    for (let i = 0; i < 200_000; i += 5_000) yield all.slice(i, i + 5_000);
  }
  await store.messages.importAll('1', first(), Date.now());
  const live = all.slice(200_000);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < live.length; i += 32) {
    await Promise.all(
      live.slice(i, i + 32).map((m, j) =>
        store.messages.ingest(
          '1',
          [
            {
              kind: 'message',
              lineId: m.lineId,
              sender: m.sender,
              msg: m.msg,
              contentType: m.contentType,
              createdAt: m.createdAt,
              sourceId: `live:${i + j}`,
              sourceKind: 'user',
              sourceChatId: null,
            },
          ],
          Date.now(),
        ),
      ),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(
    `${JSON.stringify({ index, perSecond: live.length / seconds, cpuMicros: (cpu.user + cpu.system) / live.length })}\n`,
  );
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
