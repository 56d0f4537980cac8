/**
 * What a report counts (CONTRACT §17), for both engines: the range's messages through
 * messages_by_hub_and_time in section 3's order (no sort), and each of their contacts' last message
 * before the range through messages_by_contact_and_time, a few hundred contacts a statement.
 * The counting itself is the module's (../../modules/reports/reports.compute.ts).
 */
import type { ReportScan, ReportsPort } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql } from './executor.js';

/** Contacts a statement when reading their last message before the range. */
const CONTACTS_A_STATEMENT = 500;

/**
 * From the account: the stored sender `You`; a message without one (the friend's) shows the
 * contact's name, so a friend named `You` reads as the account, as section 3 renders it.
 */
const FROM_ACCOUNT = `CASE WHEN m.sender IS NULL THEN (CASE WHEN c.name = 'You' THEN 1 ELSE 0 END)
  WHEN m.sender = 'You' THEN 1 ELSE 0 END`;

export async function scanReport(
  sql: Sql,
  hubId: string,
  fromMs: number,
  toMsExclusive: number,
): Promise<ReportScan> {
  const named = await sql.all<{ id: number }>(`SELECT id FROM contacts WHERE hub_id = ? AND name = 'You'`, [
    hubId,
  ]);
  const namedYou = new Set(named.map((row) => Number(row.id)));
  const rows = await sql.all<{ c: number; t: number; s: string | null }>(
    `SELECT contact_id AS c, created_at AS t, sender AS s FROM messages
     WHERE hub_id = ? AND created_at >= ? AND created_at < ? ORDER BY created_at, id`,
    [hubId, fromMs, toMsExclusive],
  );
  const contact = new Array<number>(rows.length);
  const createdAt = new Array<number>(rows.length);
  const fromAccount = new Uint8Array(rows.length);
  const seen = new Set<number>();
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as { c: number; t: number; s: string | null };
    const id = Number(row.c);
    contact[i] = id;
    createdAt[i] = Number(row.t);
    fromAccount[i] = (row.s === null ? namedYou.has(id) : row.s === 'You') ? 1 : 0;
    seen.add(id);
  }
  const before = new Map<number, boolean>();
  const ids = [...seen];
  for (let start = 0; start < ids.length; start += CONTACTS_A_STATEMENT) {
    const chunk = ids.slice(start, start + CONTACTS_A_STATEMENT);
    const last = await sql.all<{ id: number; a: number | null }>(
      `SELECT c.id AS id, (SELECT ${FROM_ACCOUNT} FROM messages AS m WHERE m.contact_id = c.id AND m.created_at < ?
         ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS a
       FROM contacts AS c WHERE c.id IN (${chunk.map(() => '?').join(', ')})`,
      [fromMs, ...chunk],
    );
    for (const row of last) if (row.a !== null) before.set(Number(row.id), Number(row.a) === 1);
  }
  return { contact, createdAt, fromAccount, before };
}

/** The reports port (store.ts): reads only. */
export function reportsPort(engine: Engine): ReportsPort {
  return engine.port(
    'reports',
    { scan: (hubId, fromMs, toMsExclusive) => scanReport(engine.reads, hubId, fromMs, toMsExclusive) },
    [],
  );
}
