/**
 * Bulk import on PostgreSQL (`chatlog import`, the benchmark's loader): each batch as arrays, in a
 * few statements whatever its size. SQLite's counterpart goes row by row (sqlite.import.ts).
 */
import type pg from 'pg';
import type { Transaction } from '../sql/executor.js';
import { bumpDataVersion, hubExists } from '../sql/hubs.js';
import type { ImportMessage, ImportOutcome } from '../store.js';

/** Call inside a write transaction on `client` (whose statements `tx` runs): it commits or undoes the whole import. */
export async function importIntoPostgres(
  client: pg.PoolClient,
  tx: Transaction,
  hubId: string,
  batches: AsyncIterable<readonly ImportMessage[]>,
  now: number,
): Promise<ImportOutcome> {
  const outcome: ImportOutcome = { received: 0, inserted: 0, duplicates: 0, contactsCreated: 0 };
  if (!(await hubExists(tx, hubId))) throw new Error(`hub ${hubId} does not exist`);
  let changed = false;
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
       ON CONFLICT (hub_id, line_id) DO NOTHING`,
      [hubId, lineIds, vids, names, now],
    );
    outcome.contactsCreated += created.rowCount ?? 0;
    const updated = await client.query(
      `UPDATE contacts AS c
       SET vid = CASE WHEN u.v <> '' THEN u.v ELSE c.vid END, name = CASE WHEN u.n <> '' THEN u.n ELSE c.name END
       FROM unnest($2::text[], $3::text[], $4::text[]) AS u(l, v, n)
       WHERE c.hub_id = $1 AND c.line_id = u.l
         AND (CASE WHEN u.v <> '' THEN u.v ELSE c.vid END, CASE WHEN u.n <> '' THEN u.n ELSE c.name END)
             IS DISTINCT FROM (c.vid, c.name)`,
      [hubId, lineIds, vids, names],
    );
    const ids = await client.query<{ id: number; line_id: string }>(
      'SELECT id, line_id FROM contacts WHERE hub_id = $1 AND line_id = ANY($2::text[])',
      [hubId, lineIds],
    );
    const idOf = new Map(ids.rows.map((row) => [row.line_id, row.id]));
    const inserted = await client.query(
      `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id)
       SELECT $1, c, t, s, m, ct, sid
       FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
         WITH ORDINALITY AS x(c, t, s, m, ct, sid, o)
       ORDER BY o
       ON CONFLICT (hub_id, source_id) DO NOTHING`,
      [
        hubId,
        batch.map((m) => idOf.get(m.lineId)),
        batch.map((m) => m.createdAt),
        batch.map((m) => m.sender),
        batch.map((m) => m.msg),
        batch.map((m) => m.contentType),
        batch.map((m) => m.sourceId),
      ],
    );
    outcome.received += batch.length;
    outcome.inserted += inserted.rowCount ?? 0;
    outcome.duplicates += batch.length - (inserted.rowCount ?? 0);
    if ((inserted.rowCount ?? 0) > 0 || (created.rowCount ?? 0) > 0 || (updated.rowCount ?? 0) > 0)
      changed = true;
  }
  if (changed) await bumpDataVersion(tx, hubId);
  return outcome;
}
