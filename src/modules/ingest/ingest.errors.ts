/** The errors of getting messages in: the LINE webhook, the ingest API and file imports. */
import { AppError } from '../../lib/errors.js';

export const ingestErrors = {
  invalidSignature: () =>
    new AppError('invalid_signature', 'the X-Line-Signature header is missing or wrong'),
};

/** `chatlog import <hubId> <file>`: the file itself (its records: ImportValidationError). */
export const importErrors = {
  notAFile: (file: string) => new AppError('bad_request', `${file} is not a file`),
  cannotRead: (file: string, code: string) => new AppError('bad_request', `cannot read ${file}: ${code}`),
  empty: (file: string) => new AppError('bad_request', `${file} is empty`),
  neitherJsonNorNdjson: (file: string) =>
    new AppError(
      'bad_request',
      `${file} is neither a JSON array (starting with "[") nor NDJSON (one object per line)`,
    ),
  notValidJson: (file: string, why: string) =>
    new AppError('bad_request', `${file} is not valid JSON: ${why}`),
};
