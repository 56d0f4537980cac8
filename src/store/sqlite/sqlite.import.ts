/**
 * Bulk import on SQLite (`chatlog import`, the benchmark's loader): row by row through prepared
 * statements in the caller's write transaction, the fastest way into SQLite.
 * PostgreSQL's counterpart sends each batch as arrays in a few statements (postgres.import.ts).
 */
import type Database from 'better-sqlite3';
import { assignedMessageId, type FeedClock } from '../sql/changes.js';
import type { Transaction } from '../sql/executor.js';
import { hubExists } from '../sql/hubs.js';
import { messageTokens } from '../sql/search.js';
import type { ImportMessage, ImportOutcome } from '../store.js';

interface KnownContact {
  id: number;
  vid: string;
  name: string;
}

/**
 * Call inside a write transaction (SqliteStore.write, whose statements `tx` runs) that holds the
 * hub (`clock`): it commits or undoes the whole import. Each new message is a message.created;
 * each contact whose vid or name the file changes, one contact.updated.
 */
export async function importIntoSqlite(
  db: Database.Database,
  tx: Transaction,
  clock: FeedClock,
  hubId: string,
  batches: AsyncIterable<readonly ImportMessage[]>,
  now: number,
  searchIndex = true,
): Promise<ImportOutcome> {
  const findContact = db.prepare('SELECT id, vid, name FROM contacts WHERE hub_id = ? AND line_id = ?');
  const insertContact = db.prepare(
    'INSERT INTO contacts (hub_id, line_id, vid, name, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const updateContact = db.prepare('UPDATE contacts SET vid = ?, name = ? WHERE id = ?');
  const insertMessage = db.prepare(
    `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id, seq,
       changed_at, public_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  // The search index, in the import's transaction as for every message (sqlite.search.ts).
  const indexMessage = db.prepare('INSERT INTO message_search (rowid, tokens) VALUES (?, ?)');
  const isStored = db.prepare('SELECT 1 FROM messages WHERE hub_id = ? AND source_id = ?').pluck();
  const logContactUpdated = db.prepare(
    `INSERT INTO changes (hub_id, seq, type, at, contact_id) VALUES (?, ?, 'contact.updated', ?, ?)`,
  );
  const updatedContacts = new Set<number>();
  const contacts = new Map<string, KnownContact>();
  const outcome: ImportOutcome = { received: 0, inserted: 0, duplicates: 0, contactsCreated: 0 };

  // Synchronous, in the caller's transaction, which undoes the whole import if any batch fails. Not
  // a savepoint of its own: SQLite copied each page a batch changed first into a sub-journal (4 %
  // of an import's CPU, most of it the search index's pages; perf, bench/search-import.ts).
  const storeBatch = (batch: readonly ImportMessage[]) => {
    for (const message of batch) {
      let contact = contacts.get(message.lineId);
      if (!contact) {
        contact = findContact.get(hubId, message.lineId) as KnownContact | undefined;
        if (!contact) {
          const id = Number(
            insertContact.run(hubId, message.lineId, message.vid, message.name, now).lastInsertRowid,
          );
          contact = { id, vid: message.vid, name: message.name };
          outcome.contactsCreated += 1;
          if (message.vid !== '' || message.name !== '') updatedContacts.add(id);
        }
        contacts.set(message.lineId, contact);
      }
      // A non-empty vid or name in the file updates the contact.
      const vid = message.vid !== '' ? message.vid : contact.vid;
      const name = message.name !== '' ? message.name : contact.name;
      if (vid !== contact.vid || name !== contact.name) {
        updateContact.run(vid, name, contact.id);
        contact.vid = vid;
        contact.name = name;
        updatedContacts.add(contact.id);
      }
      outcome.received += 1;
      const seq = clock.next(hubId);
      for (let attempt = 0; ; attempt++) {
        const id = assignedMessageId(message.sourceId, attempt);
        const args = [message.createdAt, message.sender, message.msg, message.contentType];
        const stored = insertMessage.run(hubId, contact.id, ...args, message.sourceId, seq, now, id);
        if (stored.changes > 0) {
          if (searchIndex) indexMessage.run(stored.lastInsertRowid, messageTokens(message.msg));
          outcome.inserted += 1;
          break;
        }
        if (isStored.get(hubId, message.sourceId) !== undefined) {
          outcome.duplicates += 1;
          break;
        }
        if (attempt > 8) throw new Error(`no free message id for ${message.sourceId}`);
      }
    }
  };

  if (!(await hubExists(tx, hubId))) throw new Error(`hub ${hubId} does not exist`);
  // A file holds messages of any time: every answer of the hub may change.
  clock.changedHistory(hubId);
  for await (const batch of batches) storeBatch(batch);
  // After the messages, so a reader of the feed sees each contact's messages, then its new name.
  for (const contactId of updatedContacts) logContactUpdated.run(hubId, clock.next(hubId), now, contactId);
  return outcome;
}
