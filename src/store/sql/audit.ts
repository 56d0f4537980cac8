/** The audit log (CONTRACT §13), for both engines: records appended in batches, read newest first. */
import type { AuditPort, AuditQuery, AuditRecord } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

/** Rows per statement (10 parameters each). */
const ROWS_PER_INSERT = 200;

export async function appendAudit(tx: Transaction, records: readonly AuditRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += ROWS_PER_INSERT) {
    const rows = records.slice(i, i + ROWS_PER_INSERT);
    await tx.run(
      `INSERT INTO audit_log (at, hub_id, key_id, endpoint, query, status, messages, bytes, client)
       VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      rows.flatMap((r) => [
        r.at,
        r.hubId,
        r.keyId,
        r.endpoint,
        r.query,
        r.status,
        r.messages,
        r.bytes,
        r.client,
      ]),
    );
  }
}

type AuditRow = {
  id: number;
  at: number;
  hub_id: string;
  key_id: string;
  endpoint: string;
  query: string;
  status: number;
  messages: number | null;
  bytes: number | null;
  client: string;
};

export async function listAudit(sql: Sql, query: AuditQuery): Promise<Array<AuditRecord & { id: number }>> {
  const before = query.before ?? { at: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER };
  const rows = await sql.all<AuditRow>(
    `SELECT id, at, hub_id, key_id, endpoint, query, status, messages, bytes, client FROM audit_log
     WHERE hub_id = ? AND at >= ? AND (at < ? OR (at = ? AND id < ?))${query.keyId === undefined ? '' : ' AND key_id = ?'}
     ORDER BY at DESC, id DESC LIMIT ?`,
    [
      query.hubId,
      query.since ?? Number.MIN_SAFE_INTEGER,
      before.at,
      before.at,
      before.id,
      ...(query.keyId === undefined ? [] : [query.keyId]),
      query.limit,
    ],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    at: Number(row.at),
    hubId: row.hub_id,
    keyId: row.key_id,
    endpoint: row.endpoint,
    query: row.query,
    status: Number(row.status),
    messages: row.messages === null ? null : Number(row.messages),
    bytes: row.bytes === null ? null : Number(row.bytes),
    client: row.client,
  }));
}

export async function pruneAudit(tx: Transaction, before: number): Promise<number> {
  return tx.run('DELETE FROM audit_log WHERE at < ?', [before]);
}

/** The audit port (store.ts). */
export function auditPort(engine: Engine): AuditPort {
  return engine.port(
    'audit',
    {
      append: (records) => engine.write((tx) => appendAudit(tx, records)),
      list: (query) => listAudit(engine.reads, query),
      prune: (before) => engine.write((tx) => pruneAudit(tx, before)),
    },
    ['append', 'prune'],
  );
}
