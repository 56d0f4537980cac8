/** GET /api/line/:hubId/changes: the change feed (CONTRACT §9). */
import type { FastifyInstance } from 'fastify';
import { JSON_TYPE, NO_STORE, rawQueryOf } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import type { FeedSource } from '../../store/store.js';
import { changeErrors } from './changes.errors.js';
import { FeedReadAhead } from './changes.read-ahead.js';
import { changesRouteSchema } from './changes.schemas.js';
import { serializePage } from './changes.serializer.js';
import { type ChangesDeps, checkChangesRequest, readChanges } from './changes.usecases.js';

export const CHANGES_PATH = '/api/line/:hubId/changes';

export interface ChangesRouteDeps extends ChangesDeps {
  methods: PathMethods;
  /** Aborted when the server begins to stop: a held long poll answers at once with what there is. */
  stopping: AbortSignal;
  /** Where pages are read and encoded (the answer threads on SQLite); the store when unset. */
  feed?: FeedSource | undefined;
}

export function registerChangesRoutes(app: FastifyInstance, deps: ChangesRouteDeps): void {
  const source = deps.feed ?? deps.store.changes;
  const readAhead = new FeedReadAhead(source);
  app.route<{ Params: { hubId: string } }>({
    method: 'GET',
    url: CHANGES_PATH,
    exposeHeadRoute: false,
    schema: changesRouteSchema,
    // checkChangesRequest checks in the contract's order; a schema validator running first would not.
    validatorCompiler: checkedByHandler,
    handler: async (request, reply) => {
      // The answer depends on the key sent, wherever it was sent.
      reply.header('Vary', 'Authorization').header('Cache-Control', NO_STORE);
      const checked = await checkChangesRequest(deps, {
        hubId: request.params.hubId,
        query: rawQueryOf(request.raw.url ?? ''),
        authorization: request.headers.authorization,
        audit: request.audit ?? undefined,
      });
      const left = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) left.abort();
      };
      reply.raw.once('close', onClose);
      try {
        const page = await readChanges(
          deps.store,
          checked,
          AbortSignal.any([left.signal, deps.stopping]),
          readAhead,
          source,
        );
        if (left.signal.aborted) return reply;
        if (request.audit) request.audit.messages = page.count;
        return reply.headers(checked.headers).type(JSON_TYPE).send(serializePage(page));
      } finally {
        reply.raw.removeListener('close', onClose);
      }
    },
  });
  deps.methods.declare(app, {
    url: CHANGES_PATH,
    allowed: ['GET'],
    refuseByRoute: true,
    refusal: changeErrors.methodNotAllowed,
  });
}
