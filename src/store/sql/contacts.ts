/** The contacts table: a hub's LINE friends, in the order the hub first saw them. */

import type { Contact, ContactChanges, ContactsPort } from '../store.js';
import { type FeedClock, logChange } from './changes.js';
import { releaseBlobs } from './content.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

export function getContact(sql: Sql, hubId: string, lineId: string): Promise<Contact | undefined> {
  return sql.get<Contact>(
    'SELECT line_id AS "lineId", vid, name FROM contacts WHERE hub_id = ? AND line_id = ?',
    [hubId, lineId],
  );
}

/** The contact's row id, the contact created when the hub has none; `created` says which. */
export async function contactIdOf(
  tx: Transaction,
  hubId: string,
  lineId: string,
  now: number,
): Promise<{ id: number; created: boolean }> {
  const find = () =>
    tx.get<{ id: number }>('SELECT id FROM contacts WHERE hub_id = ? AND line_id = ?', [hubId, lineId]);
  const existing = await find();
  if (existing) return { id: existing.id, created: false };
  const inserted = await tx.get<{ id: number }>(
    `INSERT INTO contacts (hub_id, line_id, created_at) VALUES (?, ?, ?)
     ON CONFLICT (hub_id, line_id) DO NOTHING RETURNING id`,
    [hubId, lineId, now],
  );
  if (inserted) return { id: inserted.id, created: true };
  // PostgreSQL: another node created it a moment ago; its insert has committed by now.
  const concurrent = await find();
  if (!concurrent) throw new Error(`contact ${lineId} vanished`);
  return { id: concurrent.id, created: false };
}

/**
 * Sets the fields given (a name only when the contact has none yet, with `onlyIfNameEmpty`);
 * resolves true when a value changed.
 */
export async function changeContact(tx: Transaction, id: number, changes: ContactChanges): Promise<boolean> {
  let changed = 0;
  if (changes.vid !== undefined) {
    changed += await tx.run('UPDATE contacts SET vid = ? WHERE id = ? AND vid <> ?', [
      changes.vid,
      id,
      changes.vid,
    ]);
  }
  if (changes.name !== undefined) {
    changed += await tx.run(
      changes.onlyIfNameEmpty
        ? "UPDATE contacts SET name = ? WHERE id = ? AND name = '' AND name <> ?"
        : 'UPDATE contacts SET name = ? WHERE id = ? AND name <> ?',
      [changes.name, id, changes.name],
    );
  }
  return changed > 0;
}

/** LINE's follow (the friend added the account, or came back) and unfollow (blocked it). */
export async function setFollowing(
  tx: Transaction,
  id: number,
  following: boolean,
  at: number,
): Promise<void> {
  await tx.run(
    following
      ? 'UPDATE contacts SET followed_at = ?, unfollowed_at = NULL WHERE id = ?'
      : 'UPDATE contacts SET unfollowed_at = ? WHERE id = ?',
    [at, id],
  );
}

/** The LINE ids of the hub's contacts linked to HubSpot contact `vid` (none, one or several). */
export async function lineIdsOfVid(sql: Sql, hubId: string, vid: string): Promise<string[]> {
  const rows = await sql.all<{ line_id: string }>(
    'SELECT line_id FROM contacts WHERE hub_id = ? AND vid = ? ORDER BY id',
    [hubId, vid],
  );
  return rows.map((row) => row.line_id);
}

/**
 * Erases a contact of a hub (CONTRACT §13), in the caller's transaction with the hub's feed lock:
 * its messages (their search entries go with them), its content (released when no other message
 * of the hub holds the same bytes: the content worker deletes them), its earlier changes, its row
 * (vid, name), its sends; the erased messages' ids are never given again. Then one `contact.erased`. Resolves
 * the number of messages erased, or undefined when the hub has no such contact.
 */
export async function eraseContact(
  tx: Transaction,
  clock: FeedClock,
  hubId: string,
  lineId: string,
  now: number,
): Promise<number | undefined> {
  const contact = await tx.get<{ id: number }>('SELECT id FROM contacts WHERE hub_id = ? AND line_id = ?', [
    hubId,
    lineId,
  ]);
  if (!contact) return undefined;
  const kept = await tx.all<{ sha256: string | null }>(
    `DELETE FROM content_items WHERE hub_id = ?
       AND message_id IN (SELECT public_id FROM messages WHERE contact_id = ?) RETURNING sha256`,
    [hubId, contact.id],
  );
  await releaseBlobs(
    tx,
    hubId,
    kept.map((row) => row.sha256),
    now,
  );
  await tx.run(
    `INSERT INTO retired_message_ids (hub_id, public_id)
     SELECT hub_id, public_id FROM messages WHERE contact_id = ? ON CONFLICT DO NOTHING`,
    [contact.id],
  );
  const erased = await tx.run('DELETE FROM messages WHERE contact_id = ?', [contact.id]);
  await tx.run('DELETE FROM changes WHERE hub_id = ? AND contact_id = ?', [hubId, contact.id]);
  await tx.run('DELETE FROM contacts WHERE id = ?', [contact.id]);
  // Its sends (CONTRACT §16) hold what was said to it: gone too, and those not yet sent never go.
  await tx.run('DELETE FROM sends WHERE hub_id = ? AND line_id = ?', [hubId, lineId]);
  await logChange(tx, clock, hubId, now, { type: 'contact.erased', lineId });
  return erased;
}

/** The contacts port (store.ts): a contact's links and names, and its erasure (CONTRACT §13). */
export function contactsPort(engine: Engine): ContactsPort {
  return engine.port(
    'contacts',
    {
      get: (hubId, lineId) => getContact(engine.reads, hubId, lineId),
      linkedTo: (hubId, vid) => lineIdsOfVid(engine.reads, hubId, vid),
      upsert: (hubId, lineId, changes, now) =>
        engine.writeChanges([hubId], async (tx, clock) => {
          const { id, created } = await contactIdOf(tx, hubId, lineId, now);
          if (await changeContact(tx, id, changes)) {
            await logChange(tx, clock, hubId, now, { type: 'contact.updated', contactId: id });
          }
          const contact = await getContact(tx, hubId, lineId);
          if (!contact) throw new Error(`contact ${lineId} vanished`);
          return { contact, created };
        }),
      erase: async (hubId, lineId, now) => {
        const erased = await engine.writeChanges([hubId], (tx, clock) =>
          engine.deletingMany(tx, () => eraseContact(tx, clock, hubId, lineId, now)),
        );
        if (erased !== undefined) await engine.afterErasure('erasure');
        return erased;
      },
    },
    ['upsert', 'erase'],
  );
}
