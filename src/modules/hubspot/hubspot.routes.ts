/**
 * HubSpot's webhooks, signed with signature v3:
 *
 * - POST /webhooks/hubspot (CONTRACT §13): each `contact.privacyDeletion` erases every contact of hub
 *   `portalId` linked to vid `objectId`; other events are acknowledged and ignored.
 * - POST /webhooks/hubspot/channel (§18): an agent's reply in a connected inbox becomes a send to
 *   the LINE friend (sends.usecases.ts), once however often HubSpot delivers it.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import type { Store } from '../../store/store.js';
import { eraseLinkedContacts } from '../contacts/contacts.erasure.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import type { SendService } from '../sends/sends.usecases.js';
import { hubspotChannelWebhookRouteSchema, hubspotWebhookRouteSchema } from './hubspot.schemas.js';
import { hubspotSignatureProblem } from './hubspot.signature.js';

const PATH = '/webhooks/hubspot';
const CHANNEL_PATH = '/webhooks/hubspot/channel';
const BODY_LIMIT = 1024 * 1024;

export interface HubspotRouteDeps {
  store: Pick<Store, 'hubs' | 'contacts' | 'search' | 'hubspot'>;
  /** Agents' replies go as sends (§16). */
  sends: SendService;
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

/** Refuses a request that is not HubSpot's (signature v3 over the URL HubSpot called). */
function checkSignature(request: FastifyRequest, body: Buffer, deps: HubspotRouteDeps): void {
  if (!deps.clientSecret) throw invalidSignature('this server has no HubSpot client secret to check it with');
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
}

/** The request's JSON, once its signature is HubSpot's (checked on the raw bytes, before parsing). */
function signedJson(request: FastifyRequest, deps: HubspotRouteDeps): unknown {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  checkSignature(request, body, deps);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('invalid_body', 'the body is not JSON');
  }
}

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
        const events = signedJson(request, deps);
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
    scope.route({
      method: 'POST',
      url: CHANNEL_PATH,
      bodyLimit: BODY_LIMIT,
      schema: hubspotChannelWebhookRouteSchema,
      validatorCompiler: checkedByHandler,
      handler: async (request, reply) => {
        const parsed = signedJson(request, deps);
        const events = Array.isArray(parsed) ? parsed : [parsed];
        if (!events.every((event) => typeof event === 'object' && event !== null)) {
          throw new AppError('invalid_body', 'the body is not HubSpot webhook events');
        }
        const sends: string[] = [];
        let ignored = 0;
        for (const event of events as ChannelEvent[]) {
          const id = await replyToFriend(deps, event, request.log);
          if (id === undefined) ignored += 1;
          else sends.push(id);
        }
        return reply.type(JSON_TYPE).send({ sends, ignored });
      },
    });
    deps.methods.declare(scope, { url: CHANNEL_PATH, allowed: ['POST'], refuseByRoute: true });
  });
}

/** What chatlog reads of HubSpot's custom-channel event (HubSpot documents no payload: README). */
interface ChannelEvent {
  type?: unknown;
  portalId?: unknown;
  channelIntegrationThreadIds?: unknown;
  message?: {
    id?: unknown;
    channelAccountId?: unknown;
    text?: unknown;
    recipients?: Array<{ deliveryIdentifier?: { type?: unknown; value?: unknown } }>;
    client?: { clientType?: unknown };
  };
}

/**
 * An agent's reply as a send to the friend (its id), or undefined when the event is not one chatlog
 * answers: another type, a message chatlog published itself (clientType INTEGRATION), a channel
 * account of no connected hub (or of another portal), no friend, no text.
 */
async function replyToFriend(
  deps: HubspotRouteDeps,
  event: ChannelEvent,
  log: FastifyBaseLogger,
): Promise<string | undefined> {
  const message = event.message;
  if (event.type !== 'OUTGOING_CHANNEL_MESSAGE_CREATED' || typeof message !== 'object' || message === null)
    return undefined;
  if (message.client?.clientType === 'INTEGRATION') return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  if (typeof message.channelAccountId !== 'string' && typeof message.channelAccountId !== 'number')
    return undefined;
  const connection = await deps.store.hubspot.byChannelAccount(String(message.channelAccountId));
  if (!connection || connection.disconnectedAt !== null || String(event.portalId) !== connection.portalId)
    return undefined;
  const threads = Array.isArray(event.channelIntegrationThreadIds) ? event.channelIntegrationThreadIds : [];
  const recipient = (Array.isArray(message.recipients) ? message.recipients : []).find(
    (r) => r?.deliveryIdentifier?.type === 'CHANNEL_SPECIFIC_OPAQUE_ID',
  )?.deliveryIdentifier?.value;
  const lineId = typeof threads[0] === 'string' ? threads[0] : recipient;
  if (typeof lineId !== 'string' || typeof message.text !== 'string' || message.text.trim() === '')
    return undefined;
  const hub = await deps.store.hubs.get(connection.hubId);
  if (!hub) return undefined;
  const hubspotMessageId = String(message.id);
  try {
    const { send } = await deps.sends.accept(
      hub,
      lineId,
      { messages: [{ type: 'text', text: message.text }], idempotencyKey: `hubspot:${hubspotMessageId}` },
      { hubspotMessageId },
    );
    return send.id;
  } catch (error) {
    // Refused before anything was queued (§16: no such friend, no access token, a text over 5,000
    // characters): kept as a failed send, so that HubSpot is told FAILED with why, and answered 200,
    // so that HubSpot does not deliver the same reply again.
    if (error instanceof AppError) {
      log.warn(
        { hubId: hub.id, code: error.code },
        `an agent's reply in HubSpot was not sent: ${error.message}`,
      );
      await deps.sends.refused(hub, lineId, message.text, { hubspotMessageId }, error.message);
      return undefined;
    }
    throw error;
  }
}
