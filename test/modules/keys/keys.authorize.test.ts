/** authorize(): CONTRACT §1 rows 1-4 and 8 for any endpoint, in the endpoint's own words. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../../src/lib/errors.js';
import { INGEST_API } from '../../../src/modules/ingest/ingest.auth.js';
import {
  type AuthorizeDeps,
  authorize,
  keyInBearer,
  keyInQuery,
  type PresentedKey,
} from '../../../src/modules/keys/keys.authorize.js';
import type { ApiKeyRecord, Hub } from '../../../src/store/store.js';
import { keyRecord } from '../../fixtures/keys.js';

/** The ingest API's keys unless said otherwise. */
const record = (id: string, overrides: Partial<ApiKeyRecord> = {}) =>
  keyRecord(id, { scope: 'ingest', ...overrides });

const KEYS: Record<string, ApiKeyRecord> = {
  ingest: record('k-ingest'),
  read: record('k-read', { scope: 'read' }),
  limited: record('k-limited', { rateLimit: { requests: 1, perSeconds: 60 } }),
};

function deps(options: { allowed?: boolean; calls?: string[] } = {}): AuthorizeDeps {
  const calls = options.calls ?? [];
  return {
    verifyKey: async (presented) => {
      calls.push('verify');
      return KEYS[presented];
    },
    getHub: async (hubId) => {
      calls.push('getHub');
      return { id: hubId, timeZone: 'UTC' } as Hub;
    },
    consumeRateLimit: async () => {
      calls.push('consume');
      return { allowed: options.allowed ?? true, headers: { RateLimit: '"default";r=0;t=60' } };
    },
    peekRateLimit: async () => {
      calls.push('peek');
      return { RateLimit: '"default";r=0;t=60' };
    },
  };
}

async function outcome(presented: PresentedKey, hubId: string, options: { allowed?: boolean } = {}) {
  try {
    const access = await authorize(deps(options), { presented, hubId, endpoint: INGEST_API });
    return { status: 200, code: 'ok', headers: await access.admit() };
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return { status: error.status, code: error.code, headers: error.headers };
  }
}

test('the key is read from the query (the read API) or from Authorization: Bearer (the ingest API)', () => {
  assert.deepEqual(keyInQuery(new URLSearchParams('')), { kind: 'none' });
  assert.deepEqual(keyInQuery(new URLSearchParams('apikey=')), { kind: 'none' });
  assert.deepEqual(keyInQuery(new URLSearchParams('apikey=a&apikey=a')), { kind: 'repeated' });
  assert.deepEqual(keyInQuery(new URLSearchParams('apikey=a')), { kind: 'key', key: 'a' });
  assert.deepEqual(keyInBearer(undefined), { kind: 'none' });
  assert.deepEqual(keyInBearer('  '), { kind: 'none' });
  assert.deepEqual(keyInBearer('Basic abc'), { kind: 'unreadable' });
  assert.deepEqual(keyInBearer('bearer  abc '), { kind: 'key', key: 'abc' });
});

const TABLE: Array<[string, PresentedKey, string, number, string]> = [
  // [why, presented, hubId, status, code]
  ['1 no key', { kind: 'none' }, 'abc', 401, 'missing_api_key'],
  ['2 not one key', { kind: 'unreadable' }, 'abc', 401, 'invalid_api_key'],
  ['2 apikey given more than once', { kind: 'repeated' }, 'abc', 401, 'invalid_api_key'],
  ['2 unknown key', { kind: 'key', key: 'nope' }, 'abc', 401, 'invalid_api_key'],
  ['2 a key of another scope', { kind: 'key', key: 'read' }, 'abc', 401, 'invalid_api_key'],
  ['3 a bad hub id', { kind: 'key', key: 'ingest' }, 'abc', 400, 'invalid_hub_id'],
  ['4 another hub', { kind: 'key', key: 'ingest' }, '200', 403, 'forbidden'],
  ['admitted', { kind: 'key', key: 'ingest' }, '100', 200, 'ok'],
];

for (const [why, presented, hubId, status, code] of TABLE) {
  test(`ingest API: ${why} → ${status} ${code}`, async () => {
    const got = await outcome(presented, hubId);
    assert.deepEqual([got.status, got.code], [status, code]);
    // Every 401 of the ingest API asks for a Bearer key.
    if (status === 401) assert.equal(got.headers['WWW-Authenticate'], 'Bearer realm="chatlog"');
  });
}

test('ingest API: the words are its own', async () => {
  const missing = await authorize(deps(), {
    presented: { kind: 'none' },
    hubId: '100',
    endpoint: INGEST_API,
  }).catch((e: AppError) => e);
  assert.ok(missing instanceof AppError);
  assert.equal(missing.message, 'send an ingest key as Authorization: Bearer <key>');
});

test('the rate limit is the last check, and only limited keys are counted', async () => {
  const calls: string[] = [];
  const access = await authorize(deps({ calls }), {
    presented: { kind: 'key', key: 'ingest' },
    hubId: '100',
    endpoint: INGEST_API,
  });
  assert.deepEqual(await access.admit(), {});
  // The ingest API does not read the hub, and an unlimited key is not counted.
  assert.deepEqual(calls, ['verify']);
  const refused = await outcome({ kind: 'key', key: 'limited' }, '100', { allowed: false });
  assert.deepEqual([refused.status, refused.code], [429, 'rate_limited']);
});

test('refusals after the key carry its rate-limit fields only where the endpoint says so', async () => {
  const calls: string[] = [];
  const read = { ...INGEST_API, limitFieldsOnRefusals: true, readsHub: true } as const;
  const refused = await authorize(deps({ calls }), {
    presented: { kind: 'key', key: 'limited' },
    hubId: '200',
    endpoint: read,
  }).catch((e: AppError) => e);
  assert.ok(refused instanceof AppError);
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.RateLimit, '"default";r=0;t=60');
  const plain = await outcome({ kind: 'key', key: 'limited' }, '200');
  assert.equal(plain.headers.RateLimit, undefined);
});
