/**
 * Route schemas of the data that comes in: the LINE webhook and the ingest API. The ingest API's
 * bodies and parameters are validated by these schemas (after the key check, which runs on the
 * headers before any body is read); the webhook's body is read only once its signature is verified,
 * so its schema documents LINE's shape and line.webhook.ts reads it leniently.
 */
import type { FastifySchema } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { RFC3339_DATE_TIME_PATTERN } from '../../lib/calendar.js';
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

/** 1,000 (the summary below says so in words). */
const MAX_INGEST_MESSAGES = 1000;
const MAX_TEXT = 100_000;
const MAX_ID = 200;
const MAX_VID = 100;

export const accountMessageSchema = {
  type: 'object',
  required: ['lineId', 'msg'],
  properties: {
    lineId: { type: 'string', minLength: 1, maxLength: MAX_ID, description: 'The LINE friend.' },
    msg: {
      type: 'string',
      maxLength: MAX_TEXT,
      description: 'The text, stored and answered as given (see Message.msg for the forms of other content).',
    },
    // The defaults are stated in words, not as `default`: code generators (openapi-typescript) read a
    // field with a default as one the request must send. The ingest use case applies them.
    contentType: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 50,
      description: 'The kind of content ("text", "sticker", "image"...); "text" when absent or null.',
      examples: ['text'],
    },
    sender: {
      type: ['string', 'null'],
      maxLength: MAX_ID,
      description: 'Who sent it, as the read API will show it; "You" when absent or null.',
    },
    id: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: MAX_ID,
      description: 'Your id for the message: sent twice, stored once.',
    },
    createdAt: {
      type: ['string', 'null'],
      maxLength: 100,
      format: 'date-time',
      pattern: RFC3339_DATE_TIME_PATTERN,
      description:
        'When the message was sent: any RFC 3339 date-time (`T`/`Z` in either case, any number of fraction digits, a leap second `23:59:60` UTC, `Z` or `±HH:MM`), from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. Stored to the millisecond: further fraction digits are truncated, not rounded; a leap second is kept as 23:59:59.999 UTC. When the message arrives if absent.',
      examples: ['2019-11-03T10:15:00.000Z', '2019-11-03T19:15:00.123456+09:00'],
    },
  },
} as const;

export type AccountMessage = FromSchema<typeof accountMessageSchema>;

export const contactLinkBodySchema = {
  type: 'object',
  properties: {
    vid: {
      type: ['string', 'integer', 'null'],
      maxLength: MAX_VID,
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'The HubSpot contact id; a whole number is stored as its decimal string.',
    },
    name: { type: ['string', 'null'], maxLength: MAX_ID, description: 'The display name.' },
  },
  examples: [{ vid: '101', name: 'shinobu' }],
} as const;

export type ContactLinkBody = FromSchema<typeof contactLinkBodySchema>;

export const contactLinkSchema = {
  type: 'object',
  required: ['lineId', 'vid', 'name'],
  properties: { lineId: { type: 'string' }, vid: { type: 'string' }, name: { type: 'string' } },
} as const;

/** What every route that reads a JSON body can also answer. */
const jsonBodyRefusals = {
  415: errorResponse('The body is not sent as Content-Type: application/json.', ['unsupported_media_type']),
  500: internalErrorResponse,
  503: unavailableResponse,
} as const;

const keyRefusals = {
  401: {
    ...errorResponse('No key, or not a live ingest key.', ['missing_api_key', 'invalid_api_key']),
    headers: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="chatlog"' } },
  },
  403: errorResponse('The key belongs to another hub.', ['forbidden']),
  429: rateLimitedResponse,
} as const;

export const webhookRouteSchema = {
  operationId: 'receiveLineWebhook',
  summary: 'The LINE Messaging API webhook of a hub',
  description:
    "LINE's own schema of the body applies (events of any type, fields chatlog does not know are kept " +
    'out of the way, never refused). The signature is checked before the body is read; 200 means every ' +
    'event is stored, or was already.',
  tags: ['webhook'],
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  headers: {
    type: 'object',
    required: ['x-line-signature'],
    properties: {
      'x-line-signature': {
        type: 'string',
        description: 'Base64 HMAC-SHA256 of the raw body under the channel secret.',
      },
    },
  },
  body: {
    type: 'object',
    required: ['events'],
    properties: {
      destination: { type: 'string', description: 'The bot user id of the channel.' },
      events: {
        type: 'array',
        // Open: LINE's events carry fields chatlog does not read (a closed `{type: object}` makes
        // generated clients type each event as an object with no field at all).
        items: { type: 'object', additionalProperties: true },
        description:
          'Webhook events as LINE sends them. Message events (text, sticker, image, video, audio, file, ' +
          "location) are stored; follow events ask LINE for the friend's name; others are accepted and ignored.",
      },
    },
    examples: [
      {
        destination: 'U0123456789abcdef0123456789abcdef',
        events: [
          {
            type: 'message',
            mode: 'active',
            timestamp: 1572742931120,
            source: { type: 'user', userId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3' },
            webhookEventId: '01FZ74A0TDDPYRVKNK77XKC3ZR',
            deliveryContext: { isRedelivery: false },
            replyToken: '757913772c4646b784d4b7ce46d12671',
            message: {
              id: '444573844083572737',
              type: 'text',
              quoteToken: 'q3Plxr4AgKd',
              text: 'こんにちは！',
            },
          },
          {
            type: 'message',
            mode: 'active',
            timestamp: 1572743205000,
            source: { type: 'user', userId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3' },
            webhookEventId: '01FZ74ASS536FW97EX38NKCZQK',
            deliveryContext: { isRedelivery: false },
            replyToken: 'b60d432864f44d079f6d8efe86cf404b',
            message: { id: '444573844083572738', type: 'sticker', packageId: '446', stickerId: '1988' },
          },
        ],
      },
    ],
  },
  response: {
    200: { description: 'Every event is stored (or was already).', type: 'object' },
    400: errorResponse('A correctly signed body that is not a webhook body.', ['invalid_body']),
    401: errorResponse('A missing or wrong signature, or an unknown hub.', ['invalid_signature']),
    404: errorResponse('No hub id in the path (/webhooks/line/).', ['not_found']),
    405: methodNotAllowedResponse('POST'),
    413: errorResponse('Bodies are limited to 1 MiB.', ['payload_too_large']),
    ...beforeAnyRouteResponses,
    ...jsonBodyRefusals,
  },
} as const satisfies FastifySchema;

export const recordMessagesRouteSchema = {
  operationId: 'recordMessages',
  summary: 'Messages sent from the account side (at most 1,000), stored all or nothing',
  description:
    'Authorization: Bearer <ingest key>. The key is checked before the body is read. A message sent ' +
    'again with the same id is stored once and counted as a duplicate.',
  tags: ['ingest'],
  security: [{ ingestKey: [] }],
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  body: {
    type: 'array',
    maxItems: MAX_INGEST_MESSAGES,
    items: accountMessageSchema,
    examples: [
      [
        { lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3', msg: 'Thanks, see you on the 10th!', id: 'crm-8812' },
        {
          lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
          msg: '[Sticker]\nID: 1988',
          contentType: 'sticker',
          sender: 'Reservations desk',
          id: 'crm-8813',
          createdAt: '2019-11-03T19:15:00.123456+09:00',
        },
      ],
    ],
  },
  response: {
    // Every answer from the key check on depends on Authorization, refusals included.
    ...varyingOn('Authorization', {
      200: {
        description: 'Stored; messages whose id was already stored are counted as duplicates.',
        type: 'object',
        required: ['stored', 'duplicates'],
        properties: { stored: { type: 'integer' }, duplicates: { type: 'integer' } },
      },
      400: errorResponse('A bad body (the message names the item and field) or hub id.', [
        'invalid_body',
        'invalid_hub_id',
      ]),
      ...keyRefusals,
      413: errorResponse('The body is larger than 16 MiB.', ['payload_too_large']),
      ...jsonBodyRefusals,
    }),
    // Answered before any key is looked at.
    405: methodNotAllowedResponse('POST'),
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;

export const linkContactRouteSchema = {
  operationId: 'linkContact',
  summary: 'Link a LINE friend to a HubSpot contact (vid) and set its name',
  description:
    'Authorization: Bearer <ingest key>. Fields left out keep their value; the answer is the contact as it now is.',
  tags: ['ingest'],
  security: [{ ingestKey: [] }],
  params: {
    type: 'object',
    required: ['hubId', 'lineId'],
    properties: {
      hubId: hubIdSchema,
      lineId: { type: 'string', minLength: 1, maxLength: MAX_ID, description: 'The LINE friend.' },
    },
  },
  body: contactLinkBodySchema,
  response: {
    // Every answer from the key check on depends on Authorization, refusals included.
    ...varyingOn('Authorization', {
      200: { description: 'The contact as it now is.', ...contactLinkSchema },
      400: errorResponse('A bad body or id.', ['invalid_body', 'invalid_hub_id']),
      ...keyRefusals,
      413: errorResponse('The body is larger than 1 MiB.', ['payload_too_large']),
      ...jsonBodyRefusals,
    }),
    // Answered before any key is looked at.
    404: errorResponse('No LINE id in the path (/ingest/line/{hubId}/contacts/).', ['not_found']),
    405: methodNotAllowedResponse('PUT'),
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;
