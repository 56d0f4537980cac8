/**
 * Bulk import on SQLite (`chatlog import`, the benchmark's loader): row by row through prepared
 * statements in the caller's write transaction, the fastest way into SQLite; a batch is a savepoint.
 * PostgreSQL's counterpart sends each batch as arrays in a few statements (postgres.import.ts).
 */
import type Database from 'better-sqlite3';
import type { Transaction } from '../sql/executor.js';
import { bumpDataVersion, hubExists } from '../sql/hubs.js';
import type { ImportMessage, ImportOutcome } from '../store.js';

interface KnownContact {
  id: number;
  vid: string;
  name: string;
}

/** Call inside a write transaction (SqliteStore.write, whose statements `tx` runs): it commits or undoes the whole import. */
export async function importIntoSqlite(
  db: Database.Database,
  tx: Transaction,
  hubId: string,
  batches: AsyncIterable<readonly ImportMessage[]>,
  now: number,
): Promise<ImportOutcome> {
  const findContact = db.prepare('SELECT id, vid, name FROM contacts WHERE hub_id = ? AND line_id = ?');
  const insertContact = db.prepare(
    'INSERT INTO contacts (hub_id, line_id, vid, name, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const updateContact = db.prepare('UPDATE contacts SET vid = ?, name = ? WHERE id = ?');
  const insertMessage = db.prepare(
    `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hub_id, source_id) DO NOTHING`,
  );
  const contacts = new Map<string, KnownContact>();
  const outcome: ImportOutcome = { received: 0, inserted: 0, duplicates: 0, contactsCreated: 0 };
  let contactsChanged = false;

  // Nested in the caller's transaction, db.transaction() becomes a savepoint.
  const storeBatch = db.transaction((batch: readonly ImportMessage[]) => {
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
        contactsChanged = true;
      }
      const result = insertMessage.run(
        hubId,
        contact.id,
        message.createdAt,
        message.sender,
        message.msg,
        message.contentType,
        message.sourceId,
      );
      outcome.received += 1;
      if (result.changes > 0) outcome.inserted += 1;
      else outcome.duplicates += 1;
    }
  });

  if (!(await hubExists(tx, hubId))) throw new Error(`hub ${hubId} does not exist`);
  for await (const batch of batches) storeBatch(batch);
  if (outcome.inserted > 0 || outcome.contactsCreated > 0 || contactsChanged) {
    await bumpDataVersion(tx, hubId);
  }
  return outcome;
}
