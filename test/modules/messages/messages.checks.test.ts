/** CONTRACT §1 as a table: one row per check, and the order in which they answer. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../../src/lib/errors.js';
import { generateApiKey } from '../../../src/modules/keys/keys.format.js';
import {
  type CheckDeps,
  checkMessagesRequest,
  MESSAGES_CHECK_ORDER,
} from '../../../src/modules/messages/messages.checks.js';
import type { Hub, RateLimit } from '../../../src/store/store.js';
import { keyRecord } from '../../fixtures/keys.js';

const READ_KEY = generateApiKey();
const INGEST_KEY = generateApiKey();
const REVOKED_KEY = generateApiKey();
const LIMITED_KEY = generateApiKey();
const UNKNOWN_KEY = generateApiKey();

const record = keyRecord;

function deps(options: { allowed?: boolean } = {}): CheckDeps {
  const hubs: Record<string, Hub> = {
    '100': {
      id: '100',
      timeZone: 'Asia/Tokyo',
      lineChannelSecretEncrypted: null,
      lineChannelAccessTokenEncrypted: null,
      dataVersion: 1,
      retentionDays: 0,
      createdAt: 0,
    },
    '200': {
      id: '200',
      timeZone: 'UTC',
      lineChannelSecretEncrypted: null,
      lineChannelAccessTokenEncrypted: null,
      dataVersion: 1,
      retentionDays: 0,
      createdAt: 0,
    },
  };
  return {
    verifyKey: async (presented: string) => {
      if (presented === READ_KEY) return record('k-read');
      if (presented === INGEST_KEY) return record('k-ingest', { scope: 'ingest' });
      if (presented === LIMITED_KEY)
        return record('k-limited', { rateLimit: { requests: 1, perSeconds: 60 } });
      if (presented === REVOKED_KEY) return undefined;
      return undefined;
    },
    getHub: async (id: string) => hubs[id],
    consumeRateLimit: async (_id: string, _limit: RateLimit) => ({
      allowed: options.allowed ?? true,
      headers: { RateLimit: '"default";r=0;t=60', 'Retry-After': '60' },
    }),
    peekRateLimit: async () => ({ RateLimit: '"default";r=0;t=60' }),
  };
}

async function outcome(hubId: string, query: string, options: { allowed?: boolean } = {}) {
  try {
    const checked = await checkMessagesRequest({ hubId, query }, deps(options));
    return { status: 200, code: 'ok', checked };
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return { status: error.status, code: error.code, checked: undefined };
  }
}

const k = READ_KEY;
const TABLE: Array<[string, string, string, number, string]> = [
  // [why, hubId, query, status, code]
  ['1 apikey absent', '100', 'from=2019-11-03', 401, 'missing_api_key'],
  ['1 apikey empty', '100', 'apikey=', 401, 'missing_api_key'],
  ['1 comes before a bad hubId', 'abc', '', 401, 'missing_api_key'],
  ['2 malformed key', '100', 'apikey=chl_nope', 401, 'invalid_api_key'],
  [
    '2 mistyped key (checksum)',
    '100',
    `apikey=${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`,
    401,
    'invalid_api_key',
  ],
  ['2 unknown key', '100', `apikey=${UNKNOWN_KEY}`, 401, 'invalid_api_key'],
  ['2 revoked key', '100', `apikey=${REVOKED_KEY}`, 401, 'invalid_api_key'],
  ['2 ingest-scope key', '100', `apikey=${INGEST_KEY}`, 401, 'invalid_api_key'],
  ['2 apikey twice', '100', `apikey=${k}&apikey=${k}`, 401, 'invalid_api_key'],
  ['2 comes before a bad hubId', 'x', 'apikey=bad', 401, 'invalid_api_key'],
  ['3 hubId not digits', 'abc', `apikey=${k}`, 400, 'invalid_hub_id'],
  ['3 hubId of 21 digits', '1'.repeat(21), `apikey=${k}`, 400, 'invalid_hub_id'],
  ['3 hubId of 25 digits', '1'.repeat(25), `apikey=${k}`, 400, 'invalid_hub_id'],
  ['3 comes before forbidden and bad dates', '-1', `apikey=${k}&from=bad`, 400, 'invalid_hub_id'],
  ['4 key of another hub', '200', `apikey=${k}`, 403, 'forbidden'],
  ['4 comes before duplicates', '200', `apikey=${k}&from=2019-01-01&from=2019-01-02`, 403, 'forbidden'],
  ['5 from twice', '100', `apikey=${k}&from=2019-01-01&from=2019-01-01`, 400, 'duplicate_parameter'],
  ['5 to twice', '100', `apikey=${k}&to=2019-01-01&to=x`, 400, 'duplicate_parameter'],
  ['5 comes before a bad date', '100', `apikey=${k}&from=bad&from=worse`, 400, 'duplicate_parameter'],
  ['6 from not a date', '100', `apikey=${k}&from=2019-1-05`, 400, 'invalid_date'],
  ['6 from=9999-99-99', '100', `apikey=${k}&from=9999-99-99`, 400, 'invalid_date'],
  ['6 not a real day', '100', `apikey=${k}&to=2023-02-29`, 400, 'invalid_date'],
  ['6 empty from', '100', `apikey=${k}&from=`, 400, 'invalid_date'],
  ['6 comes before the range', '100', `apikey=${k}&from=2020-01-02&to=2019-02-30`, 400, 'invalid_date'],
  ['7 from after to', '100', `apikey=${k}&from=2020-01-02&to=2020-01-01`, 400, 'invalid_range'],
  ['tz unknown', '100', `apikey=${k}&tz=Mars/Olympus`, 400, 'invalid_time_zone'],
  ['tz an abbreviation ICU guesses at (CST)', '100', `apikey=${k}&tz=CST`, 400, 'invalid_time_zone'],
  ['tz an abbreviation ICU guesses at (JST)', '100', `apikey=${k}&tz=JST`, 400, 'invalid_time_zone'],
  ['tz an abbreviation that tzdb keeps (EST)', '100', `apikey=${k}&tz=EST`, 400, 'invalid_time_zone'],
  ['ok: tz a tzdb link (US/Pacific)', '100', `apikey=${k}&tz=US/Pacific`, 200, 'ok'],
  ['ok: tz=Etc/GMT-9', '100', `apikey=${k}&tz=Etc/GMT-9`, 200, 'ok'],
  ['ok: leap day', '100', `apikey=${k}&from=2024-02-29&to=2024-02-29`, 200, 'ok'],
  ['ok: unknown parameters are ignored, even twice', '100', `apikey=${k}&x=1&x=2`, 200, 'ok'],
  ['ok: from equals to', '100', `apikey=${k}&from=2019-11-03&to=2019-11-03`, 200, 'ok'],
];

for (const [why, hubId, query, status, code] of TABLE) {
  test(`check: ${why} → ${status} ${code}`, async () => {
    const result = await outcome(hubId, query);
    assert.deepEqual([result.status, result.code], [status, code]);
  });
}

test('check 8: a limited key over its limit → 429 rate_limited with Retry-After; only when a limit is set', async () => {
  const limited = await outcome('100', `apikey=${LIMITED_KEY}`, { allowed: false });
  assert.deepEqual([limited.status, limited.code], [429, 'rate_limited']);
  const unlimited = await outcome('100', `apikey=${READ_KEY}`, { allowed: false });
  assert.equal(unlimited.status, 200);
});

test('days are read in the hub zone, or in tz when given', async () => {
  const hubZone = await outcome('100', `apikey=${k}&from=2019-11-03&to=2019-11-04`);
  assert.equal(hubZone.checked?.fromMs, Date.parse('2019-11-02T15:00:00.000Z'));
  assert.equal(hubZone.checked?.toMsExclusive, Date.parse('2019-11-04T15:00:00.000Z'));
  const utc = await outcome('100', `apikey=${k}&from=2019-11-03&tz=UTC`);
  assert.equal(utc.checked?.fromMs, Date.parse('2019-11-03T00:00:00.000Z'));
  assert.equal(utc.checked?.toMsExclusive, undefined);
  const none = await outcome('100', `apikey=${k}`);
  assert.deepEqual([none.checked?.fromMs, none.checked?.toMsExclusive], [undefined, undefined]);
});

test('the order the OpenAPI document and /docs state (MESSAGES_CHECK_ORDER) is the order of this table', () => {
  const failing = TABLE.map((row) => row[4]).filter((code) => code !== 'ok');
  const firstSeen = failing.filter((code, index) => failing.indexOf(code) === index);
  assert.deepEqual([...firstSeen, 'rate_limited'], [...MESSAGES_CHECK_ORDER]);
});
