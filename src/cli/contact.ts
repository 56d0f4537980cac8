/**
 * `chatlog contact erase` (CONTRACT §13): a person's data gone from the hub, on their request.
 */
import type { Command } from 'commander';
import { UserError } from '../lib/errors.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

/** LINE user ids and the ids of messages ingested without one: what the store keys a contact by. */
const LINE_ID = /^[\x21-\x7e]{1,100}$/;

export function registerContactCommands(program: Command, globals: () => GlobalOptions): void {
  const contact = program.command('contact').description("a hub's LINE friends (contacts) and their data");

  contact
    .command('erase <hubId> <lineId>')
    .description(
      'erase the contact and everything of it: messages, media, search entries, vid and name, its changes in the feed (one contact.erased takes their place); messages that come from that LINE user later are stored as new',
    )
    .action(async (hubId: string, lineId: string) => {
      if (!LINE_ID.test(lineId)) throw new UserError(`"${lineId.slice(0, 100)}" is not a LINE id`);
      await withRuntime(globals(), async (runtime) => {
        await runtime.hubs.require(hubId);
        const erased = await runtime.store.contacts.erase(hubId, lineId, Date.now());
        if (erased === undefined) {
          throw new UserError(`hub ${hubId} has no contact ${lineId} (nothing erased)`);
        }
        process.stderr.write(
          `chatlog: contact ${lineId} of hub ${hubId} erased with ${erased} ${erased === 1 ? 'message' : 'messages'}\n`,
        );
        process.stdout.write(`${JSON.stringify({ erased: { messages: erased } })}\n`);
      });
    });
}
