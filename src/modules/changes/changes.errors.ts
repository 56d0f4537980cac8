/** The change feed's own refusals (CONTRACT §9); the key's are in keys/. */
import { AppError } from '../../lib/errors.js';

export const changeErrors = {
  methodNotAllowed: () =>
    new AppError('method_not_allowed', 'only GET is allowed on this path', { Allow: 'GET' }),
  duplicateParameter: (name: string) =>
    new AppError('duplicate_parameter', `${name} must be given at most once`),
  invalidCursor: () =>
    new AppError(
      'invalid_cursor',
      "cursor is not one of this hub's cursors: pass the cursor of a previous answer unchanged, or none to start from the oldest change",
    ),
  invalidLimit: (max: number) =>
    new AppError('invalid_limit', `limit must be a whole number from 1 to ${max}`),
  invalidWait: (max: number) =>
    new AppError('invalid_wait', `wait must be a whole number of seconds from 0 to ${max}`),
  cursorExpired: (keepDays: number) =>
    new AppError(
      'cursor_expired',
      `changes after this cursor were dropped (deletions and contact changes are kept ${keepDays} days); read the feed again from the start, without a cursor`,
    ),
};
