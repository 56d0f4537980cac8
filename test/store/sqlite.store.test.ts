/** What only the SQLite store promises: its query plan and its integrity check. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite.store.js';
import { tempDir } from '../helpers.js';

let store: SqliteStore;
before(async () => {
  store = new SqliteStore({ dataDir: tempDir() });
  await store.migrate();
});
after(() => store.close());

test('the range query walks indexes in answer order: no sort, no temporary b-tree', () => {
  const plan = store.explainStream().join('\n');
  assert.doesNotMatch(plan, /TEMP B-TREE/);
  assert.match(plan, /contacts_by_hub_in_first_seen_order/);
  assert.match(plan, /messages_by_contact_and_time/);
});

test('a fresh store passes its integrity check', () => {
  assert.equal(store.integrityCheck(), 'ok');
});
