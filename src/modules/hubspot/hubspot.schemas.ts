/** Route schema of HubSpot's webhook (CONTRACT §13). */
import type { FastifySchema } from 'fastify';
import {
  beforeAnyRouteResponses,
  errorResponse,
  internalErrorResponse,
  methodNotAllowedResponse,
  unavailableResponse,
} from '../../lib/schemas.js';

/** What both signed webhooks answer besides their own 200 and 400. */
const signedWebhookRefusals = {
  401: errorResponse('A missing or wrong signature, an old timestamp, or no client secret on this server.', [
    'invalid_signature',
  ]),
  405: methodNotAllowedResponse('POST'),
  413: errorResponse('Bodies are limited to 1 MiB.', ['payload_too_large']),
  500: internalErrorResponse,
  503: unavailableResponse,
  ...beforeAnyRouteResponses,
} as const;

export const hubspotWebhookRouteSchema = {
  operationId: 'receiveHubspotWebhook',
  summary: "HubSpot's webhook: a contact's privacy deletion erases the LINE friends linked to it",
  description:
    'Signed by HubSpot with signature v3 (X-HubSpot-Signature-v3: base64 HMAC-SHA256 of method, URI, body ' +
    'and X-HubSpot-Request-Timestamp under the app client secret, CHATLOG_HUBSPOT_CLIENT_SECRET); a ' +
    'timestamp more than 5 minutes away is refused. For each contact.privacyDeletion event, every contact ' +
    'of hub portalId linked to vid objectId is erased, as DELETE /api/line/{hubId}/contacts/{lineId} does. ' +
    'Other events are acknowledged and ignored.',
  tags: ['webhook'],
  headers: {
    type: 'object',
    required: ['x-hubspot-signature-v3', 'x-hubspot-request-timestamp'],
    properties: {
      'x-hubspot-signature-v3': { type: 'string', description: 'Base64 HMAC-SHA256 (signature v3).' },
      'x-hubspot-request-timestamp': {
        type: 'string',
        description: 'Milliseconds since 1970, when HubSpot sent it.',
      },
    },
  },
  body: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: true,
      properties: {
        subscriptionType: { type: 'string', examples: ['contact.privacyDeletion'] },
        portalId: { type: 'integer', description: 'The HubSpot portal: the hub.' },
        objectId: { type: 'integer', description: 'The HubSpot contact (vid).' },
      },
    },
    examples: [
      [
        {
          eventId: 1,
          subscriptionId: 7,
          portalId: 6662225,
          occurredAt: 1732000000000,
          subscriptionType: 'contact.privacyDeletion',
          attemptNumber: 0,
          objectId: 101,
        },
      ],
    ],
  },
  response: {
    200: {
      description: 'Every privacy deletion is done: the contacts erased and their messages.',
      type: 'object',
      required: ['erased'],
      properties: {
        erased: {
          type: 'object',
          required: ['contacts', 'messages'],
          properties: {
            contacts: { type: 'integer', minimum: 0 },
            messages: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
    400: errorResponse('A correctly signed body that is not a list of HubSpot webhook events.', [
      'invalid_body',
    ]),
    ...signedWebhookRefusals,
  },
} as const satisfies FastifySchema;

export const hubspotChannelWebhookRouteSchema = {
  operationId: 'receiveHubspotChannelMessage',
  summary: "HubSpot's custom-channel webhook: an agent's reply in the inbox is sent to the LINE friend",
  description:
    'Signed as POST /webhooks/hubspot is (signature v3 under CHATLOG_HUBSPOT_CLIENT_SECRET). HubSpot does ' +
    'not document the payload; chatlog relies on what HubSpot sends: an object (or a list of them) with ' +
    '`type` OUTGOING_CHANNEL_MESSAGE_CREATED, `portalId`, `channelIntegrationThreadIds` and `message` ' +
    '(`id`, `channelAccountId`, `text`, `recipients[].deliveryIdentifier`, `client.clientType`). Each such ' +
    "reply of a connected hub becomes one send to the friend (CONTRACT §16; HubSpot's message id is its " +
    'idempotency key, so a webhook delivered again sends nothing more), stored as You and not published ' +
    "back; HubSpot's message gets the status SENT or FAILED with LINE's reason. Other events, messages " +
    'chatlog published itself, and channel accounts chatlog does not hold are acknowledged and ignored.',
  tags: ['webhook'],
  headers: hubspotWebhookRouteSchema.headers,
  body: {
    description: 'One event, or a list of them.',
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: { type: 'object', additionalProperties: true } },
    ],
    examples: [
      {
        type: 'OUTGOING_CHANNEL_MESSAGE_CREATED',
        portalId: '6662225',
        channelId: '4180392',
        channelIntegrationThreadIds: ['U4af4980629aaaaaaaaaaaaaaaaaaaaaa'],
        message: {
          id: 'a3f1c5',
          type: 'MESSAGE',
          direction: 'OUTGOING',
          channelAccountId: '52001',
          text: 'ご予約ありがとうございます',
          recipients: [
            {
              deliveryIdentifier: {
                type: 'CHANNEL_SPECIFIC_OPAQUE_ID',
                value: 'U4af4980629aaaaaaaaaaaaaaaaaaaaaa',
              },
            },
          ],
          client: { clientType: 'HUBSPOT' },
        },
      },
    ],
  },
  response: {
    200: {
      description: 'Each reply queued as a send (or found queued already), the rest ignored.',
      type: 'object',
      required: ['sends', 'ignored'],
      properties: {
        sends: {
          type: 'array',
          items: { type: 'string', description: 'The send id (GET /api/line/{hubId}/sends/{id}).' },
        },
        ignored: { type: 'integer', minimum: 0 },
      },
    },
    400: errorResponse('A correctly signed body that is not HubSpot webhook events.', ['invalid_body']),
    ...signedWebhookRefusals,
  },
} as const satisfies FastifySchema;
