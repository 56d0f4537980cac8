/**
 * The content endpoint's route schema: GET /api/line/:hubId/content/:messageId. Its parameters are
 * checked by findContent in the contract's order; the schema states the same rules for the document.
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
import { CONTENT_CHECK_ORDER } from './content.usecases.js';

const bytes = {
  description: "The content's bytes, as LINE gave them.",
  // Any media type: the one LINE gave (image/jpeg, video/mp4, application/pdf, ...).
  content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
};

const contentHeaders = {
  ETag: { type: 'string', description: 'Strong: the SHA-256 of the bytes, in quotes.' },
  'Content-Type': { type: 'string', description: 'As LINE gave it (image/jpeg, video/mp4, ...).' },
  'Content-Length': { type: 'integer' },
  'Accept-Ranges': { type: 'string', enum: ['bytes'] },
  'Content-Disposition': {
    type: 'string',
    description:
      'For files only: attachment, with the file name in filename* (RFC 6266, UTF-8) and an ASCII fallback in filename.',
  },
  RateLimit: { type: 'string', description: 'Only for a key with a rate limit: what is left.' },
} as const;

export const contentRouteSchema = {
  operationId: 'getContent',
  summary: "A media message's content: the bytes LINE deletes after a while, kept by chatlog",
  description:
    'The bytes of an image, video, audio or file message whose content LINE held, downloaded by chatlog ' +
    'after the message came. 202 `content_pending` (with `Retry-After`) until the download is done. One byte ' +
    'range (`Range: bytes=...`) is answered 206; several ranges are answered whole. ' +
    'The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.',
  'x-check-order': CONTENT_CHECK_ORDER,
  tags: ['content'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: {
    type: 'object',
    required: ['hubId', 'messageId'],
    properties: {
      hubId: hubIdSchema,
      messageId: {
        type: 'string',
        description: "The message's id, as the change feed gives it (LINE's message id for LINE messages).",
      },
    },
  },
  querystring: {
    type: 'object',
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: 'An API key of scope read for this hub, unless it is sent in Authorization.',
      },
    },
  },
  headers: {
    type: 'object',
    properties: {
      range: {
        type: 'string',
        description: 'One byte range: bytes=FIRST-LAST, bytes=FIRST- or bytes=-COUNT.',
      },
      'if-none-match': {
        type: 'string',
        description: 'The ETag of a copy you have: 304 when it is current.',
      },
      'if-range': {
        type: 'string',
        description: 'The ETag of a copy you have part of: the range only of the same bytes.',
      },
    },
  },
  response: {
    200: { ...bytes, headers: contentHeaders },
    202: errorResponse('The download from LINE is still to come: ask again after Retry-After seconds.', [
      'content_pending',
    ]),
    206: {
      description: 'The byte range asked for.',
      content: bytes.content,
      headers: {
        ...contentHeaders,
        'Content-Range': { type: 'string', description: 'bytes FIRST-LAST/SIZE' },
      },
    },
    304: { description: 'The copy named by If-None-Match is current.', type: 'null' },
    400: errorResponse('Both kinds of credentials, a bad hub id, or a repeated parameter.', [
      'ambiguous_credentials',
      'invalid_hub_id',
      'duplicate_parameter',
      'bad_request',
    ]),
    401: errorResponse('No key, or not a live key of this service.', ['missing_api_key', 'invalid_api_key']),
    403: errorResponse('A key of another scope, or of another hub.', ['insufficient_scope', 'forbidden']),
    404: errorResponse(
      'No message with this id whose content chatlog keeps, content LINE no longer had, or a download that failed.',
      ['content_not_found'],
    ),
    405: methodNotAllowedResponse('GET'),
    416: errorResponse('The range starts past the end (Content-Range: bytes */SIZE).', [
      'range_not_satisfiable',
    ]),
    429: rateLimitedResponse,
    500: internalErrorResponse,
    503: unavailableResponse,
    ...beforeAnyRouteResponses,
  },
} as const satisfies FastifySchema;
