/** Reports' own refusals (CONTRACT §17); the key's are in keys/, the days' are the read API's. */
import { AppError } from '../../lib/errors.js';

export const reportErrors = {
  methodNotAllowed: () =>
    new AppError('method_not_allowed', 'only GET is allowed on this path', { Allow: 'GET' }),
  dayRequired: (name: string) =>
    new AppError('invalid_date', `${name} is required: a day as YYYY-MM-DD, such as 2026-11-01`),
  rangeTooLong: (max: number) =>
    new AppError('range_too_long', `a report covers at most ${max} days, from and to included`),
};
