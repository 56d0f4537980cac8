/**
 * Every error a client can see: a stable code, an HTTP status and a human sentence.
 * Nothing else reaches a client; 5xx bodies never carry internals.
 *
 * The status follows from the code (ERROR_STATUS), so an error is made by naming its code and its
 * sentence. Each module makes its own errors with small factories (`<module>.errors.ts`, as
 * Papra's server does): a sentence is written once, and the routes and the command line throw the
 * same errors (the command line prints a 4xx error's message as one line and exits 1).
 */
/** Every error code a client can see (the OpenAPI document lists them from here). */
export const ERROR_CODES = [
  'missing_api_key',
  'invalid_api_key',
  'invalid_signature',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'invalid_date',
  'invalid_range',
  'range_too_long',
  'invalid_time_zone',
  'ambiguous_credentials',
  'insufficient_scope',
  'invalid_cursor',
  'invalid_limit',
  'invalid_wait',
  'cursor_expired',
  'invalid_query',
  'invalid_url',
  'content_pending',
  'content_not_found',
  'range_not_satisfiable',
  'contact_not_found',
  'no_channel_access_token',
  'rate_limited',
  'method_not_allowed',
  'not_found',
  'bad_request',
  'invalid_body',
  'payload_too_large',
  'unsupported_media_type',
  'request_header_too_large',
  'request_timeout',
  'internal_error',
  'unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The HTTP status of each code: the one place a status is chosen. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_signature: 401,
  invalid_hub_id: 400,
  forbidden: 403,
  duplicate_parameter: 400,
  invalid_date: 400,
  invalid_range: 400,
  range_too_long: 400,
  invalid_time_zone: 400,
  ambiguous_credentials: 400,
  insufficient_scope: 403,
  invalid_cursor: 400,
  invalid_limit: 400,
  invalid_wait: 400,
  cursor_expired: 410,
  invalid_query: 400,
  invalid_url: 400,
  // Not a failure: the download is still to come (CONTRACT §11); the body says so like an error's.
  content_pending: 202,
  content_not_found: 404,
  range_not_satisfiable: 416,
  contact_not_found: 404,
  no_channel_access_token: 409,
  rate_limited: 429,
  method_not_allowed: 405,
  not_found: 404,
  // Except the framework's refusals without a code of their own (AppError.withFrameworkStatus).
  bad_request: 400,
  invalid_body: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_header_too_large: 431,
  request_timeout: 408,
  internal_error: 500,
  unavailable: 503,
};

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }

  /**
   * The one exception to ERROR_STATUS: a 4xx of Fastify's or Node's that chatlog has no code for is
   * answered as bad_request with the status the framework chose (its meaning is in the status).
   */
  static withFrameworkStatus(status: number, message: string): AppError {
    const error = new AppError('bad_request', message);
    (error as { status: number }).status = status;
    return error;
  }

  /** The same error, its answer carrying these headers too (a key's rate-limit fields, say). */
  withHeaders(headers: Record<string, string>): AppError {
    const error = new AppError(this.code, this.message, { ...this.headers, ...headers });
    (error as { status: number }).status = this.status;
    return error;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message } };
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** True for an error whose message is meant for the person who made the request (a 4xx). */
export function isClientError(error: unknown): error is AppError {
  return error instanceof AppError && error.status < 500;
}

/**
 * A mistake made at the command line that has no HTTP counterpart (an option missing, a setting
 * out of range): printed as one line, exit code 1, as a 4xx AppError is.
 */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

/** One line saying why a start failed (a port in use reads better than its errno). */
export function describeStartFailure(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  if (err?.code === 'EADDRINUSE') {
    const port = (err as { port?: number }).port;
    return `the address is already in use (${err.message}): stop what listens on port ${port ?? '(the one asked for)'} or choose another port with --port (or PORT)`;
  }
  return err?.message ?? String(error);
}
