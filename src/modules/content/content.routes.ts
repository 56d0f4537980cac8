/** GET /api/line/:hubId/content/:messageId: a media message's kept bytes (CONTRACT §11). */
import type { FastifyInstance } from 'fastify';
import { NO_STORE, rawQueryOf } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import { contentErrors } from './content.errors.js';
import { sendContent } from './content.reply.js';
import { contentRouteSchema } from './content.schemas.js';
import { type ContentDeps, findContent } from './content.usecases.js';

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
        audit: request.audit ?? undefined,
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
