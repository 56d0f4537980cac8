/**
 * PostgreSQL's fast path for the common group commit, measured to matter (issue 12, Q5): a group
 * whose requests hold only messages is stored in one statement (in the write transaction that
 * holds the group's hubs: ../sql/changes.ts), instead of a savepoint and a few statements per
 * request (../sql/ingest.ts, which the store falls back to for any other group, or when this
 * statement fails).
 */
import type pg from 'pg';
import { assignedMessageId, type FeedClock, MESSAGE_ID } from '../sql/changes.js';
import type { IngestRequest } from '../sql/ingest.js';
import type { IngestOperation, IngestOutcome } from '../store.js';
import { INSERT_SEARCH_ROWS, searchRowParams } from './postgres.search.js';

/** True when the fast path can take the group. */
export const onlyMessages = (group: readonly IngestRequest[]) =>
  group.every((request) => request.operations.every((op) => op.kind === 'message'));

/**
 * The messages of every request of a group in one statement, inside the caller's transaction,
 * which holds the group's hubs (FeedClock, locked before this statement started, so its snapshot
 * sees every unsend committed before): new contacts created in the order the group first names
 * them (existing ones are only read, not locked), messages inserted unless unsent or already
 * stored, numbered by `clock`. A message id another message has fails the statement (a unique
 * violation), and the group goes the shared way, which assigns another; a retired id is replaced
 * by the assigned one here.
 *
 * Returns what was created, to credit each request.
 */
export async function storeMessagesInOneStatement(
  client: pg.ClientBase,
  clock: FeedClock,
  group: readonly IngestRequest[],
  searchIndex = true,
): Promise<IngestOutcome[]> {
  type MessageOp = Extract<IngestOperation, { kind: 'message' }>;
  const all = group.flatMap((item) =>
    item.operations.map((op) => ({ item, op: op as MessageOp, seq: clock.next(item.hubId) })),
  );
  const natural = (op: MessageOp) => MESSAGE_ID.test(op.id ?? '');
  const result = await client.query<{
    kind: 'c' | 'm';
    hub_id: string;
    ref: string;
    id: number | null;
    msg: string | null;
  }>(
    `WITH x AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[],
                            $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[],
                            $13::text[], $14::bigint[])
         WITH ORDINALITY AS x(h, l, t, s, m, ct, sid, sk, sc, now, pid, alt, lj, q, o)),
     wanted AS (SELECT DISTINCT ON (h, l) h, l, now, o FROM x ORDER BY h, l, o),
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
       FROM x LEFT JOIN contact ON contact.hub_id = x.h AND contact.line_id = x.l
       WHERE NOT EXISTS (SELECT 1 FROM unsent_messages AS u WHERE u.hub_id = x.h AND u.source_id = x.sid)
       ORDER BY x.o
       ON CONFLICT (hub_id, source_id) DO NOTHING
       RETURNING id, hub_id, source_id, msg)
     SELECT 'c' AS kind, hub_id, line_id AS ref, NULL::bigint AS id, NULL::text AS msg FROM created
     UNION ALL SELECT 'm', hub_id, source_id, id, msg FROM message`,
    [
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
    ],
  );
  const createdContacts = new Set<string>();
  const newRows = new Set<string>();
  for (const row of result.rows) {
    if (row.kind === 'c') createdContacts.add(`${row.hub_id}\u0000${row.ref}`);
    else newRows.add(`${row.hub_id}\u0000${row.ref}`);
  }
  // Searchable once answered: the new messages' index rows in one more statement (./postgres.search.ts).
  const indexed = result.rows.flatMap((row) =>
    row.kind === 'm' && row.id !== null
      ? [{ id: Number(row.id), hubId: row.hub_id, msg: row.msg ?? '' }]
      : [],
  );
  if (searchIndex && indexed.length > 0) await client.query(INSERT_SEARCH_ROWS, searchRowParams(indexed));
  await queueNewContent(
    client,
    all.filter(({ item, op }) => op.content && newRows.has(`${item.hubId}\u0000${op.sourceId}`)),
  );
  // Credit each new row, and each new contact, to the first request that brought it.
  return group.map((item) => {
    const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
    for (const op of item.operations as MessageOp[]) {
      if (newRows.delete(`${item.hubId}\u0000${op.sourceId}`)) {
        outcome.stored += 1;
        clock.stored(item.hubId, op.createdAt);
      } else outcome.duplicates += 1;
      if (createdContacts.delete(`${item.hubId}\u0000${op.lineId}`)) outcome.contactsCreated.push(op.lineId);
    }
    return outcome;
  });
}

/** The downloads of the media messages the statement stored (../sql/content.ts queueContent), in one more. */
async function queueNewContent(
  client: pg.ClientBase,
  stored: ReadonlyArray<{ item: IngestRequest; op: Extract<IngestOperation, { kind: 'message' }> }>,
): Promise<void> {
  if (stored.length === 0) return;
  await client.query(
    `INSERT INTO content_items (hub_id, message_id, line_message_id, kind, file_name, state,
       next_attempt_at, created_at, updated_at)
     SELECT m.hub_id, m.public_id, x.lm, x.k, x.f, 'pending', x.now, x.now, x.now
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
       AS x(h, sid, lm, k, f, now)
     JOIN messages AS m ON m.hub_id = x.h AND m.source_id = x.sid
     ON CONFLICT DO NOTHING`,
    [
      stored.map(({ item }) => item.hubId),
      stored.map(({ op }) => op.sourceId),
      stored.map(({ op }) => op.content?.lineMessageId ?? ''),
      stored.map(({ op }) => op.content?.kind ?? ''),
      stored.map(({ op }) => op.content?.fileName ?? null),
      stored.map(({ item }) => item.now),
    ],
  );
}
