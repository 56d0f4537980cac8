/** Route schemas of the admin API for outgoing webhooks (CONTRACT §10). */
import type { FastifySchema } from 'fastify';
import {
  beforeAnyRouteResponses,
  errorResponse,
  internalErrorResponse,
  methodNotAllowedResponse,
  rateLimitedResponse,
  unavailableResponse,
} from '../../lib/schemas.js';
import { CHANGE_TYPES } from '../../store/store.js';
import { hubIdSchema } from '../hubs/hubs.schemas.js';
import { KEY_PATTERN } from '../keys/keys.format.js';
import { MAX_URL_LENGTH } from './webhooks.usecases.js';

const eventsSchema = {
  type: 'array',
  items: { type: 'string', enum: [...CHANGE_TYPES] },
  minItems: 1,
  uniqueItems: true,
  description: 'The change types the endpoint is sent (section 9 of the contract); every type when absent.',
  examples: [['message.created', 'message.deleted']],
} as const;

const endpointProperties = {
  id: { type: 'string', description: "The endpoint's id." },
  url: { type: 'string', description: 'Where each change is POSTed.' },
  events: { ...eventsSchema, description: 'The change types it is sent.' },
} as const;

const keyAnswers = {
  401: {
    ...errorResponse('No key, or not a live key of this service.', ['missing_api_key', 'invalid_api_key']),
    headers: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="chatlog"' } },
  },
  403: errorResponse('A key of another scope (webhooks take an admin key), or of another hub.', [
    'insufficient_scope',
    'forbidden',
  ]),
  429: rateLimitedResponse,
  500: internalErrorResponse,
  503: unavailableResponse,
  ...beforeAnyRouteResponses,
} as const;

const badRequest = (description: string, extra: ReadonlyArray<'invalid_body' | 'invalid_url'> = []) =>
  errorResponse(description, ['ambiguous_credentials', 'invalid_hub_id', 'bad_request', ...extra]);

const security = [{ bearerKey: [] }, { queryKey: [] }] as const;
const apikey = {
  type: 'string',
  pattern: KEY_PATTERN.source,
  description: 'An API key of scope admin for this hub, unless it is sent in Authorization.',
} as const;

export const addWebhookRouteSchema = {
  operationId: 'addWebhook',
  summary: 'Adds an endpoint that is sent every change of the hub as it commits, signed',
  description:
    'Each change is POSTed as the Standard Webhooks specification says (webhook-id, webhook-timestamp, ' +
    'webhook-signature headers; verify with any Standard Webhooks library and the secret). The secret is ' +
    'in this answer only. The URL must be https (http to a private address only when the server allows ' +
    'it); a name that resolves to a loopback, private, link-local or metadata address is refused.',
  tags: ['webhooks'],
  security,
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  querystring: { type: 'object', properties: { apikey } },
  body: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_URL_LENGTH,
        description: 'https://... of your receiver.',
        examples: ['https://example.com/chatlog-webhooks'],
      },
      events: { anyOf: [eventsSchema, { type: 'null' }] },
    },
  },
  response: {
    201: {
      description: 'The endpoint, and its signing secret (shown this once).',
      type: 'object',
      required: ['id', 'url', 'events', 'secret'],
      additionalProperties: false,
      properties: {
        ...endpointProperties,
        secret: {
          type: 'string',
          pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
          description: '`whsec_` and base64 of 32 random bytes.',
        },
      },
    },
    400: badRequest(
      'Both kinds of credentials, a bad hub id, a body that is not an endpoint, or a refused URL.',
      ['invalid_body', 'invalid_url'],
    ),
    405: methodNotAllowedResponse('GET, POST'),
    415: errorResponse('The body is not sent as Content-Type: application/json.', ['unsupported_media_type']),
    ...keyAnswers,
  },
} as const satisfies FastifySchema;

export const listWebhooksRouteSchema = {
  operationId: 'listWebhooks',
  summary: "The hub's webhook endpoints (never their secrets)",
  description:
    'Every endpoint the hub has, oldest first, with the change types it is sent and whether it was disabled ' +
    '(an endpoint that answers 410 Gone is). A secret is shown only when its endpoint is added.',
  tags: ['webhooks'],
  security,
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  querystring: { type: 'object', properties: { apikey } },
  response: {
    200: {
      description: 'Oldest first.',
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'url', 'events', 'createdAt', 'disabledAt'],
        additionalProperties: false,
        properties: {
          ...endpointProperties,
          createdAt: { type: 'string', format: 'date-time', description: 'When it was added (UTC).' },
          disabledAt: {
            type: ['string', 'null'],
            format: 'date-time',
            description: 'When it answered 410 Gone and was disabled; null while it is live.',
          },
        },
      },
    },
    400: badRequest('Both kinds of credentials, or a bad hub id.'),
    405: methodNotAllowedResponse('GET, POST'),
    ...keyAnswers,
  },
} as const satisfies FastifySchema;

export const removeWebhookRouteSchema = {
  operationId: 'removeWebhook',
  summary: 'Removes an endpoint: nothing more is sent to it',
  description:
    'Deliveries not yet made are dropped with it; a change being retried is not tried again. The id is the ' +
    'one addWebhook answered (or listWebhooks lists).',
  tags: ['webhooks'],
  security,
  params: {
    type: 'object',
    required: ['hubId', 'webhookId'],
    properties: { hubId: hubIdSchema, webhookId: { type: 'string', description: "The endpoint's id." } },
  },
  querystring: { type: 'object', properties: { apikey } },
  response: {
    204: { description: 'Removed.', type: 'null' },
    400: badRequest('Both kinds of credentials, or a bad hub id.'),
    404: errorResponse('The hub has no endpoint of that id.', ['not_found']),
    405: methodNotAllowedResponse('DELETE'),
    ...keyAnswers,
  },
} as const satisfies FastifySchema;
