/** The refusals of the send API (CONTRACT §16); the key's are in keys/. */
import { AppError } from '../../lib/errors.js';

export const sendErrors = {
  contactNotFound: (lineId: string) =>
    new AppError('contact_not_found', `this hub has no contact ${lineId.slice(0, 100)} (nothing was sent)`),
  noAccessToken: () =>
    new AppError(
      'no_channel_access_token',
      'this hub has no LINE channel access token: set one (chatlog hub set <hubId> --line-channel-access-token …) to send',
    ),
  invalidBody: (field: string, why: string) => new AppError('invalid_body', `${field}: ${why}`),
  notFound: (id: string) => new AppError('not_found', `this hub has no send ${id.slice(0, 100)}`),
  methodNotAllowed: (allowed: string) =>
    new AppError('method_not_allowed', `only ${allowed} is allowed on this path`, { Allow: allowed }),
};
