/** GET /api/line/:hubId/search: search a hub's messages (CONTRACT §12). */
import type { FastifyInstance } from 'fastify';
import { JSON_TYPE, NO_STORE, rawQueryOf } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import { searchErrors } from './search.errors.js';
import { searchRouteSchema } from './search.schemas.js';
import { serializeSearchPage } from './search.serializer.js';
import { checkSearchRequest, type SearchDeps, search } from './search.usecases.js';

export const SEARCH_PATH = '/api/line/:hubId/search';

export interface SearchRouteDeps extends SearchDeps {
  methods: PathMethods;
}

export function registerSearchRoutes(app: FastifyInstance, deps: SearchRouteDeps): void {
  app.route<{ Params: { hubId: string } }>({
    method: 'GET',
    url: SEARCH_PATH,
    exposeHeadRoute: false,
    schema: searchRouteSchema,
    // checkSearchRequest checks in the contract's order; a schema validator running first would not.
    validatorCompiler: checkedByHandler,
    handler: async (request, reply) => {
      // The answer depends on the key sent, wherever it was sent.
      reply.header('Vary', 'Authorization').header('Cache-Control', NO_STORE);
      const checked = await checkSearchRequest(deps, {
        hubId: request.params.hubId,
        query: rawQueryOf(request.raw.url ?? ''),
        authorization: request.headers.authorization,
        audit: request.audit ?? undefined,
      });
      const page = await search(deps.store, checked);
      if (request.audit) request.audit.messages = page.results.length;
      return reply.headers(checked.headers).type(JSON_TYPE).send(serializeSearchPage(page));
    },
  });
  deps.methods.declare(app, {
    url: SEARCH_PATH,
    allowed: ['GET'],
    refuseByRoute: true,
    refusal: searchErrors.methodNotAllowed,
  });
}
