/** The refusals of the contacts' admin API (CONTRACT §13); the key's are in keys/. */
import { AppError } from '../../lib/errors.js';

export const contactErrors = {
  notFound: (lineId: string) =>
    new AppError('contact_not_found', `this hub has no contact ${lineId.slice(0, 100)} (nothing was erased)`),
  methodNotAllowed: () =>
    new AppError('method_not_allowed', 'only DELETE is allowed on this path', { Allow: 'DELETE' }),
};
