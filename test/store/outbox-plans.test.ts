/**
 * PostgreSQL's plans for the outbox's busiest statements, under the statistics that misled it: taken
 * while a new endpoint (and its hub) had no rows, beside an older endpoint with many. The planner
 * then expects one row for the new endpoint's key; before migration 15 and the seq ranges
 * (seqRange in src/store/sql/changes.ts), a lease read every pending delivery of every endpoint and
 * sorted them, and each update by key read every delivery of the endpoint (3-16 ms a statement
 * behind 17,000, which took a quarter of webhook ingest while a backlog was delivered).
 *
 * Each statement the store's functions issue is run first under EXPLAIN ANALYZE (rolled back), and
 * the rows its plan read are counted: a handful, however many deliveries are pending.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createSecretBox } from '../../src/lib/secrets.js';
import { HubService } from '../../src/modules/hubs/hubs.usecases.js';
import { postgresSql } from '../../src/store/postgres/postgres.sql.js';
import type { PostgresStore } from '../../src/store/postgres/postgres.store.js';
import { readChangesAt } from '../../src/store/sql/changes.js';
import type { SqlValue, Transaction } from '../../src/store/sql/executor.js';
import { leaseDeliveries, settleDeliveries } from '../../src/store/sql/webhooks.js';
import type { DeliverySettlement, IngestOperation } from '../../src/store/store.js';
import { TEST_DATABASE_URL, TEST_SECRET, testPostgresStore } from '../helpers.js';

const schema = `chatlog_plans_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
let store: PostgresStore;
let client: pg.Client;
const OLD = { hub: '1', endpoint: 'whe_old_endpoint' };
const NEW = { hub: '2', endpoint: 'whe_new_endpoint' };
const PENDING = 5_000;

const messages = (prefix: string, count: number): IngestOperation[] =>
  Array.from({ length: count }, (_, n) => ({
    kind: 'message',
    lineId: `U${n % 50}`,
    sender: null,
    msg: `${prefix} ${n}`,
    contentType: 'text',
    createdAt: 1_700_000_000_000 + n * 1000,
    sourceId: `${prefix}:${n}`,
    sourceKind: 'user',
    sourceChatId: null,
  }));

async function addEndpoint(hubId: string, id: string) {
  return store.webhooks.add({
    id,
    hubId,
    url: 'https://example.com/hooks',
    events: null,
    secretEncrypted: Buffer.from('unused'),
    createdAt: 1,
  });
}

before(async () => {
  store = testPostgresStore({ schema });
  await store.migrate();
  const hubs = new HubService(store, createSecretBox(TEST_SECRET));
  await hubs.add(OLD.hub, {});
  await hubs.add(NEW.hub, {});
  // The older endpoint: many deliveries, all delivered. The statistics are taken now.
  const old = await addEndpoint(OLD.hub, OLD.endpoint);
  await store.messages.ingest(OLD.hub, messages('old', PENDING), 1);
  while ((await store.webhooks.dispatch(old, 1, 1000)) > 0);
  for (;;) {
    const leased = await store.webhooks.lease(old.id, 2, 10, 1000);
    if (leased.length === 0) break;
    await store.webhooks.settle(
      leased.map((d) => settled(d.seq, 10, 'delivered', old.id)),
      3,
    );
  }
  await store.analyze();
  // The new endpoint, whose hub and deliveries the statistics have not seen.
  const fresh = await addEndpoint(NEW.hub, NEW.endpoint);
  await store.messages.ingest(NEW.hub, messages('new', PENDING), 4);
  while ((await store.webhooks.dispatch(fresh, 5, 1000)) > 0);
  client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
});

after(async () => {
  await client?.end();
  await store?.dropSchema();
  await store?.close();
});

function settled(
  seq: number,
  leasedUntil: number,
  state: DeliverySettlement['state'],
  endpointId = NEW.endpoint,
): DeliverySettlement {
  return {
    endpointId,
    seq,
    leasedUntil,
    state,
    attempts: 1,
    nextAttemptAt: 0,
    lastStatus: 204,
    lastError: null,
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The tables that grow with the hubs' traffic (contacts, a few per hub, may well be scanned). */
const LARGE = new Set(['webhook_deliveries', 'messages', 'changes']);

/** Rows the plan's scans of the large tables returned or read and threw away, over all loops. */
function rowsTouched(node: PlanNode): number {
  const own = LARGE.has(node['Relation Name'] ?? '')
    ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1)
    : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsTouched(child), 0);
}

/** A transaction that runs each statement under EXPLAIN ANALYZE first (rolled back), then for real. */
function explaining(
  tx: Transaction,
  plans: Array<{ text: string; touched: number; plan: PlanNode }>,
): Transaction {
  const explain = async (text: string, params?: readonly SqlValue[]) => {
    await tx.exec('SAVEPOINT plan');
    const [row] = await tx.all<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
      params,
    );
    await tx.exec('ROLLBACK TO SAVEPOINT plan');
    const plan = row!['QUERY PLAN'][0]!.Plan;
    plans.push({ text: text.replace(/\s+/g, ' ').slice(0, 80), touched: rowsTouched(plan), plan });
  };
  return {
    all: async (text, params) => {
      await explain(text, params);
      return tx.all(text, params);
    },
    get: async (text, params) => {
      await explain(text, params);
      return tx.get(text, params);
    },
    run: async (text, params) => {
      await explain(text, params);
      return tx.run(text, params);
    },
    exec: (text) => tx.exec(text),
  };
}

async function inTransaction(work: (tx: Transaction) => Promise<void>): Promise<void> {
  const tx = postgresSql(client);
  await tx.exec('BEGIN');
  try {
    await work(tx);
  } finally {
    await tx.exec('ROLLBACK');
  }
}

test(`with ${PENDING.toLocaleString('en-US')} deliveries pending that the statistics have not seen, a lease, its outcomes and its changes each read a handful of rows`, async () => {
  const plans: Array<{ text: string; touched: number; plan: PlanNode }> = [];
  await inTransaction(async (tx) => {
    const sql = explaining(tx, plans);
    const leased = await leaseDeliveries(sql, ' FOR UPDATE SKIP LOCKED', NEW.endpoint, {
      now: 10,
      dueSince: 0,
      leasedUntil: 100,
      max: 4,
    });
    assert.equal(leased.length, 4);
    const changes = await readChangesAt(
      sql,
      NEW.hub,
      leased.map((d) => d.seq),
    );
    assert.equal(changes.length, 4);
    await settleDeliveries(
      sql,
      leased.map((d) => settled(d.seq, 100, 'delivered')),
      11,
    );
  });
  assert.equal(plans.length, 4, plans.map((p) => p.text).join('\n'));
  for (const { text, touched, plan } of plans) {
    assert.ok(touched <= 40, `${text}: ${touched} rows read\n${JSON.stringify(plan, null, 1)}`);
  }
});
