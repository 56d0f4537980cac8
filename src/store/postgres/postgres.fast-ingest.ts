/**
 * PostgreSQL's fast path for the common group commit, measured to matter (issue 12, Q5; issue 20):
 * a group whose requests hold only messages is stored in three round trips, where the shared way
 * (../sql/ingest.ts, which the store falls back to for any other group, or when this fails) takes a
 * savepoint and a few statements per request:
 *
 * 1. `BEGIN` and the hubs' locks (FeedClock), sent together;
 * 2. one prepared statement: new contacts, messages, their search rows, their downloads;
 * 3. the hubs' new positions (FeedClock.finishing), the other nodes told, and `COMMIT`, together.
 *
 * The first and last carry their values as literals (the simple protocol takes several statements
 * at once, but no parameters). Each round trip wakes PostgreSQL and then this process again; the
 * seven this took before were most of a group's time (bench/results/2026-11-28-issue-20-postgres-ingest.md).
 */
import type pg from 'pg';
import {
  assignedMessageId,
  FeedClock,
  FINISH_HUB_SQL,
  LOCK_HUB_SQL,
  type LockedHub,
  lockOrder,
  MESSAGE_ID,
  UnlockedHub,
} from '../sql/changes.js';
import { hubsOfGroup, type IngestRequest } from '../sql/ingest.js';
import { messageTokens } from '../sql/search.js';
import type { IngestOperation, IngestOutcome } from '../store.js';
import { postgresSql, storable, withLiterals } from './postgres.sql.js';
import { announcementStatements } from './postgres.wakeups.js';

/** True when the fast path can take the group. */
export const onlyMessages = (group: readonly IngestRequest[]) =>
  group.every((request) => request.operations.every((op) => op.kind === 'message'));

export interface StoredGroup {
  outcomes: IngestOutcome[];
  /** The hubs whose feed grew: this node's readers to wake. */
  grown: string[];
}

/**
 * Stores and commits a group of messages only (onlyMessages) on `client`, a connection outside any
 * transaction. When anything fails the transaction is rolled back and the error thrown (the caller
 * stores the group the shared way); `drop` is told when even the rollback failed.
 */
export async function storeMessageGroup(
  client: pg.ClientBase,
  group: readonly IngestRequest[],
  options: {
    schema: string | undefined;
    searchIndex: boolean;
    /** The client's timeout for one statement: the first round trip may wait for each hub's lock. */
    statementTimeoutMs: number;
  },
  drop: (error: Error) => void,
): Promise<StoredGroup> {
  const hubIds = lockOrder(hubsOfGroup(group));
  if (hubIds.length === 0) throw new Error('a group without messages goes the shared way');
  const clock = new FeedClock(postgresSql(client));
  try {
    // Several statements: pg answers with one result each, BEGIN's first.
    const begun = (await client.query({
      text: ['BEGIN', ...hubIds.map((hubId) => withLiterals(LOCK_HUB_SQL, [hubId]))].join(';\n'),
      // PostgreSQL times each statement of the message alone.
      query_timeout: options.statementTimeoutMs * hubIds.length,
    } as pg.QueryConfig)) as unknown as Array<pg.QueryResult<LockedHub>>;
    hubIds.forEach((hubId, i) => {
      clock.hold(hubId, begun[i + 1]?.rows[0]);
    });
    const outcomes = await storeMessages(client, clock, group, options.searchIndex);
    const { updates, grown } = clock.finishing();
    await client.query(
      [
        ...updates.map((values) => withLiterals(FINISH_HUB_SQL, values)),
        ...announcementStatements(options.schema, grown),
        'COMMIT',
      ].join(';\n'),
    );
    return { outcomes, grown };
  } catch (error) {
    // A prepared statement this connection can no longer use (gone behind a pooler, or its plan's
    // result changed by a migration) would fail every group it takes: the connection is dropped.
    if (STALE_STATEMENT.has((error as { code?: string }).code ?? '')) drop(error as Error);
    await client.query('ROLLBACK').catch(drop);
    throw error;
  }
}

/** invalid_sql_statement_name, feature_not_supported ("cached plan must not change result type"). */
const STALE_STATEMENT = new Set(['26000', '0A000']);

/**
 * Whether the shared way was expected to take a group the fast path gave up: a message id another
 * message has (a unique violation), a contact another node made meanwhile (its NULL id), or a hub
 * that does not exist (FeedClock). Anything else is worth an operator's look.
 */
export function expectedFallback(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === '23505' || code === '23502' || error instanceof UnlockedHub;
}

/**
 * The messages of every request of a group in one statement, inside the transaction that holds
 * the group's hubs (`clock`: locked before this statement started, so its snapshot sees every
 * unsend committed before): new contacts created in the order the group first names them
 * (existing ones are only read, not locked), messages inserted unless unsent or already stored,
 * numbered by `clock`, with their search rows and their downloads (../sql/content.ts queueContent).
 * A message id another message has fails the statement (a unique violation), and the group goes
 * the shared way, which assigns another; a retired id is replaced by the assigned one here.
 *
 * Prepared once per connection: parsing and planning it took about a third of its time (1.3 of
 * 3.3 ms for a group of 32).
 *
 * Returns each request's outcome.
 */
export async function storeMessages(
  client: pg.ClientBase,
  clock: FeedClock,
  group: readonly IngestRequest[],
  searchIndex: boolean,
): Promise<IngestOutcome[]> {
  type MessageOp = Extract<IngestOperation, { kind: 'message' }>;
  const all = group.flatMap((item) =>
    item.operations.map((op) => ({ item, op: op as MessageOp, seq: clock.next(item.hubId) })),
  );
  const natural = (op: MessageOp) => MESSAGE_ID.test(op.id ?? '');
  const result = await client.query<{ kind: 'c' | 'm'; hub_id: string; ref: string; o: number | null }>({
    name: 'chatlog_store_messages',
    text: STORE_MESSAGES_SQL,
    values: [
      all.map(({ item }) => item.hubId),
      all.map(({ op }) => op.lineId),
      all.map(({ op }) => op.createdAt),
      all.map(({ op }) => op.sender),
      all.map(({ op }) => op.msg),
      all.map(({ op }) => op.contentType),
      all.map(({ op }) => op.sourceId),
      all.map(({ op }) => op.sourceKind),
      all.map(({ op }) => op.sourceChatId),
      all.map(({ item }) => item.now),
      all.map(({ op }) => (natural(op) ? op.id : assignedMessageId(op.sourceId))),
      all.map(({ op }) => assignedMessageId(op.sourceId, natural(op) ? 0 : 1)),
      all.map(({ op }) => op.line ?? null),
      all.map(({ seq }) => seq),
      // Searchable once answered (./postgres.search.ts): made here for every message, kept for the stored.
      all.map(({ op }) => (searchIndex ? messageTokens(storable(op.msg)) : null)),
      all.map(({ op }) => op.content?.lineMessageId ?? null),
      all.map(({ op }) => op.content?.kind ?? null),
      all.map(({ op }) => op.content?.fileName ?? null),
    ],
  });
  // A new contact is credited to the row that first named it (unsent rows name none), a new
  // message to the first request that brought its source id: what ../sql/ingest.ts tells each.
  const contactBy = new Set<number>();
  const newRows = new Set<string>();
  for (const row of result.rows) {
    if (row.kind === 'c') contactBy.add(Number(row.o) - 1);
    else newRows.add(`${row.hub_id}\u0000${row.ref}`);
  }
  let index = 0;
  return group.map((item) => {
    const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
    for (const op of item.operations as MessageOp[]) {
      if (contactBy.has(index++)) outcome.contactsCreated.push(op.lineId);
      // As stored: a source id is text too (postgres.sql.ts storable).
      if (newRows.delete(`${item.hubId}\u0000${storable(op.sourceId)}`)) {
        outcome.stored += 1;
        clock.stored(item.hubId, op.createdAt);
      } else outcome.duplicates += 1;
    }
    return outcome;
  });
}

const STORE_MESSAGES_SQL = `
  WITH x AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[],
                         $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[],
                         $13::text[], $14::bigint[], $15::text[], $16::text[], $17::text[], $18::text[])
      WITH ORDINALITY AS x(h, l, t, s, m, ct, sid, sk, sc, now, pid, alt, lj, q, tok, lm, ck, cf, o)),
  -- A message the friend took back is never stored again, and makes no contact (as ../sql/ingest.ts).
  live AS (
    SELECT * FROM x WHERE NOT EXISTS (SELECT 1 FROM unsent_messages AS u WHERE u.hub_id = x.h AND u.source_id = x.sid)),
  wanted AS (SELECT DISTINCT ON (h, l) h, l, now, o FROM live ORDER BY h, l, o),
  created AS (
    INSERT INTO contacts (hub_id, line_id, created_at)
    SELECT h, l, now FROM wanted ORDER BY o
    ON CONFLICT (hub_id, line_id) DO NOTHING
    RETURNING id, hub_id, line_id),
  contact AS (
    SELECT id, hub_id, line_id FROM created
    UNION ALL
    SELECT c.id, c.hub_id, c.line_id FROM contacts AS c JOIN wanted ON c.hub_id = wanted.h AND c.line_id = wanted.l),
  -- A contact another node created a moment ago is in neither: its NULL id fails the whole
  -- statement (NOT NULL), and the group is stored again request by request.
  message AS (
    INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id,
                          source_kind, source_chat_id, seq, changed_at, public_id, line_json)
    SELECT x.h, contact.id, x.t, x.s, x.m, x.ct, x.sid, x.sk, x.sc, x.q, x.now,
           CASE WHEN EXISTS (SELECT 1 FROM retired_message_ids AS r WHERE r.hub_id = x.h AND r.public_id = x.pid)
                THEN x.alt ELSE x.pid END,
           x.lj
    FROM live AS x LEFT JOIN contact ON contact.hub_id = x.h AND contact.line_id = x.l
    ORDER BY x.o
    ON CONFLICT (hub_id, source_id) DO NOTHING
    RETURNING id, hub_id, source_id, public_id),
  -- Each stored message with the first of its rows in x: the one stored (rows are inserted in x's
  -- order, and a later copy of a source id is skipped).
  stored AS (
    SELECT DISTINCT ON (message.id) message.id, message.hub_id, message.public_id, x.tok, x.lm, x.ck, x.cf, x.now
    FROM message JOIN x ON x.h = message.hub_id AND x.sid = message.source_id
    ORDER BY message.id, x.o),
  indexed AS (
    INSERT INTO message_search (message_id, hub_id, tokens)
    SELECT id, hub_id, tok::tsvector FROM stored WHERE tok IS NOT NULL),
  queued AS (
    INSERT INTO content_items (hub_id, message_id, line_message_id, kind, file_name, state,
                               next_attempt_at, created_at, updated_at)
    SELECT hub_id, public_id, lm, ck, cf, 'pending', now, now, now FROM stored WHERE lm IS NOT NULL
    ON CONFLICT DO NOTHING)
  SELECT 'c' AS kind, created.hub_id, created.line_id AS ref, wanted.o
  FROM created JOIN wanted ON wanted.h = created.hub_id AND wanted.l = created.line_id
  UNION ALL SELECT 'm', hub_id, source_id, NULL FROM message`;
