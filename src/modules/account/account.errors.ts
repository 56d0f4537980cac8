/** The errors of accounts and the account screen (a 4xx of the screen is shown as a page saying why). */
import { AppError } from '../../lib/errors.js';

export const accountErrors = {
  invalidEmail: (given: string) => new AppError('bad_request', `"${given}" is not an email address`),
  noHub: () => new AppError('bad_request', 'give the account at least one hub with --hub'),
  passwordTooShort: (min: number) =>
    new AppError('bad_request', `the password must be at least ${min} characters long`),
  passwordTooLong: (max: number) =>
    new AppError('bad_request', `the password must be at most ${max} characters long`),
  hubNotFound: () => new AppError('not_found', 'no such hub on this account'),
  keyNotFound: () => new AppError('not_found', 'no such key on this account'),
  keyRevoked: () => new AppError('not_found', 'this key is revoked'),
  unknownScope: () => new AppError('invalid_body', 'unknown scope'),
  labelTooLong: () => new AppError('invalid_body', 'the label is too long'),
  crossSite: () => new AppError('forbidden', 'cross-site requests are refused'),
  signInFirst: () => new AppError('forbidden', 'sign in first'),
  badCsrfToken: () => new AppError('forbidden', 'the CSRF token is missing or wrong'),
};
