/** The admin API of outgoing webhooks: /api/line/:hubId/webhooks (CONTRACT §10). */
import type { FastifyInstance } from 'fastify';
import { formatTimestamp } from '../../lib/calendar.js';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import type { ChangeType } from '../../store/store.js';
import { type AuthorizeDeps, keyCheckHook, partTwoEndpoint } from '../keys/keys.authorize.js';
import { webhookErrors } from './webhooks.errors.js';
import {
  addWebhookRouteSchema,
  listWebhooksRouteSchema,
  removeWebhookRouteSchema,
} from './webhooks.schemas.js';
import type { WebhookService } from './webhooks.usecases.js';

const WEBHOOKS_PATH = '/api/line/:hubId/webhooks';
const WEBHOOK_PATH = '/api/line/:hubId/webhooks/:webhookId';

const ADMIN = partTwoEndpoint('admin', 'manage webhooks', false);

export interface WebhookRouteDeps {
  webhooks: WebhookService;
  authorize: AuthorizeDeps;
  methods: PathMethods;
}

export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  void app.register(async (scope) => {
    scope.removeContentTypeParser('text/plain');
    scope.addHook('onRequest', keyCheckHook(deps.authorize, ADMIN));
    scope.route<{ Params: { hubId: string }; Body: { url: string; events?: ChangeType[] | null } }>({
      method: 'POST',
      url: WEBHOOKS_PATH,
      bodyLimit: 64 * 1024,
      schema: addWebhookRouteSchema,
      handler: async (request, reply) => {
        const added = await deps.webhooks.add(request.params.hubId, request.body);
        return reply
          .code(201)
          .type(JSON_TYPE)
          .send({ id: added.id, url: added.url, events: added.events, secret: added.secret });
      },
    });
    scope.route<{ Params: { hubId: string } }>({
      method: 'GET',
      url: WEBHOOKS_PATH,
      exposeHeadRoute: false,
      schema: listWebhooksRouteSchema,
      handler: async (request, reply) => {
        const endpoints = await deps.webhooks.list(request.params.hubId);
        return reply.type(JSON_TYPE).send(
          endpoints.map((endpoint) => ({
            id: endpoint.id,
            url: endpoint.url,
            events: endpoint.events,
            createdAt: formatTimestamp(endpoint.createdAt),
            disabledAt: endpoint.disabledAt === null ? null : formatTimestamp(endpoint.disabledAt),
          })),
        );
      },
    });
    scope.route<{ Params: { hubId: string; webhookId: string } }>({
      method: 'DELETE',
      url: WEBHOOK_PATH,
      schema: removeWebhookRouteSchema,
      handler: async (request, reply) => {
        await deps.webhooks.remove(request.params.hubId, request.params.webhookId);
        return reply.code(204).send();
      },
    });
  });
  deps.methods.declare(app, {
    url: WEBHOOKS_PATH,
    allowed: ['GET', 'POST'],
    refuseByRoute: true,
    refusal: () => webhookErrors.methodNotAllowed('GET, POST'),
  });
  deps.methods.declare(app, {
    url: WEBHOOK_PATH,
    allowed: ['DELETE'],
    refuseByRoute: true,
    refusal: () => webhookErrors.methodNotAllowed('DELETE'),
  });
}
