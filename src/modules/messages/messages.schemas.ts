/**
 * The read API's route schema: GET /api/line/:hubId/messages. Its parameters are checked by
 * checkMessagesRequest in the contract's order (CONTRACT §1), which a schema validator cannot keep;
 * the schema states the same rules (the patterns are the checks' own) and makes the document.
 */
import type { FastifySchema } from 'fastify';
import { DAY_PATTERN } from '../../lib/calendar.js';
import {
  beforeAnyRouteResponses,
  errorResponse,
  internalErrorResponse,
  methodNotAllowedResponse,
  rateLimitedResponse,
  unavailableResponse,
  varyingOn,
} from '../../lib/schemas.js';
import { hubIdSchema } from '../hubs/hubs.schemas.js';
import { KEY_PATTERN } from '../keys/keys.format.js';
import { MESSAGES_CHECK_ORDER } from './messages.checks.js';

/** What `msg` holds, for each kind of content (CONTRACT §3). */
export const MSG_DESCRIPTION =
  'The text exactly as sent: line breaks, emoji and every other character kept. A message that is not ' +
  'text names its kind and id, one item per line (as JSON writes them): "[Sticker]\\nID: <stickerId>", ' +
  '"[Image]\\nID: <messageId>", "[Video]\\nID: <messageId>", "[Audio]\\nID: <messageId>", ' +
  '"[File]\\nID: <messageId>\\nName: <fileName>", ' +
  '"[Location]\\nID: <messageId>\\n<title>\\n<address>\\n<latitude>,<longitude>", and "[<Type>]\\nID: <messageId>" ' +
  'for a type LINE adds later. A line whose value LINE did not send is left out.';

/** The values the webhook writes; the ingest API and imports store what they are given. */
export const CONTENT_TYPE_DESCRIPTION =
  'The kind of content: "text", "sticker", "image", "video", "audio", "file", "location", or another ' +
  'LINE message type as LINE names it. Messages from the ingest API or an import keep the contentType ' +
  'they were given ("text" when none was).';

export const messageSchema = {
  type: 'object',
  required: ['sender', 'msg', 'contentType', 'createdAt'],
  additionalProperties: false,
  properties: {
    sender: { type: 'string', description: '"You" for the account side, else the friend\'s name.' },
    msg: { type: 'string', description: MSG_DESCRIPTION },
    contentType: {
      type: 'string',
      description: CONTENT_TYPE_DESCRIPTION,
      examples: ['text', 'sticker', 'image'],
    },
    createdAt: {
      type: 'string',
      format: 'date-time',
      pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$',
      description: 'UTC with milliseconds, always 24 characters.',
    },
  },
} as const;

export const contactSchema = {
  type: 'object',
  required: ['lineId', 'vid', 'name', 'messages'],
  additionalProperties: false,
  properties: {
    lineId: { type: 'string' },
    vid: { type: 'string', description: 'The HubSpot contact id, "" while unlinked.' },
    name: { type: 'string', description: 'The display name, "" while unknown.' },
    messages: { type: 'array', items: messageSchema, description: 'Oldest first.' },
  },
} as const;

const daySchema = {
  type: 'string',
  format: 'date',
  pattern: DAY_PATTERN.source,
} as const;

export const messagesRouteSchema = {
  operationId: 'getMessages',
  summary: "A hub's contacts and their messages, for whole days in the hub's time zone",
  description:
    'Contacts in the order the hub first saw them, each with its messages oldest first; only contacts ' +
    'with a message in the range. HEAD answers the same headers without the body. Accept-Encoding br or ' +
    'gzip compresses the answer; the weak ETag answers If-None-Match with 304. A key with a rate limit ' +
    'adds RateLimit-Policy and RateLimit headers to every answer.',
  'x-check-order': MESSAGES_CHECK_ORDER,
  tags: ['read'],
  security: [{ readKey: [] }],
  params: {
    type: 'object',
    required: ['hubId'],
    properties: { hubId: hubIdSchema },
  },
  querystring: {
    type: 'object',
    required: ['apikey'],
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: 'An API key of scope read issued for this hub on the account screen.',
      },
      from: {
        ...daySchema,
        description: "First day, included, in the hub's time zone.",
        examples: ['2024-01-01'],
      },
      to: { ...daySchema, description: 'Last day, included.', examples: ['2024-01-31'] },
      tz: {
        type: 'string',
        description:
          "Read from and to in this IANA time zone instead of the hub's: a canonical name (Asia/Tokyo), a " +
          'tzdb link (Japan, US/Pacific) or UTC. Abbreviations (JST, CST, PST, EST...) are ambiguous and ' +
          'refused with invalid_time_zone.',
      },
    },
  },
  response: {
    // Every answer of the route depends on Accept-Encoding (br, gzip or none), errors included.
    ...varyingOn('Accept-Encoding', {
      200: {
        description: 'The contacts with a message in the range.',
        headers: {
          ETag: { type: 'string', required: true, description: 'Weak; send it back in If-None-Match.' },
          RateLimit: { type: 'string', description: 'Only for a key with a rate limit: what is left.' },
          'RateLimit-Policy': { type: 'string', description: 'Only for a key with a rate limit: the limit.' },
        },
        type: 'array',
        items: contactSchema,
        examples: [
          [
            {
              lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
              vid: '101',
              name: 'shinobu',
              messages: [
                {
                  sender: 'shinobu',
                  msg: 'こんにちは！',
                  contentType: 'text',
                  createdAt: '2019-11-03T01:02:11.120Z',
                },
                {
                  sender: 'You',
                  msg: '[Sticker]\nID: 1',
                  contentType: 'sticker',
                  createdAt: '2019-11-03T01:06:45.000Z',
                },
              ],
            },
          ],
        ],
      },
      304: {
        description: 'Not modified since the ETag sent in If-None-Match.',
        headers: { ETag: { type: 'string', required: true, description: 'The same ETag.' } },
        type: 'null',
      },
      400: errorResponse('A bad hub id, parameter, date, range or time zone.', [
        'invalid_hub_id',
        'duplicate_parameter',
        'invalid_date',
        'invalid_range',
        'invalid_time_zone',
        'bad_request',
      ]),
      401: errorResponse('No key, or not a live read key of this service (an ingest key is not one).', [
        'missing_api_key',
        'invalid_api_key',
      ]),
      403: errorResponse('The key belongs to another hub.', ['forbidden']),
      405: methodNotAllowedResponse('GET, HEAD'),
      429: rateLimitedResponse,
      500: internalErrorResponse,
      503: unavailableResponse,
    }),
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;
