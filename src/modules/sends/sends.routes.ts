/**
 * POST /api/line/:hubId/contacts/:lineId/messages: a reply to a LINE friend (scope send), and
 * GET /api/line/:hubId/sends/:id: where it is (scope send or read). CONTRACT §16.
 */
import type { FastifyInstance } from 'fastify';
import { JSON_TYPE, NO_STORE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import { type AuthorizeDeps, checkedHub, keyCheckHook, partTwoEndpoint } from '../keys/keys.authorize.js';
import { sendErrors } from './sends.errors.js';
import { getSendRouteSchema, sendMessagesRouteSchema } from './sends.schemas.js';
import type { SendService } from './sends.usecases.js';

const SEND_PATH = '/api/line/:hubId/contacts/:lineId/messages';
const STATUS_PATH = '/api/line/:hubId/sends/:id';
const SEND = partTwoEndpoint('send', 'send messages', true);
const STATUS = { ...partTwoEndpoint('send', 'see sends', false), alsoScopes: ['read'] as const };

export interface SendRouteDeps {
  sends: SendService;
  authorize: AuthorizeDeps;
  methods: PathMethods;
}

export function registerSendRoutes(app: FastifyInstance, deps: SendRouteDeps): void {
  void app.register(async (scope) => {
    scope.addHook('onRequest', keyCheckHook(deps.authorize, SEND));
    scope.route<{ Params: { hubId: string; lineId: string } }>({
      method: 'POST',
      url: SEND_PATH,
      schema: sendMessagesRouteSchema,
      // The contract's order (the contact, the token, then the body); a schema validator would check the body first.
      validatorCompiler: checkedByHandler,
      handler: async (request, reply) => {
        reply.header('Cache-Control', NO_STORE);
        // The key hook found the hub (SEND reads it): not read again.
        const hub = checkedHub(request);
        if (!hub) throw SEND.refusals.forbidden();
        const { send } = await deps.sends.accept(hub, request.params.lineId, request.body);
        return reply.code(202).type(JSON_TYPE).send({ send });
      },
    });
  });
  void app.register(async (scope) => {
    scope.addHook('onRequest', keyCheckHook(deps.authorize, STATUS));
    scope.route<{ Params: { hubId: string; id: string } }>({
      method: 'GET',
      url: STATUS_PATH,
      schema: getSendRouteSchema,
      validatorCompiler: checkedByHandler,
      handler: async (request, reply) => {
        reply.header('Cache-Control', NO_STORE);
        const send = await deps.sends.status(request.params.hubId, request.params.id);
        return reply.type(JSON_TYPE).send({ send });
      },
    });
  });
  deps.methods.declare(app, {
    url: SEND_PATH,
    allowed: ['POST'],
    refuseByRoute: true,
    refusal: () => sendErrors.methodNotAllowed('POST'),
  });
  deps.methods.declare(app, {
    url: STATUS_PATH,
    allowed: ['GET'],
    refuseByRoute: true,
    refusal: () => sendErrors.methodNotAllowed('GET'),
  });
}
