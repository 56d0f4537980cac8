/** Route schema of erasing a contact (CONTRACT §13). */
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

export const eraseContactRouteSchema = {
  operationId: 'eraseContact',
  summary: "Erases a LINE friend of the hub and everything of it (a person's right to erasure)",
  description:
    'In one transaction: every message of the contact and its search entries, its media (the bytes are ' +
    'deleted within seconds unless another message of the hub holds them), its vid and name, and its ' +
    'earlier changes in the feed, which one contact.erased replaces. Messages that come from that LINE ' +
    'user later are stored as a new contact. Takes an admin key.',
  tags: ['contacts'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: {
    type: 'object',
    required: ['hubId', 'lineId'],
    properties: {
      hubId: hubIdSchema,
      lineId: { type: 'string', description: "The contact's LINE user id, as the read API shows it." },
    },
  },
  querystring: {
    type: 'object',
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: 'An API key of scope admin for this hub, unless it is sent in Authorization.',
      },
    },
  },
  response: {
    200: {
      description: 'Erased.',
      type: 'object',
      required: ['erased'],
      additionalProperties: false,
      properties: {
        erased: {
          type: 'object',
          required: ['messages'],
          additionalProperties: false,
          properties: { messages: { type: 'integer', minimum: 0, description: 'The messages erased.' } },
        },
      },
      examples: [{ erased: { messages: 42 } }],
    },
    400: errorResponse('Both kinds of credentials, or a bad hub id.', [
      'ambiguous_credentials',
      'invalid_hub_id',
    ]),
    401: {
      ...errorResponse('No key, or not a live key of this service.', ['missing_api_key', 'invalid_api_key']),
      headers: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="chatlog"' } },
    },
    403: errorResponse('A key of another scope (erasure takes an admin key), or of another hub.', [
      'insufficient_scope',
      'forbidden',
    ]),
    404: errorResponse('The hub has no contact of that LINE id: nothing was erased.', ['contact_not_found']),
    405: methodNotAllowedResponse('DELETE'),
    429: rateLimitedResponse,
    500: internalErrorResponse,
    503: unavailableResponse,
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;
