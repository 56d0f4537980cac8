/**
 * The account screen's conversations (CONTRACT §14), written once for both engines: a hub's
 * contacts, newest activity first, and one contact's messages a page at a time. Both page by keyset
 * (the last row shown), never by OFFSET, and read through the indexes messages already have: a
 * page of contacts walks the hub's newest messages (messages_by_hub_and_time) until it has met the
 * newest message of enough contacts, each checked and counted in messages_by_contact_and_time
 * (contact_id, created_at, id); a page of messages is a seek in the same index.
 */
import type {
  ContactsPage,
  ContactsPageQuery,
  ConversationMessage,
  ConversationPage,
  ConversationQuery,
  ConversationsPort,
  MessagePosition,
} from '../store.js';
import type { Engine } from './engine.js';
import type { Sql } from './executor.js';

/** The sort key of a contact without messages: after every real time (MIN_TIMESTAMP_MS is year 1). */
export const NO_MESSAGE_AT = Number.MIN_SAFE_INTEGER;

type ContactTuple = { id: number; line_id: string; vid: string; name: string; last_at: number };

/**
 * The same page by every contact's newest message, the way the account screen first read it: one
 * seek per contact of the hub. Kept as the tests' oracle for contactsPage (a hub of 20,000 contacts
 * took it 30 to 40 ms a page).
 */
export const CONTACTS_BY_EVERY_NEWEST_SQL = `SELECT id, line_id, vid, name, last_at FROM (
       SELECT c.id, c.line_id, c.vid, c.name,
              COALESCE((SELECT MAX(m.created_at) FROM messages AS m WHERE m.contact_id = c.id), ?) AS last_at
       FROM contacts AS c WHERE c.hub_id = ?
     ) AS t
     WHERE last_at < ? OR (last_at = ? AND id < ?)
     ORDER BY last_at DESC, id DESC
     LIMIT ?`;

/** Messages read newest first a round while looking for a page's contacts. */
const SCAN_ROWS = 512;
/** Rounds before the page is read the long way (a busy contact's thousands of messages below the cursor). */
const MAX_ROUNDS = 8;

/** The contacts of `ids`, by id. */
async function contactRows(sql: Sql, ids: number[]): Promise<Map<number, ContactTuple>> {
  const rows =
    ids.length === 0
      ? []
      : await sql.all<ContactTuple>(
          `SELECT id, line_id, vid, name, 0 AS last_at FROM contacts WHERE id IN (${ids.map(() => '?').join(', ')})`,
          ids,
        );
  return new Map(rows.map((row) => [Number(row.id), row]));
}

/**
 * The next contacts after `after` in the page's order, by their newest message, up to `want`: the
 * hub's messages read newest first (its time index), a contact taken where its newest message is
 * met. Only as many messages are read as hold that many contacts (a busy contact's many messages are
 * passed over), not every contact of the hub.
 */
async function contactsByNewestMessage(
  sql: Sql,
  hubId: string,
  after: { lastAt: number; contactId: number },
  want: number,
): Promise<{ rows: ContactTuple[]; exhausted: boolean } | undefined> {
  const found = new Map<number, number>();
  const seen = new Set<number>();
  let below = after.lastAt;
  for (let round = 0; ; round++) {
    if (round === MAX_ROUNDS) return undefined;
    const batch = await sql.all<{ contact_id: number; created_at: number }>(
      `SELECT contact_id, created_at FROM messages
       WHERE hub_id = ? AND created_at <= ? ORDER BY created_at DESC LIMIT ?`,
      [hubId, below, SCAN_ROWS],
    );
    const fresh: Array<{ contactId: number; at: number }> = [];
    for (const row of batch) {
      const contactId = Number(row.contact_id);
      if (seen.has(contactId)) continue;
      seen.add(contactId);
      fresh.push({ contactId, at: Number(row.created_at) });
    }
    if (fresh.length > 0) {
      // A contact met here may have a newer message above the page's start (an earlier page's).
      // One seek a contact for its newest message (MAX of a correlated subquery reads one index
      // entry; MAX with GROUP BY read every message of each: 8 ms for a round's 500 contacts).
      const newest = await sql.all<{ contact_id: number; last_at: number }>(
        `SELECT c.id AS contact_id,
                (SELECT MAX(m.created_at) FROM messages AS m WHERE m.contact_id = c.id) AS last_at
         FROM contacts AS c WHERE c.id IN (${fresh.map(() => '?').join(', ')})`,
        fresh.map((f) => f.contactId),
      );
      for (const row of newest) {
        const contactId = Number(row.contact_id);
        const lastAt = Number(row.last_at);
        if (lastAt < after.lastAt || (lastAt === after.lastAt && contactId < after.contactId)) {
          found.set(contactId, lastAt);
        }
      }
    }
    const oldest = batch.at(-1);
    const exhausted = batch.length < SCAN_ROWS;
    const floor = oldest ? Number(oldest.created_at) : Number.MIN_SAFE_INTEGER;
    // Every contact whose newest message is above the floor is found; one at the floor may not be yet.
    const settled = [...found.values()].filter((at) => at > floor).length;
    if (exhausted || settled >= want) {
      const ordered = [...found.entries()]
        .filter(([, at]) => exhausted || at > floor)
        .sort(([idA, atA], [idB, atB]) => atB - atA || idB - idA)
        .slice(0, want);
      const rows = await contactRows(
        sql,
        ordered.map(([id]) => id),
      );
      return {
        rows: ordered.flatMap(([id, at]) => {
          const row = rows.get(id);
          return row ? [{ ...row, last_at: at }] : [];
        }),
        exhausted,
      };
    }
    // The next round starts at this one's oldest time (its ties are read again, the seen skipped).
    if (floor === below && batch.length === SCAN_ROWS) {
      // More than a round of messages at one instant: the page is read the long way.
      return undefined;
    }
    below = floor;
  }
}

/** How a contact's name, lineId or vid is compared with a search for it. */
const folded = (text: string) => text.normalize('NFKC').toLowerCase();
/** Contacts a statement asks about at once (an IN list: far under every engine's parameter limit). */
const IDS_A_STATEMENT = 500;

/**
 * The next `want` contacts of the page's order among those matching `query.matching`: the hub's
 * contacts read once (id and the three texts: a few MB for 100,000) and compared here, then only
 * the matching ones' newest messages sought (one index entry each). A query that matches nothing
 * costs one read of the contacts, not a walk of every message.
 */
async function matchingContacts(
  sql: Sql,
  query: ContactsPageQuery,
  after: { lastAt: number; contactId: number },
  want: number,
): Promise<ContactTuple[]> {
  const needle = folded(query.matching ?? '');
  const all = await sql.all<Omit<ContactTuple, 'last_at'>>(
    'SELECT id, line_id, vid, name FROM contacts WHERE hub_id = ?',
    [query.hubId],
  );
  const matching = all.filter((c) =>
    [c.name, c.line_id, c.vid].some((text) => folded(text).includes(needle)),
  );
  const rows: ContactTuple[] = [];
  for (let start = 0; start < matching.length; start += IDS_A_STATEMENT) {
    const chunk = matching.slice(start, start + IDS_A_STATEMENT);
    const newest = await sql.all<{ id: number; last_at: number | null }>(
      `SELECT c.id, (SELECT MAX(m.created_at) FROM messages AS m WHERE m.contact_id = c.id) AS last_at
       FROM contacts AS c WHERE c.id IN (${chunk.map(() => '?').join(', ')})`,
      chunk.map((c) => Number(c.id)),
    );
    const lastAt = new Map(
      newest.map((row) => [Number(row.id), row.last_at === null ? NO_MESSAGE_AT : Number(row.last_at)]),
    );
    for (const contact of chunk) {
      const at = lastAt.get(Number(contact.id)) ?? NO_MESSAGE_AT;
      const id = Number(contact.id);
      if (at < after.lastAt || (at === after.lastAt && id < after.contactId))
        rows.push({ ...contact, last_at: at });
    }
  }
  return rows.sort((a, b) => b.last_at - a.last_at || Number(b.id) - Number(a.id)).slice(0, want);
}

/**
 * One page of the hub's contacts by their newest message (newest first, then the newest contact
 * first; contacts without messages last), after `query.after`, with each one's message count.
 */
export async function contactsPage(sql: Sql, query: ContactsPageQuery): Promise<ContactsPage> {
  const after = query.after ?? { lastAt: Number.MAX_SAFE_INTEGER, contactId: Number.MAX_SAFE_INTEGER };
  const want = query.limit + 1;
  if (query.matching !== undefined)
    return counted(sql, query.limit, await matchingContacts(sql, query, after, want));
  /** Contacts without a message, newest contact first, below `contactId`. */
  const silent = (contactId: number, count: number) =>
    sql.all<ContactTuple>(
      `SELECT id, line_id, vid, name, ? AS last_at FROM contacts AS c
       WHERE c.hub_id = ? AND c.id < ? AND NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.contact_id = c.id)
       ORDER BY id DESC LIMIT ?`,
      [NO_MESSAGE_AT, query.hubId, contactId, count],
    );
  let rows: ContactTuple[];
  if (after.lastAt === NO_MESSAGE_AT) {
    rows = await silent(after.contactId, want);
  } else {
    const newest = await contactsByNewestMessage(sql, query.hubId, after, want);
    if (!newest) {
      rows = await sql.all<ContactTuple>(CONTACTS_BY_EVERY_NEWEST_SQL, [
        NO_MESSAGE_AT,
        query.hubId,
        after.lastAt,
        after.lastAt,
        after.contactId,
        want,
      ]);
    } else {
      rows = newest.rows;
      // Past the last contact with messages: those without come next.
      if (newest.exhausted && rows.length < want) {
        rows = [...rows, ...(await silent(Number.MAX_SAFE_INTEGER, want - rows.length))];
      }
    }
  }
  return counted(sql, query.limit, rows);
}

/** A page of `rows` (one more than `limit` when more follow), each contact with its message count. */
async function counted(sql: Sql, limit: number, rows: ContactTuple[]): Promise<ContactsPage> {
  const hasMore = rows.length > limit;
  const shown = rows.slice(0, limit);
  // Counted for the page's contacts only, each a range of the same index.
  const counts = new Map<number, number>();
  if (shown.length > 0) {
    const counted = await sql.all<{ contact_id: number; n: number }>(
      `SELECT contact_id, COUNT(*) AS n FROM messages
       WHERE contact_id IN (${shown.map(() => '?').join(', ')}) GROUP BY contact_id`,
      shown.map((row) => Number(row.id)),
    );
    for (const row of counted) counts.set(Number(row.contact_id), Number(row.n));
  }
  return {
    contacts: shown.map((row) => {
      const lastAt = Number(row.last_at);
      return {
        contactId: Number(row.id),
        lineId: row.line_id,
        vid: row.vid,
        name: row.name,
        lastMessageAt: lastAt === NO_MESSAGE_AT ? null : lastAt,
        messageCount: counts.get(Number(row.id)) ?? 0,
      };
    }),
    hasMore,
  };
}

type MessageTuple = {
  id: number;
  public_id: string;
  created_at: number;
  msg: string;
  content_type: string;
  sender: string;
  kind: string | null;
  state: string | null;
  media_type: string | null;
  file_name: string | null;
};

const MESSAGE_COLUMNS = `m.id, m.public_id, m.created_at, m.msg, m.content_type,
  COALESCE(m.sender, NULLIF(c.name, ''), 'User') AS sender,
  ci.kind, ci.state, ci.media_type, ci.file_name
  FROM messages AS m JOIN contacts AS c ON c.id = m.contact_id
  LEFT JOIN content_items AS ci ON ci.hub_id = m.hub_id AND ci.message_id = m.public_id`;

function toMessage(row: MessageTuple): ConversationMessage {
  return {
    rowId: Number(row.id),
    id: row.public_id,
    sender: row.sender,
    msg: row.msg,
    contentType: row.content_type,
    createdAt: Number(row.created_at),
    content:
      row.kind === null || row.state === null
        ? null
        : {
            kind: row.kind,
            state: row.state as NonNullable<ConversationMessage['content']>['state'],
            mediaType: row.media_type,
            fileName: row.file_name,
          },
  };
}

/**
 * One contact's messages, oldest first on the page: the newest `limit`, those around a message
 * (about half before it, half after), or the `limit` before or after a position; within
 * `fromMs`..`toMsExclusive` when given. Undefined when the hub has no such contact.
 */
export async function conversationPage(
  sql: Sql,
  query: ConversationQuery,
): Promise<ConversationPage | undefined> {
  const contact = await sql.get<{ id: number; line_id: string; vid: string; name: string }>(
    'SELECT id, line_id, vid, name FROM contacts WHERE hub_id = ? AND line_id = ?',
    [query.hubId, query.lineId],
  );
  if (!contact) return undefined;
  const contactId = Number(contact.id);
  const bounds = [query.fromMs ?? Number.MIN_SAFE_INTEGER, query.toMsExclusive ?? Number.MAX_SAFE_INTEGER];
  const inRange = 'm.contact_id = ? AND m.created_at >= ? AND m.created_at < ?';
  const older = (before: MessagePosition, inclusive: boolean, limit: number) =>
    sql.all<MessageTuple>(
      `SELECT ${MESSAGE_COLUMNS}
       WHERE ${inRange} AND (m.created_at < ? OR (m.created_at = ? AND m.id ${inclusive ? '<=' : '<'} ?))
       ORDER BY m.created_at DESC, m.id DESC LIMIT ?`,
      [contactId, ...bounds, before.createdAt, before.createdAt, before.rowId, limit],
    );
  const newer = (after: MessagePosition, limit: number) =>
    sql.all<MessageTuple>(
      `SELECT ${MESSAGE_COLUMNS}
       WHERE ${inRange} AND (m.created_at > ? OR (m.created_at = ? AND m.id > ?))
       ORDER BY m.created_at ASC, m.id ASC LIMIT ?`,
      [contactId, ...bounds, after.createdAt, after.createdAt, after.rowId, limit],
    );
  const { limit } = query;
  /** Whether the contact has a message past `position` that way (a page's edge). */
  const beyond = async (position: MessagePosition, way: 'older' | 'newer') => {
    const rows = way === 'older' ? await older(position, false, 1) : await newer(position, 1);
    return rows.length > 0;
  };
  const page = async (olderRows: MessageTuple[], newerRows: MessageTuple[], found: boolean) => {
    const messages = [...olderRows.reverse(), ...newerRows].map(toMessage);
    const first = messages[0];
    const last = messages.at(-1);
    return {
      contact: { lineId: contact.line_id, vid: contact.vid, name: contact.name },
      messages,
      hasOlder: first ? await beyond(first, 'older') : false,
      hasNewer: last ? await beyond(last, 'newer') : false,
      found,
    };
  };
  const at = query.at;
  if (at && 'around' in at) {
    const target = await sql.get<{ id: number; created_at: number }>(
      `SELECT m.id, m.created_at FROM messages AS m WHERE m.hub_id = ? AND m.public_id = ? AND ${inRange}`,
      [query.hubId, at.around, contactId, ...bounds],
    );
    if (target) {
      const position = { createdAt: Number(target.created_at), rowId: Number(target.id) };
      // The message and about half a page before it; the rest of the page after it.
      const olderRows = await older(position, true, Math.ceil(limit / 2));
      return page(olderRows, await newer(position, limit - olderRows.length), true);
    }
  }
  if (at && 'after' in at) return page([], await newer(at.after, limit), false);
  const before = at && 'before' in at ? at.before : { createdAt: Number.MAX_SAFE_INTEGER, rowId: 0 };
  return page(await older(before, false, limit), [], false);
}

/** The conversations port (store.ts): the account screen's viewer. Reads only. */
export function conversationsPort(engine: Engine): ConversationsPort {
  return {
    contacts: (query) => contactsPage(engine.reads, query),
    messages: (query) => conversationPage(engine.reads, query),
  };
}
