/**
 * What route schemas are made of. Every route of the client API declares a Fastify `schema`: its
 * parameters, body and answers as JSON Schema, plus `operationId`, `summary` and `description`.
 * The same objects validate request bodies (ajv, compiled on first use) and make the OpenAPI
 * document (modules/docs), so the document cannot say one thing while the server checks another.
 */
import type { FastifySchemaValidationError } from 'fastify';
import { RFC3339_DATE_TIME_PATTERN, TIMESTAMP_RULE } from './calendar.js';
import { type AppError, ERROR_CODES, type ErrorCode } from './errors.js';
import { httpErrors } from './http.errors.js';
import { impossibleDay, notARealDate } from './real-date.js';

declare module 'fastify' {
  interface FastifySchema {
    /** Present on every operation of the client API; routes without one are not in the document. */
    operationId?: string;
    summary?: string;
    description?: string;
    /** The security schemes of the document (readKey, ingestKey) the operation takes; none if absent. */
    security?: ReadonlyArray<Record<string, readonly string[]>>;
    /** The document's tags (read, ingest, webhook, health) the operation is listed under. */
    tags?: readonly string[];
    /** Error codes in the order the checks run: the first check that fails answers. */
    'x-check-order'?: readonly ErrorCode[];
  }
}

/** The error body with the codes one status can carry. */
function errorBodySchema(codes: readonly ErrorCode[]) {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: [...codes] },
          message: { type: 'string', description: 'A sentence for people; may change.' },
        },
      },
    },
  } as const;
}

/** The Error component of the document: every code a client can see. */
export const errorSchema = errorBodySchema(ERROR_CODES);

/** A response entry: what it means, and the codes it carries. */
export function errorResponse(description: string, codes: readonly ErrorCode[]) {
  return { description, ...errorBodySchema(codes) };
}

export const unavailableResponse = {
  ...errorResponse('The store cannot answer now; retry after Retry-After seconds.', ['unavailable']),
  headers: { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
} as const;

export const requestTimeoutResponse = errorResponse(
  'The request did not arrive whole within the time allowed; the connection is closed.',
  ['request_timeout'],
);

/** Answered by Node's HTTP server on any path, before any route (or key check) is reached. */
export const beforeAnyRouteResponses = {
  408: requestTimeoutResponse,
  431: errorResponse('The request line or headers are over 16 KiB.', ['request_header_too_large']),
} as const;

export const internalErrorResponse = errorResponse('An unexpected fault, logged on the server.', [
  'internal_error',
]);

/**
 * The answers of a route, each with the Vary header its answers carry: the request header the answer
 * depends on (Accept-Encoding on the read API, Authorization on the ingest API).
 */
export function varyingOn<Answers extends Record<number, object>>(header: string, answers: Answers): Answers {
  const vary = { type: 'string', required: true, description: `"${header}"` };
  return Object.fromEntries(
    Object.entries(answers).map(([status, answer]) => {
      const headers = 'headers' in answer && typeof answer.headers === 'object' ? answer.headers : {};
      return [status, { ...answer, headers: { ...headers, Vary: vary } }];
    }),
  ) as Answers;
}

/** 405, with the Allow header that lists the methods the path takes. */
export function methodNotAllowedResponse(allowed: string) {
  return {
    ...errorResponse(`Only ${allowed}.`, ['method_not_allowed']),
    headers: { Allow: { type: 'string', description: `"${allowed}"` } },
  } as const;
}

/** 429, with when to retry. */
export const rateLimitedResponse = {
  ...errorResponse("The key's rate limit is used up.", ['rate_limited']),
  headers: {
    'Retry-After': { type: 'integer', description: 'Seconds until the key may ask again.' },
    RateLimit: { type: 'string', description: 'The remaining quota (IETF RateLimit header fields).' },
    'RateLimit-Policy': { type: 'string', description: "The key's limit." },
  },
} as const;

/**
 * For routes whose checks must run in an order a schema validator cannot keep (the read API's
 * CONTRACT §1 order, the webhook's signature before its body): their schemas document those checks,
 * and tests hold schema and checks to the same rules; Fastify does not validate them.
 */
export const checkedByHandler = () => () => true;

/** "body", "body[3].msg", "params.lineId": where in the request a validation error points. */
function locate(dataVar: string, instancePath: string): string {
  const steps = instancePath.split('/').slice(1);
  return steps.reduce(
    (where, step) => (/^\d+$/.test(step) ? `${where}[${step}]` : `${where}.${step}`),
    dataVar,
  );
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  object: 'a JSON object',
  array: 'a JSON array',
  boolean: 'true or false',
};

function describeTypes(type: unknown): string {
  const types = (Array.isArray(type) ? type : [type]).filter((t) => t !== 'null');
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');
}

/** The values a field may take, as they are written in JSON: "message.created", "contact.erased". */
function describeValues(values: unknown): string {
  return (Array.isArray(values) ? values : [values]).map((value) => JSON.stringify(value)).join(', ');
}

/** An impossible day (`2019-02-30T…`) in the words used everywhere; else what a date-time must be. */
function describeDateTimeError(where: string, error: FastifySchemaValidationError): string {
  // ajv's verbose errors carry the value refused.
  const value = (error as { data?: unknown }).data;
  const day = typeof value === 'string' ? impossibleDay(value) : undefined;
  return day ? notARealDate(where, day) : `${where}: ${TIMESTAMP_RULE}`;
}

/** One ajv error as a sentence that names the item and field, e.g. "body[1].msg: must be a string". */
function describeValidationError(error: FastifySchemaValidationError, dataVar: string): string {
  const where = locate(dataVar, error.instancePath);
  const params = error.params;
  switch (error.keyword) {
    case 'required':
      return `${where}.${String(params.missingProperty)}: is required`;
    case 'type':
      return `${where}: must be ${describeTypes(params.type)}`;
    case 'minLength':
      return params.limit === 1
        ? `${where}: must not be empty`
        : `${where}: must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `${where}: must be at most ${String(params.limit)} characters`;
    case 'maxItems':
      return `${where}: must hold at most ${String(params.limit)} items`;
    case 'minimum':
    case 'maximum':
      return `${where}: must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}`;
    case 'format':
      return params.format === 'date-time'
        ? describeDateTimeError(where, error)
        : `${where}: must be a ${String(params.format)}`;
    case 'enum':
      return `${where}: must be one of ${describeValues(params.allowedValues)}`;
    case 'const':
      return `${where}: must be ${describeValues([params.allowedValue])}`;
    case 'pattern':
      return params.pattern === RFC3339_DATE_TIME_PATTERN
        ? describeDateTimeError(where, error)
        : `${where}: is not of the expected form`;
    default:
      return `${where}: ${error.message ?? 'is not valid'}`;
  }
}

/** Fastify's schemaErrorFormatter: the first validation error as the contract's invalid_body. */
export function validationErrorToAppError(errors: FastifySchemaValidationError[], dataVar: string): AppError {
  const first = errors[0];
  return httpErrors.invalidBody(first ? describeValidationError(first, dataVar) : `${dataVar}: is not valid`);
}
