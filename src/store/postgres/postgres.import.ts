/**
 * Bulk import on PostgreSQL (`chatlog import`, the benchmark's loader): each batch as arrays, in a
 * few statements whatever its size. SQLite's counterpart goes row by row (sqlite.import.ts).
 */
import type pg from 'pg';
import { assignedMessageId, type FeedClock } from '../sql/changes.js';
import type { Transaction } from '../sql/executor.js';
import { hubExists } from '../sql/hubs.js';
import type { ImportMessage, ImportOutcome } from '../store.js';
import { INSERT_SEARCH_ROWS, searchRowParams } from './postgres.search.js';
import { storable } from './postgres.sql.js';

/**
 * Call inside a write transaction on `client` (whose statements `tx` runs) that holds the hub
 * (`clock`): it commits or undoes the whole import. Each new message is a message.created; each
 * contact whose vid or name the file changes, one contact.updated.
 */
export async function importIntoPostgres(
  client: pg.PoolClient,
  tx: Transaction,
  clock: FeedClock,
  hubId: string,
  batches: AsyncIterable<readonly ImportMessage[]>,
  now: number,
  searchIndex = true,
): Promise<ImportOutcome> {
  const outcome: ImportOutcome = { received: 0, inserted: 0, duplicates: 0, contactsCreated: 0 };
  if (!(await hubExists(tx, hubId))) throw new Error(`hub ${hubId} does not exist`);
  // A file holds messages of any time: every answer of the hub may change.
  clock.changedHistory(hubId);
  const updatedContacts = new Set<number>();
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    // Contacts in the order this batch first names them; a non-empty vid or name updates.
    const latest = new Map<string, { vid: string; name: string }>();
    for (const m of batch) {
      const seen = latest.get(m.lineId) ?? { vid: '', name: '' };
      latest.set(m.lineId, {
        vid: m.vid !== '' ? m.vid : seen.vid,
        name: m.name !== '' ? m.name : seen.name,
      });
    }
    const lineIds = [...latest.keys()];
    const vids = lineIds.map((l) => latest.get(l)?.vid ?? '');
    const names = lineIds.map((l) => latest.get(l)?.name ?? '');
    const created = await client.query(
      `INSERT INTO contacts (hub_id, line_id, vid, name, created_at)
       SELECT $1, l, v, n, $5 FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(l, v, n, o)
       ORDER BY o
       ON CONFLICT (hub_id, line_id) DO NOTHING
       RETURNING id, vid <> '' OR name <> '' AS named`,
      [hubId, lineIds, vids, names, now],
    );
    for (const row of created.rows as Array<{ id: number; named: boolean }>) {
      if (row.named) updatedContacts.add(row.id);
    }
    outcome.contactsCreated += created.rowCount ?? 0;
    const updated = await client.query(
      `UPDATE contacts AS c
       SET vid = CASE WHEN u.v <> '' THEN u.v ELSE c.vid END, name = CASE WHEN u.n <> '' THEN u.n ELSE c.name END
       FROM unnest($2::text[], $3::text[], $4::text[]) AS u(l, v, n)
       WHERE c.hub_id = $1 AND c.line_id = u.l
         AND (CASE WHEN u.v <> '' THEN u.v ELSE c.vid END, CASE WHEN u.n <> '' THEN u.n ELSE c.name END)
             IS DISTINCT FROM (c.vid, c.name)
       RETURNING c.id`,
      [hubId, lineIds, vids, names],
    );
    for (const row of updated.rows as Array<{ id: number }>) updatedContacts.add(row.id);
    const ids = await client.query<{ id: number; line_id: string }>(
      'SELECT id, line_id FROM contacts WHERE hub_id = $1 AND line_id = ANY($2::text[])',
      [hubId, lineIds],
    );
    const idOf = new Map(ids.rows.map((row) => [row.line_id, row.id]));
    const seqs = batch.map(() => clock.next(hubId));
    let pending = batch.map((message, i) => ({ message, seq: seqs[i] ?? 0, attempt: 0 }));
    let inserted = 0;
    while (pending.length > 0) {
      const result = await client.query<{ id: number; msg: string }>(
        `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id, seq,
                               changed_at, public_id)
         SELECT $1, c, t, s, m, ct, sid, q, $9, pid
         FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::bigint[], $10::text[])
           WITH ORDINALITY AS x(c, t, s, m, ct, sid, q, pid, o)
         ORDER BY o
         ON CONFLICT DO NOTHING
         RETURNING id, msg`,
        [
          hubId,
          // Text as PostgreSQL keeps it (postgres.sql.ts storable), as the line ids read back are.
          pending.map(({ message }) => idOf.get(storable(message.lineId))),
          pending.map(({ message }) => message.createdAt),
          pending.map(({ message }) => message.sender),
          pending.map(({ message }) => message.msg),
          pending.map(({ message }) => message.contentType),
          pending.map(({ message }) => message.sourceId),
          pending.map(({ seq }) => seq),
          now,
          pending.map(({ message, attempt }) => assignedMessageId(message.sourceId, attempt)),
        ],
      );
      inserted += result.rowCount ?? 0;
      // Indexed in the import's transaction, as every message is (../sql/search.ts).
      if (result.rows.length > 0) {
        const rows = result.rows.map((row) => ({ id: Number(row.id), hubId, msg: row.msg }));
        if (searchIndex) await client.query(INSERT_SEARCH_ROWS, searchRowParams(rows));
      }
      if ((result.rowCount ?? 0) === pending.length) break;
      // Some were not stored: already there (a re-import), or their id is another message's.
      const there = await client.query<{ source_id: string }>(
        'SELECT source_id FROM messages WHERE hub_id = $1 AND source_id = ANY($2::text[])',
        [hubId, pending.map(({ message }) => message.sourceId)],
      );
      const stored = new Set(there.rows.map((row) => row.source_id));
      const before = pending.length;
      pending = pending.filter(({ message }) => !stored.has(storable(message.sourceId)));
      // Those stored now are this round's, or duplicates: only the others try another id.
      outcome.duplicates += before - pending.length - (result.rowCount ?? 0);
      pending = pending.map((item) => ({ ...item, attempt: item.attempt + 1 }));
      if (pending.some((item) => item.attempt > 8)) throw new Error('no free message id');
    }
    outcome.received += batch.length;
    outcome.inserted += inserted;
  }
  // After the messages, so a reader of the feed sees each contact's messages, then its new name.
  for (const contactId of updatedContacts) {
    await tx.run(
      `INSERT INTO changes (hub_id, seq, type, at, contact_id) VALUES (?, ?, 'contact.updated', ?, ?)`,
      [hubId, clock.next(hubId), now, contactId],
    );
  }
  return outcome;
}
