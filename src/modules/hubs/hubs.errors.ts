/** The errors of hub settings, for the API and the command line alike. */
import { TIME_ZONE_RULE } from '../../lib/calendar.js';
import { AppError } from '../../lib/errors.js';

export const hubErrors = {
  /** A path's :hubId that is not one (the read and ingest APIs). */
  invalidId: () => new AppError('invalid_hub_id', 'hubId must be 1 to 20 digits'),
  /** A hub id given on the command line, echoed so a slip is seen. */
  invalidIdGiven: (text: string) =>
    new AppError('invalid_hub_id', `hub id must be 1 to 20 digits, got "${text}"`),
  notFound: (hubId: string) =>
    new AppError('not_found', `hub ${hubId} does not exist; create it with: ./bin/chatlog hub add ${hubId}`),
  invalidTimeZone: (given: string) =>
    new AppError('invalid_time_zone', `the time zone ${TIME_ZONE_RULE}; got "${given.slice(0, 64)}"`),
  invalidChannelSecret: () =>
    new AppError('bad_request', 'the LINE channel secret must be 8 to 256 printable ASCII characters'),
  invalidRetentionDays: (given: string) =>
    new AppError(
      'bad_request',
      `--retention-days: "${given.slice(0, 20)}" is not a whole number of days from 0 (keep everything) to 36500`,
    ),
  invalidAccessToken: () =>
    new AppError('bad_request', 'the LINE channel access token must be 8 to 2048 printable ASCII characters'),
};
