/** The one public operation: GET|HEAD /api/line/:hubId/messages (CONTRACT §1-3). */
import { PassThrough, pipeline, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../lib/framework-errors.js';
import {
  compressorInput,
  createCompressor,
  etagMatches,
  JSON_TYPE,
  negotiateEncoding,
  rawQueryOf,
  weakEtag,
} from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import type { AnswerCount, AnswerSource, Store } from '../../store/store.js';
import type { AnswerCache } from './messages.cache.js';
import type { CheckDeps } from './messages.checks.js';
import { messageErrors } from './messages.errors.js';
import { messagesRouteSchema } from './messages.schemas.js';
import { askMessages } from './messages.usecases.js';

export const MESSAGES_PATH = '/api/line/:hubId/messages';
/** Bumped whenever the answer's bytes change for the same data, so old ETags stop matching. */
const ANSWER_FORMAT = 1;

export interface MessagesRouteDeps {
  store: Pick<Store, 'messages'>;
  /** The answers' bytes (answersEncodedHere, or the answer threads of the embedded store). */
  answers: AnswerSource;
  cache: AnswerCache;
  authorize: CheckDeps;
  methods: PathMethods;
}

/** How long a request waits for the same answer another request is making (AnswerCache.pending). */
const WAIT_FOR_SAME_ANSWER_MS = 1_000;

/** Every answer on the read path, errors included, may differ by Accept-Encoding. */
const VARY = 'Accept-Encoding';

export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  app.route<{ Params: { hubId: string } }>({
    method: ['GET', 'HEAD'],
    url: MESSAGES_PATH,
    exposeHeadRoute: false,
    schema: messagesRouteSchema,
    // checkMessagesRequest checks in CONTRACT §1's order; a schema validator running first would not.
    validatorCompiler: checkedByHandler,
    handler: (request, reply) => answerMessages(request, reply, request.params.hubId, deps),
  });
  // Every other method: 405 before any check, and before any body is read.
  deps.methods.declare(app, {
    url: MESSAGES_PATH,
    allowed: ['GET', 'HEAD'],
    refuseByRoute: true,
    refusal: messageErrors.methodNotAllowed,
    emptySegments: true,
  });
}

const MALFORMED_MESSAGES_URL = /^\/api\/line\/([^/]*)\/messages\/?$/;

/**
 * A read API path Fastify cannot route (bad percent-encoding in the hub id) is still answered as
 * the route answers it: 405 for another method, else the checks in their order (the key first).
 * Undefined for any other path.
 */
export function answerMalformedUrl(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Omit<MessagesRouteDeps, 'methods'>,
): FastifyReply | Promise<FastifyReply> | undefined {
  const path = (request.raw.url ?? '').split('?')[0] ?? '';
  const match = MALFORMED_MESSAGES_URL.exec(path);
  if (!match) return undefined;
  if (request.raw.method !== 'GET' && request.raw.method !== 'HEAD') {
    return sendError(reply, messageErrors.methodNotAllowed());
  }
  return answerMessages(request, reply, match[1] ?? '', deps);
}

/**
 * The answer over HTTP: the use case says which rows (askMessages); this says how they are sent
 * (a weak ETag and 304, br/gzip/identity, HEAD without a body, small answers from memory, the rest
 * streamed with backpressure).
 */
async function answerMessages(
  request: FastifyRequest,
  reply: FastifyReply,
  hubId: string,
  deps: Omit<MessagesRouteDeps, 'methods'>,
): Promise<FastifyReply> {
  const { answers, cache } = deps;
  // Errors included.
  reply.header('Vary', VARY);
  const asked = await askMessages(deps, {
    hubId,
    query: rawQueryOf(request.raw.url ?? ''),
    audit: request.audit ?? undefined,
  });
  const { range } = asked;
  const etag = weakEtag([ANSWER_FORMAT, range.hubId, asked.dataVersion, range.fromMs, range.toMsExclusive]);
  const encoding = negotiateEncoding(request.headers['accept-encoding']);
  reply.headers(asked.headers).header('ETag', etag);

  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();

  reply.type(JSON_TYPE);
  if (encoding !== 'identity') reply.header('Content-Encoding', encoding);
  if (request.method === 'HEAD') return reply.send();

  const cacheKey = `${etag} ${encoding}`;
  let cached = cache.get(cacheKey);
  if (!cached && cache.enabled) {
    // The same answer is being made for another request: wait for it rather than make it again.
    // Not for long: the request making it may be reading slowly, or its answer may be too large to keep.
    const pending = cache.pending(cacheKey);
    if (pending) {
      await Promise.race([pending, sleep(WAIT_FOR_SAME_ANSWER_MS, undefined, { ref: false })]);
      cached = cache.get(cacheKey);
    }
  }
  const audit = request.audit;
  if (cached) {
    if (audit && cached.messages !== undefined) audit.messages = cached.messages;
    return reply.header('Content-Length', cached.body.length).send(cached.body);
  }

  // The audit's count of messages (CONTRACT §13): told by the source once the answer is read whole,
  // before its last bytes reach the socket (so before the audit records the request).
  const count: AnswerCount = audit ?? {};
  const body = answers.json(range, count);
  const logFailure = (error: NodeJS.ErrnoException | null) => {
    if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE')
      request.log.error({ err: error }, 'answer stream failed');
  };
  if (encoding === 'identity') {
    const json = Readable.from(body, { objectMode: false, highWaterMark: 64 * 1024 });
    if (!cache.enabled) return reply.send(pipeline(json, new PassThrough(), logFailure));
    const { measure, keep, done } = cache.recorder(cacheKey, range.hubId, count);
    return reply.send(
      pipeline(json, measure, keep, (error) => {
        done();
        logFailure(error);
      }),
    );
  }
  const compressor = createCompressor(encoding);
  const json = Readable.from(
    compressorInput(body, () => compressor.flush()),
    { objectMode: false, highWaterMark: 64 * 1024 },
  );
  if (!cache.enabled) return reply.send(pipeline(json, compressor, logFailure));
  const { measure, keep, done } = cache.recorder(cacheKey, range.hubId, count);
  return reply.send(
    pipeline(json, measure, compressor, keep, (error) => {
      done();
      logFailure(error);
    }),
  );
}
