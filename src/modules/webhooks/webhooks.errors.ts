/** The outgoing webhooks' own refusals (CONTRACT §10); the key's are in keys/. */
import { AppError } from '../../lib/errors.js';
import { httpErrors } from '../../lib/http.errors.js';
import { CHANGE_TYPES } from '../../store/store.js';

export const webhookErrors = {
  methodNotAllowed: (allowed: string) => httpErrors.methodNotAllowed(allowed),
  /** Why the URL is refused, in the words of the URL rules (webhooks.url.ts): never the resolved secret parts. */
  invalidUrl: (reason: string) => new AppError('invalid_url', `url is refused: ${reason}`),
  invalidEvents: () =>
    new AppError(
      'invalid_body',
      `events must be a non-empty list of change types without repeats: ${CHANGE_TYPES.join(', ')}`,
    ),
  notFound: (id: string) => new AppError('not_found', `this hub has no webhook endpoint ${id.slice(0, 80)}`),
  unknownEndpoint: (id: string) =>
    new AppError('not_found', `no webhook endpoint has the id ${id.slice(0, 80)}`),
  invalidCursor: () => new AppError('bad_request', "the cursor is not one of this hub's cursors"),
};
