/**
 * What a report counts (CONTRACT §17), for both engines: a hub's messages as columns for the
 * module's in-memory copy (../../modules/reports/reports.columns.ts), all of them a page at a time
 * through messages_by_hub_and_time in section 3's order, and those stored since a seq through
 * messages_in_feed_order. The counting itself is the module's.
 */
import type { ReportChange, ReportMessage, ReportPosition, ReportsPort, WaitingContact } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql } from './executor.js';

/**
 * From the account: the stored sender `You`; a message without one (the friend's) shows the
 * contact's name, so a friend named `You` reads as the account, as section 3 renders it. The
 * columns read the sender alone (a join a row cost more than the rest): 1 `You`, 0 another, null none.
 */
const REPORT_COLUMNS = `m.id AS id, m.seq AS seq, m.contact_id AS contact, m.created_at AS t,
  CASE WHEN m.sender IS NULL THEN NULL WHEN m.sender = 'You' THEN 1 ELSE 0 END AS a`;

interface ReportRow {
  id: number;
  seq: number;
  contact: number;
  t: number;
  a: number | null;
}

/** The hub's contacts named `You`: a message of theirs without a sender is the account's. */
export async function namedYou(sql: Sql, hubId: string): Promise<Set<number>> {
  const rows = await sql.all<{ id: number }>(`SELECT id FROM contacts WHERE hub_id = ? AND name = 'You'`, [
    hubId,
  ]);
  return new Set(rows.map((row) => Number(row.id)));
}

function toMessages(rows: readonly ReportRow[], named: ReadonlySet<number>): ReportMessage[] {
  return rows.map((row) => {
    const contact = Number(row.contact);
    return {
      id: Number(row.id),
      seq: Number(row.seq),
      contact,
      createdAt: Number(row.t),
      fromAccount: row.a === null ? named.has(contact) : Number(row.a) === 1,
    };
  });
}

export async function reportPosition(sql: Sql, hubId: string): Promise<ReportPosition | undefined> {
  const row = await sql.get<{ history_version: number; last_seq: number; changes_dropped_through: number }>(
    'SELECT history_version, last_seq, changes_dropped_through FROM hubs WHERE id = ?',
    [hubId],
  );
  return (
    row && {
      history: Number(row.history_version),
      lastSeq: Number(row.last_seq),
      changesDroppedThrough: Number(row.changes_dropped_through),
    }
  );
}

export async function reportMessages(
  sql: Sql,
  hubId: string,
  after: { createdAt: number; id: number } | null,
  limit: number,
  named: ReadonlySet<number>,
): Promise<ReportMessage[]> {
  const rows = await sql.all<ReportRow>(
    `SELECT ${REPORT_COLUMNS} FROM messages AS m
     WHERE m.hub_id = ?${after ? ' AND (m.created_at, m.id) > (?, ?)' : ''}
     ORDER BY m.created_at, m.id LIMIT ?`,
    after ? [hubId, after.createdAt, after.id, limit] : [hubId, limit],
  );
  return toMessages(rows, named);
}

/** A few messages' columns: the names of their contacts, for those without a sender, looked up for them. */
const FEW_COLUMNS = `m.id AS id, m.seq AS seq, m.contact_id AS contact, m.created_at AS t,
  CASE WHEN m.sender IS NULL
    THEN (SELECT CASE WHEN c.name = 'You' THEN 1 ELSE 0 END FROM contacts AS c WHERE c.id = m.contact_id)
    WHEN m.sender = 'You' THEN 1 ELSE 0 END AS a`;

export async function reportAppended(
  sql: Sql,
  hubId: string,
  afterSeq: number,
  throughSeq: number,
): Promise<ReportMessage[]> {
  const rows = await sql.all<ReportRow>(
    `SELECT ${FEW_COLUMNS} FROM messages AS m WHERE m.hub_id = ? AND m.seq > ? AND m.seq <= ? ORDER BY m.seq`,
    [hubId, afterSeq, throughSeq],
  );
  return toMessages(rows, new Set());
}

export async function reportChanges(
  sql: Sql,
  hubId: string,
  afterSeq: number,
  throughSeq: number,
): Promise<ReportChange[]> {
  const rows = await sql.all<{ seq: number; type: string; contact_id: number | null }>(
    'SELECT seq, type, contact_id FROM changes WHERE hub_id = ? AND seq > ? AND seq <= ? ORDER BY seq',
    [hubId, afterSeq, throughSeq],
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    type: row.type,
    contact: row.contact_id === null ? null : Number(row.contact_id),
  }));
}

/** Contacts a statement when reading their messages. */
const CONTACTS_A_STATEMENT = 500;

export async function reportContactMessages(
  sql: Sql,
  hubId: string,
  contacts: readonly number[],
  throughSeq: number,
): Promise<ReportMessage[]> {
  const found: ReportMessage[] = [];
  for (let start = 0; start < contacts.length; start += CONTACTS_A_STATEMENT) {
    const chunk = contacts.slice(start, start + CONTACTS_A_STATEMENT);
    const rows = await sql.all<ReportRow>(
      `SELECT ${FEW_COLUMNS} FROM messages AS m
       WHERE m.contact_id IN (${chunk.map(() => '?').join(', ')}) AND m.hub_id = ? AND m.seq <= ?`,
      [...chunk, hubId, throughSeq],
    );
    found.push(...toMessages(rows, new Set()));
  }
  return found.sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
}

export async function reportCount(sql: Sql, hubId: string, throughSeq: number): Promise<number> {
  const row = await sql.get<{ n: number }>(
    'SELECT COUNT(*) AS n FROM messages WHERE hub_id = ? AND seq <= ?',
    [hubId, throughSeq],
  );
  return Number(row?.n ?? 0);
}

/** A message of contact `c` is the account's (as the columns' side says, as a condition). */
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
      position: (hubId) => reportPosition(engine.reads, hubId),
      namedYou: (hubId) => namedYou(engine.reads, hubId),
      messages: (hubId, after, limit, named) => reportMessages(engine.reads, hubId, after, limit, named),
      appended: (hubId, afterSeq, throughSeq) => reportAppended(engine.reads, hubId, afterSeq, throughSeq),
      changes: (hubId, afterSeq, throughSeq) => reportChanges(engine.reads, hubId, afterSeq, throughSeq),
      contactMessages: (hubId, contacts, throughSeq) =>
        reportContactMessages(engine.reads, hubId, contacts, throughSeq),
      count: (hubId, throughSeq) => reportCount(engine.reads, hubId, throughSeq),
      waiting: (hubId, limit) => waitingContacts(engine.reads, hubId, limit),
    },
    [],
  );
}
