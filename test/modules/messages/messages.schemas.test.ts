/**
 * The read API's route schema states the rules checkMessagesRequest applies (the checks run in the
 * contract's order, so no schema validator runs first): held together here, property by property,
 * with ajv (the validator Fastify uses) reading the schema the OpenAPI document is made of.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { parseCalendarDay } from '../../../src/lib/calendar.js';
import { isValidHubId } from '../../../src/modules/hubs/hubs.usecases.js';
import { generateApiKey, isWellFormedApiKey } from '../../../src/modules/keys/keys.format.js';
import { messagesRouteSchema } from '../../../src/modules/messages/messages.schemas.js';

const ajv = new Ajv({ strict: false });
addFormats.default(ajv);
const { params, querystring } = messagesRouteSchema;
const validHubId = ajv.compile(params.properties.hubId);
const validDay = ajv.compile(querystring.properties.from);
const validKey = ajv.compile(querystring.properties.apikey);

const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 24 });

test('hubId: the schema accepts exactly what the check accepts', () => {
  fc.assert(
    fc.property(fc.oneof(digits, fc.string({ maxLength: 24 })), (text) => {
      assert.equal(validHubId(text), isValidHubId(text), JSON.stringify(text));
    }),
    { numRuns: 2000 },
  );
});

test('from and to: the schema (format date) accepts exactly the real days the check accepts', () => {
  const dayLike = fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
    )
    .map(
      ([y, m, d]) =>
        `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`,
    );
  fc.assert(
    fc.property(fc.oneof(dayLike, fc.string({ maxLength: 12 })), (text) => {
      assert.equal(validDay(text), parseCalendarDay(text) !== undefined, text);
    }),
    { numRuns: 5000 },
  );
  assert.equal(validDay('2024-02-29'), true);
  assert.equal(validDay('2023-02-29'), false);
});

test('apikey: every well-formed key matches the schema; text that does not is never well-formed', () => {
  for (let i = 0; i < 200; i++) assert.ok(validKey(generateApiKey()));
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (text) => {
      if (!validKey(text)) assert.equal(isWellFormedApiKey(text), false);
    }),
  );
});
