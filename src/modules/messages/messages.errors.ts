/** The read API's own refusals (CONTRACT §1 rows 5 to 7 and the tz extension; the key's are in keys/). */
import { TIME_ZONE_RULE } from '../../lib/calendar.js';
import { AppError } from '../../lib/errors.js';
import { badDayMessage } from '../../lib/real-date.js';

export const messageErrors = {
  /** Before any check (CONTRACT §1); the path's answers all vary by Accept-Encoding. */
  methodNotAllowed: () =>
    new AppError('method_not_allowed', 'only GET and HEAD are allowed on this path', {
      Allow: 'GET, HEAD',
      Vary: 'Accept-Encoding',
    }),
  duplicateParameter: (name: string) =>
    new AppError('duplicate_parameter', `${name} must be given at most once`),
  /** `name`: the parameter as the asker wrote it (`from`, or `--from` on the command line). */
  invalidDate: (name: string, text: string) => new AppError('invalid_date', badDayMessage(name, text)),
  invalidRange: (from = 'from', to = 'to') =>
    new AppError('invalid_range', `${from} must not be later than ${to}`),
  /** The API does not echo the zone given; the command line does (`given`), so a slip is seen. */
  invalidTimeZone: (name = 'tz', given?: string) =>
    new AppError(
      'invalid_time_zone',
      `${name} ${TIME_ZONE_RULE}${given === undefined ? '' : `; got "${given.slice(0, 64)}"`}`,
    ),
};
