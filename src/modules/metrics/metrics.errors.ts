/** /metrics' refusal of a request without the token it requires. */
import { AppError } from '../../lib/errors.js';

export const metricsErrors = {
  tokenRequired: () =>
    new AppError('forbidden', 'metrics need Authorization: Bearer <CHATLOG_METRICS_TOKEN>'),
};
