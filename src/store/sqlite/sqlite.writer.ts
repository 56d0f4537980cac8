/**
 * The writer thread's entry (sqlite.writer-thread.ts says why and how): a SqliteStore that writes
 * on this thread, and the loop that runs the main thread's calls on it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from './sqlite.store.js';
import { revive, serializeError } from './sqlite.thread.js';
import { Outbox, type WriterOptions, type WriterReply, type WriterRequest } from './sqlite.writer-thread.js';

const port = parentPort;
if (!port) throw new Error('sqlite.writer.js runs as a worker thread of the store');
const options = workerData as WriterOptions;
const store = new SqliteStore({
  dataDir: options.dataDir,
  searchIndex: options.searchIndex,
  writerThread: false,
});
// A result that cannot cross: that write fails with the error, the others of the turn go as they are.
const replies = new Outbox<WriterReply>(port, (reply, error) => {
  if ('id' in reply) port.postMessage([{ id: reply.id, error: serializeError(error) }]);
});
const post = (reply: WriterReply) => replies.push(reply);

store.changes.onChange((hubId) => post({ wake: hubId }));

async function run(method: string, args: unknown[]): Promise<unknown> {
  if (method === 'migrate') return store.migrate();
  if (method === 'close') return store.close();
  if (!store.writeMethods.has(method)) throw new Error(`the writer thread does not run ${method}`);
  const [group, name] = method.split('.') as [string, string];
  const methods = (store as unknown as Record<string, Record<string, (...values: unknown[]) => unknown>>)[
    group
  ];
  const fn = methods?.[name];
  if (typeof fn !== 'function') throw new Error(`the store has no ${method}`);
  return fn(...args);
}

port.on('message', (requests: WriterRequest[]) => {
  for (const request of requests) {
    run(request.method, revive(request.args) as unknown[]).then(
      (result) => {
        post({ id: request.id, result });
        if (request.method === 'close') {
          replies.flush();
          port.close();
        }
      },
      (error: unknown) => post({ id: request.id, error: serializeError(error) }),
    );
  }
});
