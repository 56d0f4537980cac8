/** POST /webhooks/line/:hubId (LINE) and the ingest API (/ingest/line/:hubId/...). */
import type { FastifyInstance } from 'fastify';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import { type AuthorizeDeps, authorize, keyInBearer } from '../keys/keys.authorize.js';
import { INGEST_API } from './ingest.auth.js';
import {
  type AccountMessage,
  type ContactLinkBody,
  linkContactRouteSchema,
  recordMessagesRouteSchema,
  webhookRouteSchema,
} from './ingest.schemas.js';
import type { IngestService } from './ingest.usecases.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
export const INGEST_BODY_LIMIT = 16 * 1024 * 1024;

export interface IngestRouteDeps {
  ingest: IngestService;
  authorize: AuthorizeDeps;
  methods: PathMethods;
}

export function registerIngestRoutes(app: FastifyInstance, deps: IngestRouteDeps): void {
  // The webhook needs the raw bytes: the signature is over them, checked before any parsing.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );
    scope.route<{ Params: { hubId: string } }>({
      method: 'POST',
      url: '/webhooks/line/:hubId',
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: webhookRouteSchema,
      // The signature is checked before the body is read (ingest.usecases.ts); no schema runs first.
      validatorCompiler: checkedByHandler,
      handler: async (request, reply) => {
        const signature = request.headers['x-line-signature'];
        await deps.ingest.receiveWebhook(
          request.params.hubId,
          Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          typeof signature === 'string' ? signature : undefined,
          request.headers['content-type'],
          request.log,
        );
        return reply.type(JSON_TYPE).send({});
      },
    });
    deps.methods.declare(scope, { url: '/webhooks/line/:hubId', allowed: ['POST'], refuseByRoute: true });
  });

  void app.register(async (scope) => {
    // JSON and nothing else: Fastify would read text/plain as a string (then refused as "not an
    // array", a 400). Without its parser, any type but JSON is Fastify's own 415, which app.ts
    // answers as every JSON endpoint's notJsonBody().
    scope.removeContentTypeParser('text/plain');
    // Authenticate from the headers before any body is read.
    scope.addHook('onRequest', async (request, reply) => {
      // The answer depends on the key sent.
      reply.header('Vary', 'Authorization');
      const { hubId } = request.params as { hubId: string };
      const access = await authorize(deps.authorize, {
        presented: keyInBearer(request.headers.authorization),
        hubId,
        endpoint: INGEST_API,
      });
      // No parameter of the ingest API is checked before its body: the rate limit comes next.
      reply.headers(await access.admit());
    });
    scope.route<{ Params: { hubId: string }; Body: AccountMessage[] }>({
      method: 'POST',
      url: '/ingest/line/:hubId/messages',
      bodyLimit: INGEST_BODY_LIMIT,
      schema: recordMessagesRouteSchema,
      handler: async (request, reply) => {
        const outcome = await deps.ingest.recordMessages(request.params.hubId, request.body);
        return reply.type(JSON_TYPE).send({ stored: outcome.stored, duplicates: outcome.duplicates });
      },
    });
    scope.route<{ Params: { hubId: string; lineId: string }; Body: ContactLinkBody }>({
      method: 'PUT',
      url: '/ingest/line/:hubId/contacts/:lineId',
      schema: linkContactRouteSchema,
      handler: async (request, reply) => {
        const contact = await deps.ingest.contacts.link(
          request.params.hubId,
          request.params.lineId,
          request.body,
        );
        return reply.type(JSON_TYPE).send(contact);
      },
    });
  });
  // Wrong methods answer 405 without asking for a key.
  deps.methods.declare(app, { url: '/ingest/line/:hubId/messages', allowed: ['POST'], refuseByRoute: true });
  deps.methods.declare(app, {
    url: '/ingest/line/:hubId/contacts/:lineId',
    allowed: ['PUT'],
    refuseByRoute: true,
  });
}
