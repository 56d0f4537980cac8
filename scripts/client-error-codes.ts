/**
 * The TypeScript client's list of error codes (clients/typescript/chatlog-client.ts), made from
 * src/lib/errors.ts: the client has no dependency and is copied into other projects whole, so it
 * carries the list itself, and test/clients/typescript.test.ts fails when it differs from the
 * server's.
 *
 *   node --import tsx scripts/client-error-codes.ts          print the list
 *   node --import tsx scripts/client-error-codes.ts --write  put it into the client, between its markers
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../src/lib/errors.js';

export const CLIENT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'clients',
  'typescript',
  'chatlog-client.ts',
);
export const BEGIN =
  '/** Every error code chatlog can answer with (made from src/lib/errors.ts: scripts/client-error-codes.ts --write). */';
export const END = '] as const;';

/** The list as the client declares it. */
export function errorCodesBlock(): string {
  return [BEGIN, 'export const ERROR_CODES = [', ...ERROR_CODES.map((code) => `  '${code}',`), END].join(
    '\n',
  );
}

/** The client with its list replaced by `block`. */
export function withErrorCodes(client: string, block = errorCodesBlock()): string {
  const begin = client.indexOf(BEGIN);
  const end = client.indexOf(END, begin);
  if (begin === -1 || end === -1) throw new Error(`${CLIENT} has lost the markers of its error codes`);
  return client.slice(0, begin) + block + client.slice(end + END.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--write')) {
    fs.writeFileSync(CLIENT, withErrorCodes(fs.readFileSync(CLIENT, 'utf8')));
  } else {
    process.stdout.write(`${errorCodesBlock()}\n`);
  }
}
