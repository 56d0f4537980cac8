/**
 * What a report counts (CONTRACT §17), for both engines: the range's messages through
 * messages_by_hub_and_time in section 3's order (no sort), and each of their contacts' last message
 * before the range through messages_by_contact_and_time, a few hundred contacts a statement.
 * The counting itself is the module's (../../modules/reports/reports.compute.ts).
 */
import type { ReportScan, ReportsPort, WaitingContact } from '../store.js';
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

/** A message of contact `c` is the account's (as FROM_ACCOUNT says, as a condition). */
const ACCOUNTS = `(m.sender = 'You' OR (m.sender IS NULL AND c.name = 'You'))`;

/**
 * The hub's friends waiting now: each contact's newest message, then (for those whose newest is the
 * friend's) the account's last message, walked back from the newest through
 * messages_by_contact_and_time (a few steps: it stops at the first of the account's), and the
 * friend's first message after it. Three seeks a contact; no message is read twice.
 */
export async function waitingContacts(
  sql: Sql,
  hubId: string,
  limit: number,
): Promise<{ contacts: WaitingContact[]; total: number }> {
  const rows = await sql.all<{ line_id: string; name: string; since: number }>(
    `SELECT t.line_id, t.name,
       (SELECT MIN(m.created_at) FROM messages AS m WHERE m.contact_id = t.id
          AND (t.answered_at IS NULL OR m.created_at > t.answered_at
               OR (m.created_at = t.answered_at AND m.id > t.answered_id))) AS since
     FROM (
       SELECT c.id, c.line_id, c.name,
         (SELECT CASE WHEN ${ACCOUNTS} THEN 1 ELSE 0 END FROM messages AS m WHERE m.contact_id = c.id
            ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS last_account,
         (SELECT m.created_at FROM messages AS m WHERE m.contact_id = c.id AND ${ACCOUNTS}
            ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS answered_at,
         (SELECT m.id FROM messages AS m WHERE m.contact_id = c.id AND ${ACCOUNTS}
            ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS answered_id
       FROM contacts AS c WHERE c.hub_id = ?
     ) AS t
     WHERE t.last_account = 0`,
    [hubId],
  );
  const contacts = rows
    .map((row) => ({ lineId: row.line_id, name: row.name, since: Number(row.since) }))
    .sort((a, b) => a.since - b.since || (a.lineId < b.lineId ? -1 : 1));
  return { contacts: contacts.slice(0, limit), total: contacts.length };
}

/** The reports port (store.ts): reads only. */
export function reportsPort(engine: Engine): ReportsPort {
  return engine.port(
    'reports',
    {
      scan: (hubId, fromMs, toMsExclusive) => scanReport(engine.reads, hubId, fromMs, toMsExclusive),
      waiting: (hubId, limit) => waitingContacts(engine.reads, hubId, limit),
    },
    [],
  );
}
