/**
 * The errors of HTTP itself, the same on every path: a request the framework or Node refuses, a
 * path or method chatlog does not serve, a body that is not JSON, a fault. Module errors live in
 * `modules/<module>/<module>.errors.ts`.
 */
import { AppError } from './errors.js';

export const httpErrors = {
  /** The one refusal of a body that is not sent as JSON, on every endpoint that takes JSON. */
  notJsonBody: () =>
    new AppError(
      'unsupported_media_type',
      'the request body must be sent with Content-Type: application/json',
    ),
  bodyTooLarge: () => new AppError('payload_too_large', 'the request body is too large'),
  bodyLengthMismatch: () =>
    new AppError('invalid_body', 'the request body does not match its Content-Length'),
  bodyEmpty: () => new AppError('invalid_body', 'the request body is empty'),
  bodyNotJson: () => new AppError('invalid_body', 'the request body is not valid JSON'),
  /** A body that breaks its route's schema, in the words of lib/schemas.ts. */
  invalidBody: (sentence: string) => new AppError('invalid_body', sentence),
  notFound: () => new AppError('not_found', 'no such resource'),
  /** A path of chatlog's with a method it does not take; `allowed` as the Allow header lists them. */
  methodNotAllowed: (allowed: string) =>
    new AppError('method_not_allowed', `only ${inWords(allowed)} on this path`, { Allow: allowed }),
  /** Fastify's own 405, should it answer one (chatlog's paths declare their methods: lib/methods.ts). */
  methodNotAllowedHere: () => new AppError('method_not_allowed', 'this method is not allowed here'),
  /** Any other 4xx of the framework's, with the status it chose. */
  notUnderstood: (status = 400) =>
    AppError.withFrameworkStatus(status, 'the request could not be understood'),
  /** Refused by Node's HTTP parser, before Fastify saw a request. */
  notHttp: () => new AppError('bad_request', 'the request could not be parsed as HTTP'),
  headersTooLarge: () =>
    new AppError('request_header_too_large', 'the request line or headers are too large'),
  requestTimeout: () => new AppError('request_timeout', 'the request did not arrive in time'),
  storeUnavailable: () =>
    new AppError('unavailable', 'the message store is temporarily unavailable; retry shortly', {
      'Retry-After': '2',
    }),
  internal: () => new AppError('internal_error', 'an unexpected error occurred; it has been logged'),
};

/** `GET` → "GET is allowed"; `GET, HEAD` → "GET and HEAD are allowed"; `A, B, C` → "A, B and C are allowed". */
function inWords(allowed: string): string {
  const methods = allowed.split(',').map((method) => method.trim());
  const last = methods.pop() ?? '';
  return methods.length === 0 ? `${last} is allowed` : `${methods.join(', ')} and ${last} are allowed`;
}
