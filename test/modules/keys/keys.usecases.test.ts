import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { SqliteStore } from '../../../src/store/sqlite/sqlite.store.js';
import { createTestStore, type TestStore } from '../../helpers.js';

let t: TestStore;
before(async () => {
  t = await createTestStore();
  await t.hubs.add('100', {});
});
after(() => t.close());

test('a key is stored only as a keyed hash and an encrypted copy', async () => {
  const { key, summary } = await t.keys.issue('100', 'read', 'reporting');
  const stored = await t.store.keys.findById(summary.id);
  assert.ok(stored);
  assert.equal(stored.keyHash.length, 32);
  assert.equal(stored.keyEncrypted.includes(Buffer.from(key)), false);
  assert.equal(stored.keyHash.includes(Buffer.from(key)), false);
  assert.equal(stored.keyStart, key.slice(0, 8));
  assert.equal(await t.keys.reveal(summary.id), key);
  if (t.store instanceof SqliteStore) {
    assert.equal(fs.readFileSync(t.store.file).includes(Buffer.from(key)), false);
  }
});

test('verify accepts a live key, refuses a revoked one at once, and never looks up a malformed key', async () => {
  const { key, summary } = await t.keys.issue('100', 'read', '');
  assert.equal((await t.keys.verify(key))?.id, summary.id);

  let lookups = 0;
  const original = t.store.keys.findByHash;
  t.store.keys.findByHash = async (hash) => {
    lookups += 1;
    return original(hash);
  };
  try {
    const typo = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
    for (const bad of ['', 'chl_', typo, key.toUpperCase(), `${key}x`]) {
      assert.equal(await t.keys.verify(bad), undefined);
    }
    assert.equal(lookups, 0);
  } finally {
    t.store.keys.findByHash = original;
  }

  await t.keys.revoke(summary.id);
  assert.equal(await t.keys.verify(key), undefined);
  await assert.rejects(t.keys.revoke(summary.id), /already revoked/);
  await assert.rejects(t.keys.revoke('key_nope'), /no key/);
});

test('last use is recorded in batches, not per request', async () => {
  const { key, summary } = await t.keys.issue('100', 'read', '');
  await t.keys.verify(key);
  assert.equal((await t.store.keys.findById(summary.id))?.lastUsedAt, null);
  await t.keys.flushLastUsed();
  assert.ok(((await t.store.keys.findById(summary.id))?.lastUsedAt ?? 0) > 0);
});

test('findByKey finds a key given in full, revoked or not, and is not a use of it', async () => {
  const { key, summary } = await t.keys.issue('100', 'ingest', 'pasted');
  assert.equal((await t.keys.findByKey(key))?.id, summary.id);
  await t.keys.flushLastUsed();
  assert.equal((await t.store.keys.findById(summary.id))?.lastUsedAt, null, 'not recorded as a use');
  await t.keys.revoke(summary.id);
  assert.ok((await t.keys.findByKey(key))?.revokedAt, 'a revoked key is still found (to say so)');
  const typo = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
  assert.equal(await t.keys.findByKey(typo), undefined);
});

test('list: newest first, as the account screen and chatlog key list show keys', async () => {
  await t.hubs.add('101', {});
  const ids = [];
  for (const label of ['first', 'second', 'third']) {
    ids.push((await t.keys.issue('101', 'read', label)).summary.id);
    // Keys made in the same millisecond have no order of their own.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.deepEqual(
    (await t.keys.list('101')).map((k) => k.id),
    ids.reverse(),
  );
});
