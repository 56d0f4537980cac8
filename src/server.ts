/**
 * Runs the HTTP server: listen, record key use in the background, and on SIGINT/SIGTERM stop
 * accepting, let in-flight answers finish (up to the grace period), close the store, exit 0.
 */
import cluster from 'node:cluster';
import type { DestinationStream } from 'pino';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import { buildApp } from './app.js';
import { appSettings, type Config, metricsEnabled } from './config.js';
import { describeStartFailure } from './lib/errors.js';
import { bufferedStdout, createLogger } from './lib/logger.js';
import { Metrics } from './lib/metrics.js';
import { createSecretBox, loadServerSecret } from './lib/secrets.js';
import { ReportColumns } from './modules/reports/reports.columns.js';
import { openContentStore } from './store/content/open.js';
import { openStore } from './store/open.js';

const LAST_USED_FLUSH_MS = 15_000;
const LATER_START_DELAY_MS = 500;
const START_FAILED = 'chatlog:start-failed';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startServer(
  config: Config,
  logDestination?: DestinationStream,
  options: { answerThreads?: number } = {},
): Promise<RunningServer> {
  const ownLog = logDestination ? undefined : bufferedStdout();
  const logger = createLogger(config.logLevel, logDestination ?? ownLog?.stream);
  const store = await openStore(
    config,
    (error) =>
      logger.warn(
        { err: { message: error.message, code: (error as NodeJS.ErrnoException).code } },
        'database connection lost',
      ),
    (error, groups) =>
      logger.warn(
        { err: { message: error.message, code: (error as NodeJS.ErrnoException).code }, groups },
        'PostgreSQL: the one-statement path for webhook messages failed; those groups went statement by statement',
      ),
  );
  const secrets = createSecretBox(loadServerSecret(config.secret, config.dataDir));
  const blobs = await openContentStore(config).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const reports = ReportColumns.withMemory(store, config.reportsMemoryMb);
  const metrics = metricsEnabled(config)
    ? new Metrics(() => store.poolState(), {
        downloadQueue: () => store.content.queueDepth(),
        contentBytes: () => blobs.totalBytes(),
        hubspot: () => store.hubspot.totals(Date.now()),
        reportMessagesHeld: () => reports.held,
      })
    : undefined;
  const { app, answers, keys, rateLimiter } = buildApp({
    reports,
    store,
    blobs,
    secrets,
    logger,
    ...appSettings(config),
    metrics,
    answerThreads: options.answerThreads,
  });

  const flushLastUsed = () =>
    keys.flushLastUsed().catch((error: unknown) => logger.warn({ err: error }, 'could not record key use'));
  const flusher = setInterval(flushLastUsed, LAST_USED_FLUSH_MS);
  flusher.unref();

  // Limits hold from the first request when Redis is up; a Redis that is down does not delay the start.
  await Promise.race([rateLimiter.connected(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // The port is taken, say: what the app started (its workers, their timers) stops with it.
    clearInterval(flusher);
    await app.close().catch(() => undefined);
    await blobs.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw error;
  }
  void store.warmUp();
  // The threads and prom-client load their code a moment later, so that they do not take the cores
  // from the first requests (answered on this thread meanwhile; a first write starts the writer at
  // once; what metrics count meanwhile is kept, and a scrape loads them at once).
  const later = setTimeout(() => {
    answers.start?.();
    void metrics?.load();
    // A rewrite of the search index after deletions that a crash or a stop cut short goes on.
    store.search
      .resumeCompaction()
      .catch((error: unknown) => logger.warn({ err: error }, 'could not look at the search index'));
  }, LATER_START_DELAY_MS).unref();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearInterval(flusher);
      clearTimeout(later);
      let graceOver = false;
      const grace = new Promise<void>((resolve) =>
        setTimeout(() => {
          graceOver = true;
          resolve();
        }, config.shutdownGraceMs).unref(),
      );
      await Promise.race([app.close(), grace]);
      // Answers still running after the grace period are cut, so the store can close.
      if (graceOver) app.server.closeAllConnections();
      await flushLastUsed();
      await blobs.close();
      await store.close();
      ownLog?.close();
    })();
    return closing;
  };
  return { url: `http://${host}:${port}`, port, close };
}

/**
 * `chatlog serve`. On PostgreSQL: one process, or a primary that keeps `workers` processes running.
 * On the embedded store, always one process, its one writer on a thread (sqlite.writer-thread.ts)
 * and `workers` threads reading and encoding answers (src/store/sqlite/answers/): processes of their own would
 * only fight over SQLite's one write lock.
 */
export async function serve(config: Config, workers: number): Promise<void> {
  const embedded = !config.databaseUrl;
  if (workers > 1 && !embedded && cluster.isPrimary) {
    // Workers without Redis share their rate-limit counters through the primary.
    new RateLimiterClusterMaster();
    for (let i = 0; i < workers; i++) cluster.fork();
    let stopping = false;
    const listening = new Set<number>();
    cluster.on('listening', (worker) => listening.add(worker.id));
    let failureTold = false;
    cluster.on('message', (_worker, message: { type?: string; message?: string }) => {
      if (message?.type === START_FAILED && !failureTold) {
        failureTold = true;
        process.stderr.write(`chatlog: error: ${message.message}\n`);
      }
    });
    cluster.on('exit', (worker, code) => {
      if (stopping || code === 0) return;
      if (!listening.has(worker.id)) {
        // It could not start (port taken, store unreachable...): it said why; do not loop on it.
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
        process.exitCode = 1;
        return;
      }
      process.stderr.write(`chatlog: worker ${worker.process.pid} exited with ${code}; starting another\n`);
      cluster.fork();
    });
    const stop = () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return;
  }
  let server: RunningServer;
  try {
    server = await startServer(config, undefined, embedded ? { answerThreads: workers } : {});
  } catch (error) {
    if (!cluster.isWorker) throw error;
    // The primary says why (once for all workers); the IPC channel would keep a worker alive: leave.
    process.send?.({ type: START_FAILED, message: describeStartFailure(error) }, undefined, {}, () =>
      process.exit(1),
    );
    return;
  }
  if (!cluster.isWorker || cluster.worker?.id === 1) {
    process.stderr.write(`chatlog: listening on ${server.url}\n`);
  }
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`chatlog: error: could not stop cleanly: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
