/** GET /api/line/:hubId/content/:messageId: a media message's kept bytes (CONTRACT §11). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { etagMatches, NO_STORE, rawQueryOf } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import type { ContentStore } from '../../store/content/content-store.js';
import { contentErrors } from './content.errors.js';
import { attachment, rangeOf } from './content.range.js';
import { contentRouteSchema } from './content.schemas.js';
import { type ContentDeps, findContent, type ServableContent } from './content.usecases.js';

export const CONTENT_PATH = '/api/line/:hubId/content/:messageId';

export interface ContentRouteDeps extends ContentDeps {
  methods: PathMethods;
}

export function registerContentRoutes(app: FastifyInstance, deps: ContentRouteDeps): void {
  app.route<{ Params: { hubId: string; messageId: string } }>({
    method: 'GET',
    url: CONTENT_PATH,
    exposeHeadRoute: false,
    schema: contentRouteSchema,
    // findContent checks in the contract's order; a schema validator running first would not.
    validatorCompiler: checkedByHandler,
    handler: async (request, reply) => {
      reply.header('Vary', 'Authorization').header('Cache-Control', NO_STORE);
      const { item, size, headers } = await findContent(deps, {
        hubId: request.params.hubId,
        messageId: request.params.messageId,
        query: rawQueryOf(request.raw.url ?? ''),
        authorization: request.headers.authorization,
      });
      return sendContent(request, reply, deps.blobs, { item, size, headers });
    },
  });
  deps.methods.declare(app, {
    url: CONTENT_PATH,
    allowed: ['GET'],
    refuseByRoute: true,
    refusal: contentErrors.methodNotAllowed,
  });
}

/**
 * The answer of kept bytes (CONTRACT §11) to a caller allowed to read them: ETag and 304, byte
 * ranges (206, 416, If-Range), the file name of a file, and headers that keep the sender's bytes
 * from ever running as a page of chatlog's origin. The API and the account screen both send it.
 */
export async function sendContent(
  request: FastifyRequest,
  reply: FastifyReply,
  blobs: ContentStore,
  { item, size, headers }: ServableContent,
): Promise<FastifyReply> {
  const etag = `"${item.sha256}"`;
  reply.headers(headers).headers({
    ETag: etag,
    'Accept-Ranges': 'bytes',
    // The bytes are the sender's: never run as a page of chatlog's origin.
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  });
  if (item.kind === 'file') reply.header('Content-Disposition', attachment(item.fileName ?? 'file'));
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  // If-Range: a range only of the same bytes (a strong ETag; chatlog sends no Last-Modified).
  const ifRange = request.headers['if-range'];
  const range =
    ifRange === undefined || String(ifRange).trim() === etag
      ? rangeOf(request.headers.range, size)
      : { kind: 'whole' as const };
  if (range.kind === 'unsatisfiable') throw contentErrors.rangeNotSatisfiable(size).withHeaders(headers);
  const part = range.kind === 'part' ? { start: range.start, end: range.end } : undefined;
  const body = await blobs.read(item.hubId, item.sha256, part);
  if (!body) throw contentErrors.notFound('the content was deleted a moment ago').withHeaders(headers);
  reply.type(item.mediaType);
  if (part) {
    reply
      .code(206)
      .header('Content-Range', `bytes ${part.start}-${part.end}/${size}`)
      .header('Content-Length', String(part.end - part.start + 1));
  } else reply.header('Content-Length', String(size));
  return reply.send(body);
}
