/**
 * buildApp(deps): the HTTP application, its modules and its one error handler. It never
 * listens; server.ts does. Every thrown error becomes the contract's JSON error body.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
  type RouteOptions,
} from 'fastify';
import { parseTimestamp } from './lib/calendar.js';
import { AppError } from './lib/errors.js';
import { httpErrors } from './lib/http.errors.js';
import { JSON_TYPE, NO_STORE } from './lib/http.js';
import type { Metrics } from './lib/metrics.js';
import { beforeAnyRouteResponses, unavailableResponse, validationErrorToAppError } from './lib/schemas.js';
import type { SecretBox } from './lib/secrets.js';
import { registerAccountRoutes } from './modules/account/account.routes.js';
import { AccountService } from './modules/account/account.usecases.js';
import { registerDocsRoutes } from './modules/docs/docs.routes.js';
import { healthErrors } from './modules/health/health.errors.js';
import { registerHomeRoutes } from './modules/home/home.routes.js';
import { HubService } from './modules/hubs/hubs.usecases.js';
import { registerIngestRoutes } from './modules/ingest/ingest.routes.js';
import { IngestService } from './modules/ingest/ingest.usecases.js';
import { createAuthorizeDeps } from './modules/keys/keys.authorize.js';
import { RateLimiter } from './modules/keys/keys.ratelimit.js';
import { KeyService } from './modules/keys/keys.usecases.js';
import { AnswerCache } from './modules/messages/messages.cache.js';
import { messageErrors } from './modules/messages/messages.errors.js';
import { answerMessages, registerMessagesRoutes } from './modules/messages/messages.routes.js';
import { metricsErrors } from './modules/metrics/metrics.errors.js';
import { isStoreUnavailable, type Store } from './store/store.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Resolved from fastify's own folder: they are its dependencies, not ours.
const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));

type Validate = ((data: unknown) => unknown) & { errors?: unknown };

/**
 * Route schemas validate with Fastify's own ajv compiler, loaded when a request first needs it
 * rather than at start (loading it costs ~60 ms of every start, and most requests never need it:
 * the read API and the webhook check in their own order). Answers are written by chatlog (most
 * are streamed), so response schemas only document them: plain JSON.stringify serializes.
 */
const lazySchemaCompilers = {
  buildValidator: (externalSchemas: unknown, ajvOptions: unknown) => {
    let compile: ((route: unknown) => Validate) | undefined;
    return (route: unknown): Validate => {
      let validate: Validate | undefined;
      const lazily: Validate = (data) => {
        compile ??= requireFromFastify('@fastify/ajv-compiler')()(externalSchemas, ajvOptions) as (
          route: unknown,
        ) => Validate;
        validate ??= compile(route);
        const valid = validate(data);
        lazily.errors = validate.errors;
        return valid;
      };
      return lazily;
    };
  },
  buildSerializer: () => () => (data: unknown) => JSON.stringify(data),
};

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
  /** Longer than any request line Node accepts, so over-long ids still reach the contract checks. */
  maxParamLength?: number;
}

export interface App {
  app: FastifyInstance;
  keys: KeyService;
  hubs: HubService;
  rateLimiter: RateLimiter;
}

/** The paths chatlog serves and the methods each allows, for 405 answers to any other method. */
const ALLOWED_METHODS: ReadonlyArray<[RegExp, string]> = [
  [/^\/api\/line\/[^/]*\/messages\/?$/, 'GET, HEAD'],
  [/^\/webhooks\/line\/[^/]+\/?$/, 'POST'],
  [/^\/ingest\/line\/[^/]+\/messages\/?$/, 'POST'],
  [/^\/ingest\/line\/[^/]+\/contacts\/[^/]+\/?$/, 'PUT'],
  [/^\/account\/?$/, 'GET, HEAD'],
  [/^\/account\/(sign-in|sign-out|hubs\/[^/]+\/keys|keys\/[^/]+\/(revoke|reveal))\/?$/, 'POST'],
  [/^\/(docs|account\/assets\/[^/]+)\/?$/, 'GET, HEAD'],
  [/^\/$/, 'GET, HEAD'],
];

const HEALTH_SCHEMA = {
  operationId: 'health',
  summary: 'The process runs',
  description: 'Liveness: 200 while the process runs, whatever the store does.',
  tags: ['health'],
  response: {
    200: { description: 'Alive.', type: 'object', properties: { status: { const: 'ok' } } },
    ...beforeAnyRouteResponses,
  },
} as const;

const READY_SCHEMA = {
  operationId: 'ready',
  summary: 'The store answers and its schema is current',
  description: 'Readiness: 503 while the store does not answer (route traffic elsewhere), else 200.',
  tags: ['health'],
  response: {
    200: { description: 'Ready for traffic.', type: 'object', properties: { status: { const: 'ready' } } },
    ...beforeAnyRouteResponses,
    503: unavailableResponse,
  },
} as const;

/** Requests whose line is written (so an aborted answer is not logged twice). */
const LOGGED = new WeakSet<FastifyReply>();

/**
 * One log line per request, when it ends: reqId, method, URL (apikey redacted), remote address,
 * status and time taken. Fastify's own pair (incoming, then completed) doubles the log volume.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    LOGGED.add(reply);
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}

function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  // Also for errors raised before the request's hooks ran (a malformed URL).
  return reply
    .code(error.status)
    .header('Cache-Control', NO_STORE)
    .headers(error.headers)
    .type(JSON_TYPE)
    .send(error.toBody());
}

const BY_FRAMEWORK_CODE: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: httpErrors.bodyTooLarge,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: httpErrors.bodyLengthMismatch,
  FST_ERR_CTP_EMPTY_JSON_BODY: httpErrors.bodyEmpty,
  FST_ERR_CTP_INVALID_JSON_BODY: httpErrors.bodyNotJson,
};

/** Fastify's own 4xx errors, translated to the contract's codes. */
function translateFrameworkError(error: FastifyError): AppError | undefined {
  const status = error.statusCode ?? 500;
  if (status >= 500) return undefined;
  // Fastify's statuses for these codes are the table's (413, 400, 400, 400).
  const known = error.code ? BY_FRAMEWORK_CODE[error.code] : undefined;
  if (known) return known();
  // Every endpoint of the API that takes a body takes JSON.
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) return httpErrors.notJsonBody();
  if (status === 413) return httpErrors.bodyTooLarge();
  if (status === 404) return httpErrors.notFound();
  if (status === 405) return httpErrors.methodNotAllowedHere();
  return httpErrors.notUnderstood(status);
}

export function buildApp(deps: AppDeps): App {
  const clock = deps.clock ?? Date.now;
  const keys = new KeyService(deps.store, deps.secrets, clock);
  const hubs = new HubService(deps.store, deps.secrets, clock);
  const rateLimiter = new RateLimiter({ redisUrl: deps.redisUrl, log: deps.logger });
  const routeDeps = {
    store: deps.store,
    keys,
    hubs,
    rateLimiter,
    cache: new AnswerCache(deps.answerCacheBytes),
  };
  const checkDeps = createAuthorizeDeps(routeDeps);

  const requestTimeout = deps.requestTimeoutMs ?? 120_000;
  const headersTimeout = Math.min(deps.headersTimeoutMs ?? 15_000, requestTimeout);
  const app = Fastify({
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
    // Typed by Fastify as ajv's own factories; these answer the same calls (see above).
    schemaController: {
      compilersFactory: lazySchemaCompilers as unknown as NonNullable<
        NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
      >,
    },
    // A number is not a string, and a field chatlog does not know is left alone.
    // A date-time is what chatlog can store: parseTimestamp's reading (seconds and a zone required).
    ajv: {
      // verbose: an error carries the value it refused, so an impossible day can be named as one.
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        allErrors: false,
        allowUnionTypes: true,
        verbose: true,
      },
      onCreate: (ajv: { addFormat(name: string, validate: (text: string) => boolean): unknown }) =>
        ajv.addFormat('date-time', (text) => parseTimestamp(text) !== undefined),
    },
    schemaErrorFormatter: validationErrorToAppError,
    connectionTimeout: deps.idleTimeoutMs ?? 60_000,
    // A client that sends its request a byte at a time is not idle, so the idle timeout alone would
    // let it hold a connection for ever: the request must arrive whole within these limits (Node
    // checks them every connectionsCheckingInterval).
    requestTimeout,
    http: {
      headersTimeout,
      requestTimeout,
      connectionsCheckingInterval: Math.max(250, Math.floor(headersTimeout / 4)),
    },
    // Requests Node's HTTP parser refuses (malformed, or headers over the size limit).
    clientErrorHandler: (error, socket) => {
      // Nothing can be said on a socket that is gone or already carries an answer.
      const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      if (!socket.writable || answering?.headersSent) return socket.destroy();
      const code = (error as NodeJS.ErrnoException).code;
      const [status, refusal] =
        code === 'HPE_HEADER_OVERFLOW'
          ? ['431 Request Header Fields Too Large', httpErrors.headersTooLarge()]
          : code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? ['408 Request Timeout', httpErrors.requestTimeout()]
            : ['400 Bad Request', httpErrors.notHttp()];
      deps.logger.info(
        { code, status: refusal.status, remoteAddress: socket.remoteAddress },
        'request refused before it was read',
      );
      const body = JSON.stringify(refusal.toBody());
      // The answer to a HEAD request has no body, even this one (a client would read it as garbage).
      const rawPacket = (error as unknown as { rawPacket?: Buffer }).rawPacket;
      const head = rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
      // Closed, not half-closed: a client that keeps its side open must not keep the connection.
      socket.end(
        `HTTP/1.1 ${status}\r\n` +
          `Content-Type: ${JSON_TYPE}\r\nCache-Control: ${NO_STORE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${head ? '' : body}`,
        () => socket.destroy(),
      );
    },
    // A malformed path (bad percent-encoding) still gets the contract's answer.
    frameworkErrors: (error, request, reply) => {
      const path = (request.raw.url ?? '').split('?')[0] ?? '';
      const match = /^\/api\/line\/([^/]*)\/messages\/?$/.exec(path);
      if (match && error.code === 'FST_ERR_BAD_URL') {
        if (request.raw.method !== 'GET' && request.raw.method !== 'HEAD')
          return sendError(reply, messageErrors.methodNotAllowed());
        return answerMessages(request, reply, match[1] ?? '', checkDeps, deps.store, routeDeps.cache).catch(
          (e: unknown) => handleError(e, reply),
        );
      }
      const translated = translateFrameworkError(error) ?? httpErrors.notUnderstood();
      return sendError(reply, translated);
    },
  });
  if (deps.onRoute) app.addHook('onRoute', deps.onRoute);
  // First: the document is made of the schemas of the routes registered after it.
  registerDocsRoutes(app, { publicUrl: deps.publicUrl });

  const handleError = (error: unknown, reply: FastifyReply): FastifyReply => {
    if (error instanceof AppError) return sendError(reply, error);
    const translated = translateFrameworkError(error as FastifyError);
    if (translated) return sendError(reply, translated);
    if (isStoreUnavailable(error)) {
      reply.log.warn({ err: error }, 'store unavailable');
      return sendError(reply, httpErrors.storeUnavailable());
    }
    reply.log.error({ err: error }, 'unexpected fault');
    return sendError(reply, httpErrors.internal());
  };

  app.addHook('onRequest', async (request, reply) => {
    // No shared or browser cache keeps an answer of chatlog's, errors included (CONTRACT §3); the
    // routes of public documents (the docs, the screen's assets) say otherwise themselves.
    reply.header('X-Request-Id', request.id).header('Cache-Control', NO_STORE);
    // An answer cut short (the client left, the idle timeout, a shutdown) gets its line too.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished && !LOGGED.has(reply)) {
        request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request aborted');
      }
    });
  });

  const metrics = deps.metrics;
  if (metrics) {
    app.addHook('onResponse', async (request, reply) => {
      metrics.request(
        request.routeOptions.url ?? 'unmatched',
        request.method,
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
    });
    const token = deps.metricsToken ? Buffer.from(`Bearer ${deps.metricsToken}`) : undefined;
    app.get('/metrics', async (request, reply) => {
      if (token) {
        const given = Buffer.from(request.headers.authorization ?? '');
        if (given.length !== token.length || !timingSafeEqual(given, token)) {
          return sendError(reply, metricsErrors.tokenRequired());
        }
      }
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).send(body);
    });
  }
  app.setErrorHandler((error, _request, reply) => handleError(error, reply));
  // A path of ours with a method no route lists (TRACE, PROPFIND, ...) is 405, not 404.
  app.setNotFoundHandler((request, reply) => {
    const path = (request.raw.url ?? '').split('?')[0] ?? '';
    const allowed = ALLOWED_METHODS.find(([pattern]) => pattern.test(path))?.[1];
    if (allowed) {
      return sendError(reply, httpErrors.methodNotAllowed(allowed));
    }
    return sendError(reply, httpErrors.notFound());
  });

  registerMessagesRoutes(app, routeDeps, checkDeps);
  const ingest = new IngestService({
    store: deps.store,
    secrets: deps.secrets,
    log: app.log,
    lineApiBaseUrl: deps.lineApiBaseUrl ?? 'https://api.line.me',
    clock,
    onStored: metrics ? (source, count) => metrics.stored(source, count) : undefined,
    onWebhookRefused: metrics ? (reason) => metrics.webhookRefused(reason) : undefined,
  });
  registerIngestRoutes(app, { ingest, authorize: checkDeps });
  const accounts = new AccountService({
    store: deps.store,
    hubs,
    keys,
    secrets: deps.secrets,
    rateLimiter,
    clock,
  });
  registerAccountRoutes(app, { accounts, publicUrl: deps.publicUrl });
  registerHomeRoutes(app);
  // Last, so the document lists the client API first.
  void app.register(async (scope) => {
    scope.get('/healthz', { schema: HEALTH_SCHEMA }, async (_request, reply) =>
      reply.type(JSON_TYPE).send({ status: 'ok' }),
    );
    scope.get('/readyz', { schema: READY_SCHEMA }, async (_request, reply) => {
      const ready = await deps.store.ready().catch(() => false);
      if (!ready) {
        return sendError(reply, healthErrors.notReady());
      }
      return reply.type(JSON_TYPE).send({ status: 'ready' });
    });
  });
  app.addHook('onClose', () => rateLimiter.close());

  // An idle connection (no bytes either way for idleTimeoutMs, e.g. a client that stopped reading
  // an export) is closed; Node would not do it on its own while a response is in progress.
  app.server.on('timeout', (socket: import('node:net').Socket) => socket.destroy());

  return { app, keys, hubs, rateLimiter };
}
