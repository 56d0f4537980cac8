/**
 * Search's route schema: GET /api/line/:hubId/search. Its parameters are checked by
 * checkSearchRequest in the contract's order; the schema states the same rules for the document.
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
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  MAX_TERM_CHARS,
  MAX_TERMS,
  SEARCH_CHECK_ORDER,
} from './search.usecases.js';

const instant = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$',
} as const;

const day = { type: 'string', format: 'date', pattern: '^\\d{4}-\\d\\d-\\d\\d$' } as const;

export const searchResultSchema = {
  type: 'object',
  required: ['id', 'lineId', 'vid', 'name', 'message'],
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: "The message's id: unique in the hub, never reused (as in the change feed).",
    },
    lineId: { type: 'string', description: 'The LINE friend.' },
    vid: { type: 'string', description: 'The HubSpot contact id, "" while unlinked.' },
    name: { type: 'string', description: 'The display name, "" while unknown.' },
    message: {
      type: 'object',
      description: 'The message as GET /messages renders it (sender read when the answer is made).',
      required: ['sender', 'msg', 'contentType', 'createdAt'],
      additionalProperties: false,
      properties: {
        sender: { type: 'string' },
        msg: { type: 'string', description: MSG_DESCRIPTION },
        contentType: { type: 'string', description: CONTENT_TYPE_DESCRIPTION },
        createdAt: instant,
      },
    },
  },
} as const;

export const searchRouteSchema = {
  operationId: 'searchMessages',
  summary: "A hub's messages that contain every word of a query, newest first",
  description:
    '`q` and each message are compared after Unicode NFKC normalisation and lower-casing: `ｱｲﾌｫﾝ` finds ' +
    '`アイフォン`, `ＡＢＣ` finds `abc`. `q` is split on white space into words; a message matches when it ' +
    'contains every word as a substring (a word of one character works, and a Japanese word needs no spaces ' +
    'around it: `予約` finds `ご予約ありがとうございます`). Follow `cursor` for older results while `hasMore` ' +
    'is true. The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.',
  'x-check-order': SEARCH_CHECK_ORDER,
  tags: ['search'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  querystring: {
    type: 'object',
    required: ['q'],
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: 'An API key of scope read for this hub, unless it is sent in Authorization.',
      },
      q: {
        type: 'string',
        minLength: 1,
        description: `1 to ${MAX_TERMS} words separated by white space, each of 1 to ${MAX_TERM_CHARS} characters (after NFKC normalisation).`,
        examples: ['予約'],
      },
      from: { ...day, description: "The first day (inclusive), in the hub's time zone or tz." },
      to: { ...day, description: 'The last day (inclusive).' },
      tz: { type: 'string', description: 'An IANA time zone that reads from and to for this request.' },
      lineId: { type: 'string', description: "Only this LINE friend's messages." },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_LIMIT,
        description: `At most this many results (${DEFAULT_LIMIT} when absent).`,
      },
      cursor: {
        type: 'string',
        description: 'The cursor of a previous answer to the same hub and q, unchanged (opaque).',
      },
    },
  },
  response: {
    200: {
      description: 'The matching messages, newest first (by createdAt, then the newest received).',
      headers: {
        RateLimit: { type: 'string', description: 'Only for a key with a rate limit: what is left.' },
        'RateLimit-Policy': { type: 'string', description: 'Only for a key with a rate limit: the limit.' },
      },
      type: 'object',
      required: ['results', 'cursor', 'hasMore'],
      additionalProperties: false,
      properties: {
        results: { type: 'array', items: searchResultSchema },
        cursor: { type: 'string', description: 'Where the next page starts (older results).' },
        hasMore: { type: 'boolean', description: 'Older results follow; false: this was the last page.' },
      },
      examples: [
        {
          results: [
            {
              id: '444573844083572737',
              lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
              vid: '101',
              name: 'shinobu',
              message: {
                sender: 'shinobu',
                msg: 'ご予約ありがとうございます',
                contentType: 'text',
                createdAt: '2019-11-03T01:02:11.120Z',
              },
            },
          ],
          cursor: 's1.NjY2MjIyNToxNTcyNzQyOTMxMTIwOjQxOjBlNTc1MWMwMjZlNTQzYjI',
          hasMore: false,
        },
      ],
    },
    400: errorResponse('Both kinds of credentials, a bad hub id, or a bad parameter.', [
      'ambiguous_credentials',
      'invalid_hub_id',
      'duplicate_parameter',
      'invalid_query',
      'invalid_date',
      'invalid_range',
      'invalid_time_zone',
      'invalid_limit',
      'invalid_cursor',
      'bad_request',
    ]),
    401: errorResponse('No key, or not a live key of this service.', ['missing_api_key', 'invalid_api_key']),
    403: errorResponse('A key of another scope, or of another hub.', ['insufficient_scope', 'forbidden']),
    405: methodNotAllowedResponse('GET'),
    429: rateLimitedResponse,
    500: internalErrorResponse,
    503: unavailableResponse,
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;
