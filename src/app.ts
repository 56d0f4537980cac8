/**
 * buildApp(deps): the composition root. It makes the services, hands them to each module's routes
 * and wires the error answers (lib/framework-errors.ts); it never listens (server.ts does). Route
 * order matters: the docs first (the document is made of the routes registered after them), the
 * client API next, health last (the document lists operations in registration order).
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import { settingDefault } from './config.js';
import {
  createClientErrorWriter,
  createErrorAnswerer,
  createFrameworkErrorAnswerer,
  sendError,
} from './lib/framework-errors.js';
import { httpErrors } from './lib/http.errors.js';
import { NO_STORE } from './lib/http.js';
import { PathMethods } from './lib/methods.js';
import type { Metrics } from './lib/metrics.js';
import { packageVersion } from './lib/package-root.js';
import { logIfAborted, OneLinePerRequest } from './lib/request-log.js';
import { schemaOptions } from './lib/schema-compilers.js';
import type { SecretBox } from './lib/secrets.js';
import { TrafficMeter } from './lib/traffic.js';
import { AccountConversations } from './modules/account/account.conversations.js';
import { registerAccountRoutes } from './modules/account/account.routes.js';
import { AccountService } from './modules/account/account.usecases.js';
import { AccountWebhooks } from './modules/account/account.webhooks.js';
import { AuditRecorder } from './modules/audit/audit.recorder.js';
import { ChangesPruner } from './modules/changes/changes.pruner.js';
import { registerChangesRoutes } from './modules/changes/changes.routes.js';
import { registerContactRoutes } from './modules/contacts/contacts.routes.js';
import { registerContentRoutes } from './modules/content/content.routes.js';
import { ContentWorker, PG_DOWNLOAD_MBPS } from './modules/content/content.worker.js';
import { registerDocsRoutes } from './modules/docs/docs.routes.js';
import { registerHealthRoutes } from './modules/health/health.routes.js';
import { registerHomeRoutes } from './modules/home/home.routes.js';
import { HubService } from './modules/hubs/hubs.usecases.js';
import { HubspotConnections } from './modules/hubspot/hubspot.connect.js';
import { HubspotPublisher } from './modules/hubspot/hubspot.publisher.js';
import { registerHubspotRoutes } from './modules/hubspot/hubspot.routes.js';
import { registerIngestRoutes } from './modules/ingest/ingest.routes.js';
import { IngestService } from './modules/ingest/ingest.usecases.js';
import { createAuthorizeDeps } from './modules/keys/keys.authorize.js';
import { RateLimiter } from './modules/keys/keys.ratelimit.js';
import { KeyService } from './modules/keys/keys.usecases.js';
import { registerMcpRoutes } from './modules/mcp/mcp.routes.js';
import { MCP_JA, mcpToolList } from './modules/mcp/mcp.server.js';
import { AnswerCache, watchHistory } from './modules/messages/messages.cache.js';
import { answerMalformedUrl, registerMessagesRoutes } from './modules/messages/messages.routes.js';
import { answersEncodedHere } from './modules/messages/messages.usecases.js';
import { registerMetricsRoutes } from './modules/metrics/metrics.routes.js';
import { ReportColumns } from './modules/reports/reports.columns.js';
import { registerReportRoutes } from './modules/reports/reports.routes.js';
import { RetentionWorker } from './modules/retention/retention.worker.js';
import { registerSearchRoutes } from './modules/search/search.routes.js';
import { registerSendRoutes } from './modules/sends/sends.routes.js';
import { SendService } from './modules/sends/sends.usecases.js';
import { SendWorker } from './modules/sends/sends.worker.js';
import { registerWebhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { WebhookService } from './modules/webhooks/webhooks.usecases.js';
import { WebhookWorker } from './modules/webhooks/webhooks.worker.js';
import type { ContentStore } from './store/content/content-store.js';
import { AnswerThreads } from './store/sqlite/answers/answers.threads.js';
import { SqliteStore } from './store/sqlite/sqlite.store.js';
import { type AnswerSource, isStoreUnavailable, type Store } from './store/store.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface AppDeps {
  store: Store;
  secrets: SecretBox;
  logger: FastifyBaseLogger;
  clock?: () => number;
  /**
   * A connection with no traffic either way for this long is closed: a client that stops reading an
   * export does not hold its cursor (and its database snapshot) forever.
   */
  idleTimeoutMs?: number;
  /** Headers not all received after this long: the request is refused (408) and the connection closed. */
  headersTimeoutMs?: number;
  /** Headers and body not all received after this long: likewise. */
  requestTimeoutMs?: number;
  /** Redis for rate-limit counters shared by several nodes; in this process when unset. */
  redisUrl?: string | undefined;
  /** Base URL of LINE's Messaging API, for display-name look-ups (tests point it at a fake). */
  lineApiBaseUrl?: string;
  /** Base URL clients reach the API at (CHATLOG_PUBLIC_URL), for the account screen's examples. */
  publicUrl?: string | undefined;
  /** Told of every route as it is registered (the OpenAPI test compares them with the document). */
  onRoute?: ((route: RouteOptions) => void) | undefined;
  /** Metrics for /metrics; unset: no /metrics route and nothing recorded. */
  metrics?: Metrics | undefined;
  /** Bearer token /metrics requires, when set. */
  metricsToken?: string | undefined;
  /** Memory for recent small answers (AnswerCache); 0 turns it off. */
  answerCacheBytes?: number;
  /** The answer cache itself, made by the caller (a test that looks into it); unset: made here. */
  answerCache?: AnswerCache | undefined;
  /**
   * The embedded store's answer threads (src/store/sqlite/answers/): threads that read and encode the read
   * API's answers off the event loop; default one per core. PostgreSQL's answers are encoded here.
   */
  answerThreads?: number;
  /** Where the read API's answer bytes come from, instead of the above (a test counts the reads). */
  answers?: AnswerSource;
  /** Longer than any request line Node accepts, so over-long ids still reach the contract checks. */
  maxParamLength?: number;
  /** CHATLOG_CHANGES_KEEP_DAYS: how long the feed keeps deletions and contact changes. */
  changesKeepDays?: number;
  /** CHATLOG_AUDIT_KEEP_DAYS: how long the audit keeps its records. */
  auditKeepDays?: number;
  /** CHATLOG_MCP_MAX_CHARS: the longest result of an MCP tool. */
  mcpMaxChars?: number;
  /** CHATLOG_WEBHOOK_ALLOW_PRIVATE: outgoing webhooks may go to private and loopback addresses. */
  webhookAllowPrivate?: boolean;
  /** Where downloaded media are kept (CONTRACT §11); closed by whoever opened it. */
  blobs: ContentStore;
  /** LINE_API_DATA_BASE_URL: where media are downloaded from (tests point it at a fake). */
  lineApiDataBaseUrl?: string;
  /** CHATLOG_DOWNLOAD_CONCURRENCY: media downloads at once in this process (0: none). */
  downloadConcurrency?: number;
  /** CHATLOG_DOWNLOAD_MBPS: MB/s all downloads write together (0: no limit); default by content store. */
  downloadMbps?: number;
  /** CHATLOG_HUBSPOT_CLIENT_SECRET: checks HubSpot's webhook signatures; unset, they are all refused. */
  hubspotClientSecret?: string | undefined;
  /** CHATLOG_HUBSPOT_CLIENT_ID: with the secret, connected hubs are published to HubSpot (§18). */
  hubspotClientId?: string | undefined;
  /** HUBSPOT_API_BASE_URL. */
  hubspotApiBaseUrl?: string;
  /** HUBSPOT_APP_BASE_URL: HubSpot's authorize page. */
  hubspotAppBaseUrl?: string;
  /** CHATLOG_WEBHOOK_TIMEOUT_MS: an outgoing delivery not answered 2xx within this is retried. */
  webhookTimeoutMs?: number;
  /** CHATLOG_SEND_TIMEOUT_MS: a push to LINE not answered within this is tried again. */
  sendTimeoutMs?: number;
  /** The messages reports count (server.ts makes them of CHATLOG_REPORTS_MEMORY_MB); else the default's. */
  reports?: ReportColumns;
  /** Runs this node's workers (webhook deliveries, media downloads, pruning) while the app listens; default true. */
  runWorkers?: boolean;
}

export interface App {
  app: FastifyInstance;
  /** The read API's answers: `start()` once listening, so the first answer does not wait for a thread. */
  answers: AnswerSource;
  keys: KeyService;
  hubs: HubService;
  rateLimiter: RateLimiter;
  webhooks: WebhookService;
}

export function buildApp(deps: AppDeps): App {
  const clock = deps.clock ?? Date.now;
  const keys = new KeyService(deps.store, deps.secrets, clock);
  const hubs = new HubService(deps.store, deps.secrets, clock);
  const rateLimiter = new RateLimiter({ redisUrl: deps.redisUrl, log: deps.logger });
  const methods = new PathMethods();
  // SQLite's answers and feed pages are read and encoded on threads of their own (src/store/sqlite/answers/).
  const sqlite = !deps.answers && deps.store instanceof SqliteStore ? deps.store : undefined;
  const threads = sqlite
    ? new AnswerThreads(
        { file: sqlite.file },
        deps.answerThreads ?? availableParallelism(),
        answersEncodedHere(sqlite),
        sqlite.changes,
        (hubId) => sqlite.contactIdRange(hubId),
      )
    : undefined;
  const answers = deps.answers ?? threads ?? answersEncodedHere(deps.store);
  const cache =
    deps.answerCache ?? new AnswerCache(deps.answerCacheBytes ?? settingDefault('answerCacheBytes'));
  const messagesDeps = {
    store: deps.store,
    answers,
    cache,
    authorize: createAuthorizeDeps({ keys, hubs, rateLimiter }),
    methods,
  };
  const answerError = createErrorAnswerer(isStoreUnavailable);

  const requestTimeout = deps.requestTimeoutMs ?? settingDefault('requestTimeoutMs');
  const headersTimeout = Math.min(
    deps.headersTimeoutMs ?? settingDefault('headersTimeoutMs'),
    requestTimeout,
  );
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger,
    logController: new OneLinePerRequest(),
    routerOptions: {
      ignoreTrailingSlash: true,
      maxParamLength: deps.maxParamLength ?? 65_536,
    },
    return503OnClosing: true,
    // A request id from the client (or the proxy before it) is kept when it looks like one, so a
    // request can be followed across systems; otherwise chatlog makes one. Answered in X-Request-Id,
    // logged as reqId.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ...schemaOptions,
    connectionTimeout: deps.idleTimeoutMs ?? settingDefault('idleTimeoutMs'),
    // A client that sends its request a byte at a time is not idle, so the idle timeout alone would
    // let it hold a connection for ever: the request must arrive whole within these limits (Node
    // checks them every connectionsCheckingInterval).
    requestTimeout,
    http: {
      headersTimeout,
      requestTimeout,
      connectionsCheckingInterval: Math.max(250, Math.floor(headersTimeout / 4)),
    },
    clientErrorHandler: createClientErrorWriter(deps.logger),
    // A malformed path (bad percent-encoding) still gets the contract's answer.
    frameworkErrors: createFrameworkErrorAnswerer(
      (request, reply) => answerMalformedUrl(request, reply, messagesDeps),
      answerError,
    ),
  });
  if (deps.onRoute) app.addHook('onRoute', deps.onRoute);
  // First: the document is made of the schemas of the routes registered after it.
  registerDocsRoutes(app, {
    publicUrl: deps.publicUrl,
    methods,
    tools: { tools: mcpToolList(), ja: MCP_JA },
  });

  // How busy clients keep the process, so background work (webhook deliveries) yields to them.
  const traffic = new TrafficMeter();
  app.addHook('onRequest', async (request, reply) => {
    const closeWrite = traffic.arrived(request.method === 'POST');
    if (closeWrite) reply.raw.once('close', closeWrite);
    // No shared or browser cache keeps an answer of chatlog's, errors included (CONTRACT §3); the
    // routes of public documents (the docs, the screen's assets) say otherwise themselves.
    reply.header('X-Request-Id', request.id).header('Cache-Control', NO_STORE);
    logIfAborted(request, reply);
    // The audit's slot (CONTRACT §13): the key check fills it on the API's keyed endpoints.
    if (request.url.startsWith('/api/'))
      request.audit = { bytesAtStart: request.raw.socket?.bytesWritten ?? 0 };
  });
  const audit = new AuditRecorder({
    store: deps.store,
    log: app.log,
    clock,
    keepDays: deps.auditKeepDays ?? settingDefault('auditKeepDays'),
  });
  app.decorateRequest('audit', null);
  app.addHook('onResponse', async (request, reply) => audit.onResponse(request, reply));
  app.addHook('onReady', async () => audit.start());
  app.addHook('onClose', () => audit.stop());
  app.addHook('onClose', async () => answers.close?.());
  // What an unsend, an erasure or retention deleted does not stay in the answer cache.
  const stopWatchingHistory = cache.enabled
    ? watchHistory(
        cache,
        (listener) => deps.store.changes.onChange(listener),
        async (hubId) => (await deps.store.changes.position(hubId))?.historyVersion,
        (error) => app.log.warn({ err: error }, "answer cache: a hub's history version could not be read"),
      )
    : () => undefined;
  app.addHook('onClose', () => stopWatchingHistory());
  const metrics = deps.metrics;
  if (metrics) registerMetricsRoutes(app, { metrics, token: deps.metricsToken });
  app.setErrorHandler((error, _request, reply) => answerError(error, reply));
  // A path of ours with a method no route lists (TRACE, PROPFIND, ...) is 405, not 404.
  app.setNotFoundHandler((request, reply) => {
    const path = (request.raw.url ?? '').split('?')[0] ?? '';
    return sendError(reply, methods.refusalFor(path) ?? httpErrors.notFound());
  });

  registerMessagesRoutes(app, messagesDeps);
  // Held long polls answer at once when the server begins to stop, so they do not hold it up.
  const stopping = new AbortController();
  app.addHook('preClose', async () => stopping.abort());
  registerChangesRoutes(app, {
    store: deps.store,
    authorize: messagesDeps.authorize,
    keepDays: deps.changesKeepDays ?? settingDefault('changesKeepDays'),
    methods,
    stopping: stopping.signal,
    feed: threads,
  });
  registerSearchRoutes(app, { store: deps.store, authorize: messagesDeps.authorize, methods });
  const reports = deps.reports ?? ReportColumns.withMemory(deps.store, settingDefault('reportsMemoryMb'));
  registerReportRoutes(app, { reports, authorize: messagesDeps.authorize, methods });
  const changesKeepDays = deps.changesKeepDays ?? settingDefault('changesKeepDays');
  registerMcpRoutes(app, {
    tools: {
      store: deps.store,
      search: { store: deps.store, authorize: messagesDeps.authorize },
      changes: { store: deps.store, authorize: messagesDeps.authorize, keepDays: changesKeepDays },
      maxChars: deps.mcpMaxChars ?? settingDefault('mcpMaxChars'),
      version: packageVersion(),
      clock,
      audit: (record) => audit.record(record),
      onFailure: (tool, error) => app.log.error({ err: error, tool }, 'an MCP tool failed'),
    },
    authorize: messagesDeps.authorize,
    methods,
    publicUrl: deps.publicUrl,
    onError: (error) => app.log.warn({ err: error }, 'MCP: a request could not be served'),
  });
  const ingest = new IngestService({
    store: deps.store,
    secrets: deps.secrets,
    log: app.log,
    lineApiBaseUrl: deps.lineApiBaseUrl ?? settingDefault('lineApiBaseUrl'),
    clock,
    onStored: metrics ? (source, count) => metrics.stored(source, count) : undefined,
    onWebhookRefused: metrics ? (reason) => metrics.webhookRefused(reason) : undefined,
  });
  registerIngestRoutes(app, { ingest, authorize: messagesDeps.authorize, methods });
  const policy = { allowPrivate: deps.webhookAllowPrivate ?? settingDefault('webhookAllowPrivate') };
  const worker = new WebhookWorker({
    store: deps.store,
    secrets: deps.secrets,
    policy,
    log: app.log,
    timeoutMs: deps.webhookTimeoutMs ?? settingDefault('webhookTimeoutMs'),
    clock,
    busy: () => traffic.busy(),
  });
  const webhooks = new WebhookService({
    store: deps.store,
    secrets: deps.secrets,
    policy,
    clock,
    onWork: (endpointId) => worker.kick(endpointId),
  });
  registerWebhookRoutes(app, { webhooks, authorize: messagesDeps.authorize, methods });
  registerContactRoutes(app, { store: deps.store, authorize: messagesDeps.authorize, methods, clock });
  const sendWorker = new SendWorker({
    store: deps.store,
    secrets: deps.secrets,
    log: app.log,
    lineApiBaseUrl: deps.lineApiBaseUrl ?? settingDefault('lineApiBaseUrl'),
    timeoutMs: deps.sendTimeoutMs ?? settingDefault('sendTimeoutMs'),
    clock,
    onOutcome: metrics ? (outcome) => metrics.sent(outcome) : undefined,
  });
  const hubspotClient =
    deps.hubspotClientId && deps.hubspotClientSecret
      ? { clientId: deps.hubspotClientId, clientSecret: deps.hubspotClientSecret }
      : undefined;
  const sends = new SendService({ store: deps.store, clock, onAccepted: () => sendWorker.kick() });
  registerSendRoutes(app, { sends, authorize: messagesDeps.authorize, methods });
  registerHubspotRoutes(app, {
    store: deps.store,
    sends,
    clientSecret: deps.hubspotClientSecret,
    publicUrl: deps.publicUrl,
    methods,
    clock,
  });
  registerContentRoutes(app, {
    store: deps.store,
    blobs: deps.blobs,
    authorize: messagesDeps.authorize,
    clock,
    methods,
  });
  if (deps.runWorkers ?? true) {
    const downloads = new ContentWorker({
      store: deps.store,
      blobs: deps.blobs,
      secrets: deps.secrets,
      log: app.log,
      lineDataBaseUrl: deps.lineApiDataBaseUrl ?? settingDefault('lineApiDataBaseUrl'),
      concurrency: deps.downloadConcurrency ?? settingDefault('downloadConcurrency'),
      bytesPerSecond: 1e6 * (deps.downloadMbps ?? (deps.blobs.kind === 'postgres' ? PG_DOWNLOAD_MBPS : 0)),
      busy: () => traffic.busy(),
      clock,
      onOutcome: metrics ? (outcome, bytes) => metrics.downloaded(outcome, bytes) : undefined,
    });
    const pruner = new ChangesPruner({
      store: deps.store,
      keepDays: deps.changesKeepDays ?? settingDefault('changesKeepDays'),
      log: app.log,
      clock,
    });
    const retention = new RetentionWorker({ store: deps.store, log: app.log, clock, metrics });
    const publisher = hubspotClient
      ? new HubspotPublisher({
          store: deps.store,
          secrets: deps.secrets,
          log: app.log,
          apiBaseUrl: deps.hubspotApiBaseUrl ?? settingDefault('hubspotApiBaseUrl'),
          client: hubspotClient,
          clock,
          onPublished: metrics ? () => metrics.hubspotPublished() : undefined,
        })
      : undefined;
    app.addHook('onReady', async () => {
      worker.start();
      sendWorker.start();
      pruner.start();
      retention.start();
      publisher?.start();
      if ((deps.downloadConcurrency ?? settingDefault('downloadConcurrency')) > 0) downloads.start();
    });
    app.addHook('preClose', async () => {
      await Promise.all([
        worker.stop(),
        sendWorker.stop(),
        pruner.stop(),
        downloads.stop(),
        retention.stop(),
        publisher?.stop(),
      ]);
    });
  }
  const accounts = new AccountService({
    store: deps.store,
    hubs,
    keys,
    secrets: deps.secrets,
    rateLimiter,
    clock,
  });
  registerAccountRoutes(app, {
    accounts,
    publicUrl: deps.publicUrl,
    methods,
    webhooks: new AccountWebhooks(webhooks),
    conversations: new AccountConversations({ store: deps.store, blobs: deps.blobs, clock, sends, reports }),
    hubspot: new HubspotConnections({
      store: deps.store,
      secrets: deps.secrets,
      apiBaseUrl: deps.hubspotApiBaseUrl ?? settingDefault('hubspotApiBaseUrl'),
      appBaseUrl: deps.hubspotAppBaseUrl ?? settingDefault('hubspotAppBaseUrl'),
      client: hubspotClient,
      clock,
    }),
  });
  registerHomeRoutes(app, methods);
  // Last, so the document lists the client API first.
  registerHealthRoutes(app, { ready: () => deps.store.ready() });
  app.addHook('onClose', () => rateLimiter.close());

  // An idle connection (no bytes either way for idleTimeoutMs, e.g. a client that stopped reading
  // an export) is closed; Node would not do it on its own while a response is in progress.
  app.server.on('timeout', (socket: import('node:net').Socket) => socket.destroy());

  return { app, answers, keys, hubs, rateLimiter, webhooks };
}
