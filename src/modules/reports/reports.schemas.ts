/**
 * The reports route's schema: GET /api/line/:hubId/reports (CONTRACT §17). Its parameters are
 * checked by checkReportRequest in the contract's order; the schema states the same rules for the
 * document.
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
import { MAX_REPORT_DAYS, REPORT_CHECK_ORDER } from './reports.usecases.js';

const day = { type: 'string', format: 'date', pattern: '^\\d{4}-\\d\\d-\\d\\d$' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const seconds = { type: ['number', 'null'], minimum: 0 } as const;

const figures = {
  fromFriends: { ...count, description: 'Messages from friends (every sender but You).' },
  fromAccount: { ...count, description: 'Messages from the account (sender You).' },
  contacts: { ...count, description: 'Contacts with at least one message.' },
  newContacts: { ...count, description: 'Contacts whose first message ever (of those kept) falls here.' },
  waits: {
    ...count,
    description:
      "Waits that start here: a friend's message that is the contact's first, or follows one from the account.",
  },
  answered: {
    ...count,
    description: 'Of those waits, the ones the account answered before the end of the day `to`.',
  },
  unanswered: { ...count, description: 'Of those waits, the ones not answered by the end of the day `to`.' },
  responseSeconds: {
    type: 'object',
    required: ['median', 'p90'],
    additionalProperties: false,
    description:
      "The answered waits' response times in seconds (milliseconds as the fraction), nearest rank; null when none was answered.",
    properties: { median: seconds, p90: seconds },
  },
} as const;
const FIGURES = Object.keys(figures) as Array<keyof typeof figures>;

export const reportRouteSchema = {
  operationId: 'getReport',
  summary: 'How well the account answers: messages, contacts, waits and response times per day',
  description:
    'Per contact, over all of its messages in the order GET /messages gives them, a wait starts at a ' +
    "message from the friend that is the contact's first or follows one from the account, and ends at the next " +
    'message from the account; it belongs to the day it starts on. Days are those of the hub (or `tz`); every ' +
    'day of the range is listed, oldest first. `hours[w][h]` counts messages from friends by weekday (0 = ' +
    'Monday) and hour. Figures reflect every write already answered. The key goes in `Authorization: Bearer ' +
    '<key>` (kept out of access logs) or in `apikey`, not both.',
  'x-check-order': REPORT_CHECK_ORDER,
  tags: ['reports'],
  security: [{ bearerKey: [] }, { queryKey: [] }],
  params: { type: 'object', required: ['hubId'], properties: { hubId: hubIdSchema } },
  querystring: {
    type: 'object',
    required: ['from', 'to'],
    properties: {
      apikey: {
        type: 'string',
        pattern: KEY_PATTERN.source,
        description: 'An API key of scope read for this hub, unless it is sent in Authorization.',
      },
      from: {
        ...day,
        description: "The first day (inclusive), in the hub's time zone or tz.",
        examples: ['2026-11-01'],
      },
      to: {
        ...day,
        description: `The last day (inclusive): at most ${MAX_REPORT_DAYS} days, both counted.`,
        examples: ['2026-11-28'],
      },
      tz: { type: 'string', description: 'An IANA time zone that reads the days for this request.' },
    },
  },
  response: {
    200: {
      description: "The range's figures: totals, one row a day, and the weekday × hour grid.",
      headers: {
        RateLimit: { type: 'string', description: 'Only for a key with a rate limit: what is left.' },
        'RateLimit-Policy': { type: 'string', description: 'Only for a key with a rate limit: the limit.' },
      },
      type: 'object',
      required: ['hubId', 'timeZone', 'from', 'to', 'totals', 'days', 'hours'],
      additionalProperties: false,
      properties: {
        hubId: { type: 'string' },
        timeZone: { type: 'string', description: 'The zone the days are read in (tz when given).' },
        from: day,
        to: day,
        totals: {
          type: 'object',
          required: FIGURES,
          additionalProperties: false,
          description: 'The whole range (contacts: those with a message in it).',
          properties: figures,
        },
        days: {
          type: 'array',
          description: 'Every day of the range, oldest first; empty days with zeros and null response times.',
          items: {
            type: 'object',
            required: ['day', ...FIGURES],
            additionalProperties: false,
            properties: { day, ...figures },
          },
        },
        hours: {
          type: 'array',
          minItems: 7,
          maxItems: 7,
          description:
            'Messages from friends by weekday (0 = Monday … 6 = Sunday), then hour (0-23), in the zone.',
          items: { type: 'array', minItems: 24, maxItems: 24, items: count },
        },
      },
    },
    400: errorResponse('Both kinds of credentials, a bad hub id, or a bad parameter.', [
      'ambiguous_credentials',
      'invalid_hub_id',
      'duplicate_parameter',
      'invalid_date',
      'invalid_range',
      'range_too_long',
      'invalid_time_zone',
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
