/** The content endpoint's own answers besides the bytes (CONTRACT §11); the key's are in keys/. */
import { AppError } from '../../lib/errors.js';

export const contentErrors = {
  methodNotAllowed: () =>
    new AppError('method_not_allowed', 'only GET is allowed on this path', { Allow: 'GET' }),
  duplicateParameter: (name: string) =>
    new AppError('duplicate_parameter', `${name} must be given at most once`),
  notFound: (why: string) => new AppError('content_not_found', why),
  pending: (retryAfterSeconds: number) =>
    new AppError(
      'content_pending',
      'the content is still being downloaded from LINE: ask again after Retry-After seconds',
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  rangeNotSatisfiable: (size: number) =>
    new AppError('range_not_satisfiable', `the range asks for bytes past the end (the content has ${size})`, {
      'Content-Range': `bytes */${size}`,
    }),
};

/** Why there is nothing to serve, in the words a client reads. */
export const NOT_FOUND_REASONS = {
  unknown:
    'the hub has no message with this id whose content chatlog keeps (images, videos, audio and files that LINE holds)',
  gone: 'LINE no longer had this content when chatlog asked for it',
  failed: 'the content could not be downloaded from LINE (every attempt failed)',
  noToken: 'the hub has no LINE channel access token, so its content is not downloaded',
} as const;
