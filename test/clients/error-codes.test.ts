/** The TypeScript client carries the server's error codes, made from src/lib/errors.ts. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { CLIENT, withErrorCodes } from '../../scripts/client-error-codes.js';

test("the client's error codes are the ones made from src/lib/errors.ts", () => {
  const client = fs.readFileSync(CLIENT, 'utf8');
  assert.ok(
    withErrorCodes(client) === client,
    'clients/typescript/chatlog-client.ts lists other error codes than src/lib/errors.ts: run "node --import tsx scripts/client-error-codes.ts --write"',
  );
});
