/**
 * What every worker thread of the embedded store shares (the writer, sqlite.writer-thread.ts; the
 * answer threads, src/store/sqlite/answers/): how one starts, and how errors and values cross between threads.
 * Structured clone keeps an Error's message but not its `code` (which says 503 or 500), and turns a
 * Buffer into a plain Uint8Array: errors cross as SerializedError, values through `revive`.
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `entry` (a compiled `.js` module's URL). Under tsx (tests, development)
 * there is no `.js`: the `.ts` beside it runs, loaded through tsx's own hooks, which a worker
 * thread does not inherit on Node 20.
 */
export function startThread(entry: URL, workerData: unknown): Worker {
  const typescript = new URL(entry.href.replace(/\.js$/, '.ts'));
  if (fs.existsSync(entry) || !fs.existsSync(typescript)) return new Worker(entry, { workerData });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = JSON.stringify(typescript.href);
  return new Worker(`import(${tsx}).then(({ register }) => { register(); return import(${source}); })`, {
    eval: true,
    workerData,
  });
}

export interface SerializedError {
  name: string;
  message: string;
  code?: unknown;
  stack?: string | undefined;
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    return {
      name: error.name,
      message: error.message,
      code: (error as { code?: unknown }).code,
      stack: error.stack,
    };
  }
  return { name: 'Error', message: String(error) };
}

export function deserializeError(error: SerializedError): Error {
  const result = new Error(error.message);
  result.name = error.name;
  if (error.code !== undefined) Object.assign(result, { code: error.code });
  // Where it was thrown (on the other thread), then where it was awaited.
  if (error.stack) result.stack = `${error.stack}\n    --- on its thread, awaited at ---\n${result.stack}`;
  return result;
}

/** Buffers back from the Uint8Arrays structured clone made of them, in any plain value. */
export function revive(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) {
    return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = revive(value[i]);
    return value;
  }
  if (value instanceof Map) {
    for (const [key, item] of value) value.set(key, revive(item));
    return value;
  }
  if (Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = revive(record[key]);
  }
  return value;
}
