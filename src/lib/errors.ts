/**
 * Every error a client can see: a stable code, an HTTP status and a human sentence.
 * Nothing else reaches a client; 5xx bodies never carry internals.
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
  'invalid_time_zone',
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

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message } };
  }
}

/** The one refusal of a body that is not sent as JSON, on every endpoint that takes JSON. */
export function notJsonBody(): AppError {
  return new AppError(
    'unsupported_media_type',
    415,
    'the request body must be sent with Content-Type: application/json',
  );
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** A mistake of the person at the command line: printed as one line, exit code 1. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

/** One line saying why a start failed (a port in use reads better than its errno). */
export function describeStartFailure(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  if (err?.code === 'EADDRINUSE') return `the address is already in use (${err.message})`;
  return err?.message ?? String(error);
}
