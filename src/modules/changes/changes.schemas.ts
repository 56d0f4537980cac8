/**
 * The change feed's route schema: GET /api/line/:hubId/changes. Its parameters are checked by
 * checkChangesRequest in the contract's order; the schema states the same rules for the document.
 */
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
import { CONTENT_TYPE_DESCRIPTION, MSG_DESCRIPTION } from '../messages/messages.schemas.js';
import { CHANGES_CHECK_ORDER, DEFAULT_LIMIT, MAX_LIMIT, MAX_WAIT_SECONDS } from './changes.usecases.js';

const instant = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$',
} as const;

const common = {
  seq: {
    type: 'string',
    pattern: '^[0-9]+$',
    description: "Strictly increasing along the hub's feed (a decimal string).",
  },
  at: { ...instant, description: 'When the change was committed (UTC, 24 characters).' },
  lineId: { type: 'string', description: 'The LINE friend.' },
} as const;

export const changeSchema = {
  description:
    'One change. Its type says which fields follow; new types may be added, and a client ignores a type it does not know.',
  type: 'object',
  required: ['seq', 'type', 'at'],
  properties: {
    ...common,
    type: {
      type: 'string',
      description: 'message.created, message.deleted, contact.updated, contact.erased or retention.applied.',
      examples: ['message.created'],
    },
    id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: "The message's id (message.created, message.deleted): unique in the hub, never reused.",
    },
    vid: {
      type: 'string',
      description: 'The HubSpot contact id, "" while unlinked (message.created, contact.updated).',
    },
    name: {
      type: 'string',
      description: 'The display name, "" while unknown (message.created, contact.updated).',
    },
    message: {
      type: 'object',
      description:
        'message.created: the message as GET /messages renders it (sender read when the answer is made).',
      required: ['sender', 'msg', 'contentType', 'createdAt'],
      properties: {
        sender: { type: 'string' },
        msg: { type: 'string', description: MSG_DESCRIPTION },
        contentType: { type: 'string', description: CONTENT_TYPE_DESCRIPTION },
        createdAt: instant,
      },
    },
    line: {
      type: 'object',
      description:
        'message.created, for a message that came by LINE webhook: LINE\'s own "source" and "message" objects, as LINE sent them.',
      properties: { source: { type: 'object' }, message: { type: 'object' } },
    },
    reason: { type: 'string', description: 'message.deleted: why ("unsend").', examples: ['unsend'] },
    before: {
      ...instant,
      description: 'retention.applied: every message created before this instant is gone.',
    },
  },
} as const;

export const changesRouteSchema = {
  operationId: 'getChanges',
  summary: "A hub's changes after a cursor: the way to keep a copy in sync, deletions included",
  description:
    'Follow `cursor` from answer to answer. Without a cursor the feed starts at the oldest change kept, so the ' +
    'first pages are a complete copy of the hub. `hasMore: false` means you were caught up when the answer was ' +
    'made; with `wait` the answer is held until a change commits or the seconds pass (long polling). ' +
    'The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.',
  'x-check-order': CHANGES_CHECK_ORDER,
  tags: ['changes'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  querystring: {
    type: 'object',
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: 'An API key of scope read for this hub, unless it is sent in Authorization.',
      },
      cursor: { type: 'string', description: 'The cursor of a previous answer, unchanged (opaque).' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_LIMIT,
        description: `At most this many changes (${DEFAULT_LIMIT} when absent).`,
      },
      wait: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_SECONDS,
        description: 'Seconds to hold the answer while nothing follows the cursor (0 when absent).',
      },
    },
  },
  response: {
    200: {
      description: 'The changes after the cursor, oldest first.',
      headers: {
        RateLimit: { type: 'string', description: 'Only for a key with a rate limit: what is left.' },
        'RateLimit-Policy': { type: 'string', description: 'Only for a key with a rate limit: the limit.' },
      },
      type: 'object',
      required: ['changes', 'cursor', 'hasMore'],
      additionalProperties: false,
      properties: {
        changes: { type: 'array', items: changeSchema },
        cursor: { type: 'string', description: 'Where the next request starts.' },
        hasMore: { type: 'boolean', description: 'More changes follow now; false: you are caught up.' },
      },
      examples: [
        {
          changes: [
            {
              seq: '41',
              type: 'message.created',
              at: '2019-11-03T01:02:11.250Z',
              id: '444573844083572737',
              lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
              vid: '101',
              name: 'shinobu',
              message: {
                sender: 'shinobu',
                msg: 'こんにちは！',
                contentType: 'text',
                createdAt: '2019-11-03T01:02:11.120Z',
              },
              line: {
                source: { type: 'user', userId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3' },
                message: {
                  id: '444573844083572737',
                  type: 'text',
                  quoteToken: 'q3Plxr4AgKd...',
                  text: 'こんにちは！',
                },
              },
            },
            {
              seq: '42',
              type: 'message.deleted',
              at: '2019-11-03T01:03:00.010Z',
              id: '444573844083572737',
              lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
              reason: 'unsend',
            },
          ],
          cursor: 'c1.NjY2MjIyNTo0Mg',
          hasMore: false,
        },
      ],
    },
    400: errorResponse('Both kinds of credentials, a bad hub id, or a bad parameter.', [
      'ambiguous_credentials',
      'invalid_hub_id',
      'duplicate_parameter',
      'invalid_cursor',
      'invalid_limit',
      'invalid_wait',
      'bad_request',
    ]),
    401: errorResponse('No key, or not a live key of this service.', ['missing_api_key', 'invalid_api_key']),
    403: errorResponse('A key of another scope, or of another hub.', ['insufficient_scope', 'forbidden']),
    405: methodNotAllowedResponse('GET'),
    410: errorResponse('The changes after this cursor were dropped: start again without a cursor.', [
      'cursor_expired',
    ]),
    429: rateLimitedResponse,
    500: internalErrorResponse,
    503: unavailableResponse,
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;
