/** Route schemas of the send API (CONTRACT §16). */
import type { FastifySchema } from 'fastify';
import {
  beforeAnyRouteResponses,
  errorResponse,
  internalErrorResponse,
  methodNotAllowedResponse,
  rateLimitedResponse,
  unavailableResponse,
} from '../../lib/schemas.js';
import { hubIdSchema } from '../hubs/hubs.schemas.js';
import { KEY_PATTERN } from '../keys/keys.format.js';
import { MAX_MESSAGES, MAX_TEXT_CHARS } from './sends.usecases.js';

const sendSchema = {
  type: 'object',
  required: ['id', 'status', 'attempts'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: "The send's id (GET /api/line/{hubId}/sends/{id})." },
    status: {
      type: 'string',
      enum: ['pending', 'sent', 'failed'],
      description: 'pending until LINE took it (sent) or refused it for good (failed).',
    },
    attempts: { type: 'integer', minimum: 0, description: 'Pushes to LINE made so far.' },
    error: { type: 'string', description: "Why it failed, in LINE's words." },
    messageIds: {
      type: 'array',
      items: { type: 'string' },
      description: "LINE's ids of the messages sent: each is stored as a message of the contact, sender You.",
    },
  },
} as const;

const keyQuery = (scopes: string) =>
  ({
    type: 'object',
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: `An API key of scope ${scopes} for this hub, unless it is sent in Authorization.`,
      },
    },
  }) as const;

const keyRefusals = (scopes: string) =>
  ({
    400: errorResponse(
      'Both kinds of credentials, a bad hub id, or a body that is not a send (naming the field).',
      ['ambiguous_credentials', 'invalid_hub_id', 'invalid_body'],
    ),
    401: {
      ...errorResponse('No key, or not a live key of this service.', ['missing_api_key', 'invalid_api_key']),
      headers: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="chatlog"' } },
    },
    403: errorResponse(`A key of another scope (this takes ${scopes}), or of another hub.`, [
      'insufficient_scope',
      'forbidden',
    ]),
    429: rateLimitedResponse,
    500: internalErrorResponse,
    503: unavailableResponse,
    ...beforeAnyRouteResponses,
  }) as const;

export const sendMessagesRouteSchema = {
  operationId: 'sendMessages',
  summary: 'Sends messages to a LINE friend of the hub (a reply), and keeps them',
  description:
    "Queued durably and answered 202; chatlog then pushes them with LINE's push API on LINE_API_BASE_URL, " +
    'with the same X-Line-Retry-Key at every attempt, so LINE takes them once. Once LINE took them, each ' +
    'is stored as a message of the contact with sender You under its LINE id: the read API, the feed, ' +
    "search and outgoing webhooks show it. Sends of one contact reach LINE in the order accepted. LINE's " +
    '429, 5xx and network errors are retried for up to 24 hours; another refusal fails the send with ' +
    "LINE's words, and nothing is stored. Takes a key of scope send.",
  tags: ['sends'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: {
    type: 'object',
    required: ['hubId', 'lineId'],
    properties: {
      hubId: hubIdSchema,
      lineId: { type: 'string', description: "The contact's LINE user id, as the read API shows it." },
    },
  },
  querystring: keyQuery('send'),
  body: {
    type: 'object',
    required: ['messages'],
    additionalProperties: false,
    properties: {
      messages: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_MESSAGES,
        items: {
          oneOf: [
            {
              type: 'object',
              required: ['type', 'text'],
              additionalProperties: false,
              properties: {
                type: { const: 'text' },
                text: { type: 'string', minLength: 1, maxLength: MAX_TEXT_CHARS },
              },
            },
            {
              type: 'object',
              required: ['type', 'packageId', 'stickerId'],
              additionalProperties: false,
              properties: {
                type: { const: 'sticker' },
                packageId: { type: 'string', pattern: '^[0-9]{1,20}$' },
                stickerId: { type: 'string', pattern: '^[0-9]{1,20}$' },
              },
            },
          ],
        },
      },
      idempotencyKey: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description:
          'The same key for the hub within 24 hours answers the first send and sends nothing again.',
      },
    },
    examples: [
      { messages: [{ type: 'text', text: 'ご予約ありがとうございます。' }], idempotencyKey: 'order-1042' },
    ],
  },
  response: {
    202: {
      description: 'Accepted: kept, and on its way to LINE (or the send this idempotency key named).',
      type: 'object',
      required: ['send'],
      additionalProperties: false,
      properties: { send: sendSchema },
      examples: [{ send: { id: '0f8fad5b-d9cb-469f-a165-70867728950e', status: 'pending', attempts: 0 } }],
    },
    ...keyRefusals('send'),
    404: errorResponse('The hub has no contact of that LINE id: nothing was sent.', ['contact_not_found']),
    405: methodNotAllowedResponse('POST'),
    409: errorResponse('The hub has no LINE channel access token: nothing can be sent.', [
      'no_channel_access_token',
    ]),
  },
} as const satisfies FastifySchema;

export const getSendRouteSchema = {
  operationId: 'getSend',
  summary: "Where a send is: pending, sent (with its LINE message ids) or failed (with LINE's words)",
  description:
    "A send of the hub, by the id its 202 gave. attempts counts the pushes made so far; error says why the last one did not go, in LINE's words, once it failed. Takes a key of scope send or read.",
  tags: ['sends'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: {
    type: 'object',
    required: ['hubId', 'id'],
    properties: { hubId: hubIdSchema, id: { type: 'string', description: "The send's id, from its 202." } },
  },
  querystring: keyQuery('send or read'),
  response: {
    200: {
      description: 'The send.',
      type: 'object',
      required: ['send'],
      additionalProperties: false,
      properties: { send: sendSchema },
      examples: [
        {
          send: {
            id: '0f8fad5b-d9cb-469f-a165-70867728950e',
            status: 'sent',
            attempts: 1,
            messageIds: ['532018462380425217'],
          },
        },
      ],
    },
    ...keyRefusals('send or read'),
    404: errorResponse('The hub has no send of that id.', ['not_found']),
    405: methodNotAllowedResponse('GET'),
  },
} as const satisfies FastifySchema;
