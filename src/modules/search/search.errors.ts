/** Search's own refusals (CONTRACT §12); the key's are in keys/, the days' are the read API's. */
import { AppError } from '../../lib/errors.js';

export const searchErrors = {
  methodNotAllowed: () =>
    new AppError('method_not_allowed', 'only GET is allowed on this path', { Allow: 'GET' }),
  invalidQuery: (maxTerms: number, maxChars: number) =>
    new AppError(
      'invalid_query',
      `q must hold 1 to ${maxTerms} words separated by spaces, each of 1 to ${maxChars} characters`,
    ),
  invalidLimit: (max: number) =>
    new AppError('invalid_limit', `limit must be a whole number from 1 to ${max}`),
  invalidCursor: () =>
    new AppError(
      'invalid_cursor',
      "cursor is not one of this search's cursors: pass the cursor of a previous answer to the same hub and q unchanged, or none to start from the newest message",
    ),
};
