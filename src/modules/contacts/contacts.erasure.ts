/**
 * Erasing a LINE friend of a hub (CONTRACT §13), the one operation behind every way to ask for it:
 * `DELETE /api/line/:hubId/contacts/:lineId` (contacts.routes.ts), HubSpot's privacy deletion
 * (hubspot.routes.ts), **Erase contact** on the account screen (account.conversations.ts) and
 * `chatlog contact erase` (cli/contact.ts).
 *
 * One transaction (store/sql/contacts.ts eraseContact) deletes the contact, its messages, their
 * media rows, search entries and changes, and appends one `contact.erased` in their place. The rest
 * follows from that commit, on every node and surviving a restart: the media files are deleted by
 * the content worker (content releases, content.worker.ts); cached answers go when the hub's history
 * version moves (messages.cache.ts watchHistory); SQLite overwrites the freed pages and checkpoints
 * its WAL (the store's afterErasure). The search index's files are rewritten by its compactor; a
 * caller about to exit waits for it (`compacted`).
 */
import type { Store } from '../../store/store.js';

export interface ErasureDeps {
  store: Pick<Store, 'contacts' | 'search'>;
  clock: () => number;
}

/** Erases the contact: the messages erased, or undefined when the hub has no such contact. */
export function eraseContact(deps: ErasureDeps, hubId: string, lineId: string): Promise<number | undefined> {
  return deps.store.contacts.erase(hubId, lineId, deps.clock());
}

/**
 * Erases every contact of the hub linked to HubSpot contact `vid` (a privacy deletion in HubSpot):
 * the contacts and messages erased.
 */
export async function eraseLinkedContacts(
  deps: ErasureDeps,
  hubId: string,
  vid: string,
  onErased?: (lineId: string, messages: number) => void,
): Promise<{ contacts: number; messages: number }> {
  let contacts = 0;
  let messages = 0;
  for (const lineId of await deps.store.contacts.linkedTo(hubId, vid)) {
    const erased = await eraseContact(deps, hubId, lineId);
    if (erased === undefined) continue;
    contacts += 1;
    messages += erased;
    onErased?.(lineId, erased);
  }
  return { contacts, messages };
}

/** Waits until the search index's files hold nothing erased (a command that exits next). */
export function erasureWritten(deps: ErasureDeps): Promise<void> {
  return deps.store.search.compacted();
}
