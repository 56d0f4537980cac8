/**
 * POST /webhooks/hubspot (CONTRACT §13): HubSpot's webhooks, signed with signature v3. Each
 * `contact.privacyDeletion` erases every contact of hub `portalId` linked to vid `objectId`; other
 * events are acknowledged and ignored.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import type { Store } from '../../store/store.js';
import { eraseLinkedContacts } from '../contacts/contacts.erasure.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import { hubspotWebhookRouteSchema } from './hubspot.schemas.js';
import { hubspotSignatureProblem } from './hubspot.signature.js';

const PATH = '/webhooks/hubspot';
const BODY_LIMIT = 1024 * 1024;

export interface HubspotRouteDeps {
  store: Pick<Store, 'hubs' | 'contacts' | 'search'>;
  /** CHATLOG_HUBSPOT_CLIENT_SECRET; undefined: every request is refused. */
  clientSecret: string | undefined;
  /** CHATLOG_PUBLIC_URL: the URL HubSpot calls, behind a proxy. */
  publicUrl: string | undefined;
  methods: PathMethods;
  clock: () => number;
}

interface HubspotEvent {
  subscriptionType?: unknown;
  portalId?: unknown;
  objectId?: unknown;
}

/** The URL HubSpot called: the public base URL when set, else this request's own scheme and host. */
function calledUri(request: FastifyRequest, publicUrl: string | undefined): string {
  const base = publicUrl ?? `${request.protocol}://${request.headers.host ?? ''}`;
  return `${base}${request.raw.url ?? ''}`;
}

const invalidSignature = (why: string) =>
  new AppError('invalid_signature', `not a request from HubSpot: ${why}`);

export function registerHubspotRoutes(app: FastifyInstance, deps: HubspotRouteDeps): void {
  void app.register(async (scope) => {
    // The raw bytes: the signature is over them, checked before any parsing.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.route({
      method: 'POST',
      url: PATH,
      bodyLimit: BODY_LIMIT,
      schema: hubspotWebhookRouteSchema,
      validatorCompiler: checkedByHandler,
      handler: async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        if (!deps.clientSecret)
          throw invalidSignature('this server has no HubSpot client secret to check it with');
        const header = (name: string) => {
          const value = request.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        const problem = hubspotSignatureProblem(
          deps.clientSecret,
          {
            method: request.method,
            uri: calledUri(request, deps.publicUrl),
            body,
            signature: header('x-hubspot-signature-v3'),
            timestamp: header('x-hubspot-request-timestamp'),
          },
          deps.clock(),
        );
        if (problem) throw invalidSignature(problem);
        let events: unknown;
        try {
          events = JSON.parse(body.toString('utf8'));
        } catch {
          throw new AppError('invalid_body', 'the body is not JSON');
        }
        if (!Array.isArray(events) || !events.every((event) => typeof event === 'object' && event !== null)) {
          throw new AppError('invalid_body', 'the body is not a list of HubSpot webhook events');
        }
        let contacts = 0;
        let messages = 0;
        for (const event of events as HubspotEvent[]) {
          if (event.subscriptionType !== 'contact.privacyDeletion') continue;
          const hubId = String(event.portalId ?? '');
          const vid = String(event.objectId ?? '');
          if (!isValidHubId(hubId) || !/^\d{1,20}$/.test(vid)) continue;
          if (!(await deps.store.hubs.get(hubId))) continue;
          const erased = await eraseLinkedContacts(deps, hubId, vid, (_lineId, n) =>
            request.log.info({ hubId, erased: { messages: n } }, 'HubSpot privacy deletion: contact erased'),
          );
          contacts += erased.contacts;
          messages += erased.messages;
        }
        return reply.type(JSON_TYPE).send({ erased: { contacts, messages } });
      },
    });
    deps.methods.declare(scope, { url: PATH, allowed: ['POST'], refuseByRoute: true });
  });
}
