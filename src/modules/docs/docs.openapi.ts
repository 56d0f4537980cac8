/**
 * The OpenAPI 3.1 document of chatlog's HTTP API (GET /openapi.json): the read API, the LINE
 * webhook, the ingest API and health, with every error code. A test checks it against the routes
 * the app really registers and the error codes it can answer, so it cannot drift from them.
 */
import { ERROR_CODES, type ErrorCode } from '../../lib/errors.js';

const errorResponse = (description: string, codes: readonly ErrorCode[]) => ({
  description: `${description} (error.code: ${codes.join(', ')})`,
  content: {
    'application/json': {
      schema: {
        allOf: [{ $ref: '#/components/schemas/Error' }],
        properties: { error: { properties: { code: { enum: [...codes] } } } },
      },
    },
  },
});

const hubId = {
  name: 'hubId',
  in: 'path',
  required: true,
  description: 'The HubSpot portal id.',
  schema: { type: 'string', pattern: '^[0-9]{1,20}$' },
};
const unavailable = errorResponse('The store cannot answer now; retry after Retry-After seconds', [
  'unavailable',
]);

/** How the ingest API refuses a key (both of its operations). */
const ingestKeyRefused = {
  '401': errorResponse('No key, or not a live ingest key', ['missing_api_key', 'invalid_api_key']),
  '403': errorResponse('The key belongs to another hub', ['forbidden']),
};

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'chatlog',
      version: '1',
      description:
        'The LINE chat messages of HubSpot portals ("hubs"), served back through one read-only JSON API.',
    },
    paths: {
      '/api/line/{hubId}/messages': {
        get: {
          operationId: 'getMessages',
          summary: "A hub's contacts and their messages, oldest first, for whole days in the hub's time zone",
          parameters: [
            hubId,
            {
              name: 'apikey',
              in: 'query',
              required: true,
              description: 'An API key of scope read issued for this hub.',
              schema: { type: 'string', pattern: '^chl_[0-9A-Za-z]{28}$' },
            },
            {
              name: 'from',
              in: 'query',
              description: 'First day, included.',
              schema: { type: 'string', format: 'date' },
            },
            {
              name: 'to',
              in: 'query',
              description: 'Last day, included.',
              schema: { type: 'string', format: 'date' },
            },
            {
              name: 'tz',
              in: 'query',
              description: "IANA time zone to read from/to in, instead of the hub's.",
              schema: { type: 'string', examples: ['Asia/Tokyo'] },
            },
          ],
          responses: {
            '200': {
              description: 'The contacts with a message in the range, in first-seen order.',
              headers: {
                ETag: { schema: { type: 'string' }, description: 'Weak; send back in If-None-Match.' },
              },
              content: {
                'application/json': {
                  schema: { type: 'array', items: { $ref: '#/components/schemas/Contact' } },
                },
              },
            },
            '304': { description: 'Not modified since the ETag sent in If-None-Match.' },
            '400': errorResponse('A bad hub id, parameter, date, range or time zone', [
              'invalid_hub_id',
              'duplicate_parameter',
              'invalid_date',
              'invalid_range',
              'invalid_time_zone',
              'bad_request',
            ]),
            '401': errorResponse('No key, or not a live read key', ['missing_api_key', 'invalid_api_key']),
            '403': errorResponse('The key belongs to another hub', ['forbidden']),
            '405': errorResponse('Only GET and HEAD', ['method_not_allowed']),
            '429': errorResponse("The key's rate limit is used up; see Retry-After", ['rate_limited']),
            '431': errorResponse('The request line or headers are too large', ['request_header_too_large']),
            '500': errorResponse('An unexpected fault, logged on the server', ['internal_error']),
            '503': unavailable,
          },
        },
      },
      '/webhooks/line/{hubId}': {
        post: {
          operationId: 'receiveLineWebhook',
          summary: "The LINE Messaging API webhook of a hub (LINE's own schema of the body applies)",
          parameters: [
            hubId,
            {
              name: 'X-Line-Signature',
              in: 'header',
              required: true,
              description: 'Base64 HMAC-SHA256 of the raw body under the channel secret.',
              schema: { type: 'string' },
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['events'],
                  properties: { destination: { type: 'string' }, events: { type: 'array', items: {} } },
                },
              },
            },
          },
          responses: {
            '200': { description: 'Every event is stored (or was already).' },
            '400': errorResponse('A signed body that is not a webhook body', ['invalid_body']),
            '401': errorResponse('A missing or wrong signature, or an unknown hub', ['invalid_signature']),
            '413': errorResponse('Bodies are limited to 1 MiB', ['payload_too_large']),
            '415': errorResponse('Not application/json', ['unsupported_media_type']),
            '503': unavailable,
          },
        },
      },
      '/ingest/line/{hubId}/messages': {
        post: {
          operationId: 'recordMessages',
          summary: 'Messages sent from the account side (at most 1,000), stored all or nothing',
          security: [{ ingestKey: [] }],
          parameters: [hubId],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'array',
                  maxItems: 1000,
                  items: { $ref: '#/components/schemas/AccountMessage' },
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'Stored; messages whose id was already stored are counted as duplicates.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { stored: { type: 'integer' }, duplicates: { type: 'integer' } },
                  },
                },
              },
            },
            '400': errorResponse('A bad body; message says which item and field', [
              'invalid_body',
              'invalid_hub_id',
            ]),
            ...ingestKeyRefused,
            '413': errorResponse('The body is too large', ['payload_too_large']),
            '415': errorResponse('Not application/json', ['unsupported_media_type']),
            '429': errorResponse("The key's rate limit is used up", ['rate_limited']),
            '503': unavailable,
          },
        },
      },
      '/ingest/line/{hubId}/contacts/{lineId}': {
        put: {
          operationId: 'linkContact',
          summary: 'Link a LINE friend to a HubSpot contact (vid) and set its name',
          security: [{ ingestKey: [] }],
          parameters: [hubId, { name: 'lineId', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    vid: { type: ['string', 'integer'], maxLength: 100 },
                    name: { type: 'string', maxLength: 200 },
                  },
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'The contact as it now is.',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/ContactLink' } } },
            },
            '400': errorResponse('A bad body or id', ['invalid_body', 'invalid_hub_id']),
            ...ingestKeyRefused,
            '503': unavailable,
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'The process runs',
          responses: { '200': { description: 'ok' } },
        },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'The store answers and its schema is current',
          responses: { '200': { description: 'ready' }, '503': unavailable },
        },
      },
    },
    components: {
      securitySchemes: {
        ingestKey: { type: 'http', scheme: 'bearer', description: 'An API key of scope ingest.' },
      },
      schemas: {
        Contact: {
          type: 'object',
          required: ['lineId', 'vid', 'name', 'messages'],
          additionalProperties: false,
          properties: {
            lineId: { type: 'string' },
            vid: { type: 'string', description: 'The HubSpot contact id, "" while unlinked.' },
            name: { type: 'string', description: 'The display name, "" while unknown.' },
            messages: { type: 'array', items: { $ref: '#/components/schemas/Message' } },
          },
        },
        Message: {
          type: 'object',
          required: ['sender', 'msg', 'contentType', 'createdAt'],
          additionalProperties: false,
          properties: {
            sender: { type: 'string', description: '"You" for the account side, else the friend\'s name.' },
            msg: { type: 'string' },
            contentType: { type: 'string', examples: ['text', 'sticker', 'image'] },
            createdAt: {
              type: 'string',
              format: 'date-time',
              pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$',
            },
          },
        },
        AccountMessage: {
          type: 'object',
          required: ['lineId', 'msg'],
          properties: {
            lineId: { type: 'string', maxLength: 200 },
            msg: { type: 'string', maxLength: 100000 },
            contentType: { type: 'string', default: 'text', maxLength: 50 },
            sender: { type: 'string', default: 'You', maxLength: 200 },
            id: {
              type: 'string',
              maxLength: 200,
              description: 'Your id for the message: sent twice, stored once.',
            },
            createdAt: { type: 'string', format: 'date-time', description: 'Default: when it arrives.' },
          },
        },
        ContactLink: {
          type: 'object',
          properties: { lineId: { type: 'string' }, vid: { type: 'string' }, name: { type: 'string' } },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { enum: [...ERROR_CODES] }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  };
}
