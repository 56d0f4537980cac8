/** The health checks' refusal: not ready for traffic. */
import { AppError } from '../../lib/errors.js';

export const healthErrors = {
  notReady: () =>
    new AppError('unavailable', 'the store is not reachable or its schema is not current', {
      'Retry-After': '5',
    }),
};
