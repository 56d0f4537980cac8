/**
 * `chatlog contact erase` and `chatlog contact export` (CONTRACT §13): a person's data gone from
 * the hub, or handed to them as a ZIP, on their request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { UserError } from '../lib/errors.js';
import { eraseContact, erasureWritten } from '../modules/contacts/contacts.erasure.js';
import { personalDataZip } from '../modules/contacts/contacts.export.js';
import { openContentStore } from '../store/content/open.js';
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
        const erasure = { store: runtime.store, clock: Date.now };
        const erased = await eraseContact(erasure, hubId, lineId);
        if (erased === undefined) {
          throw new UserError(`hub ${hubId} has no contact ${lineId} (nothing erased)`);
        }
        process.stderr.write(
          `chatlog: contact ${lineId} of hub ${hubId} erased with ${erased} ${erased === 1 ? 'message' : 'messages'}; removing them from the search index's files…\n`,
        );
        await erasureWritten(erasure);
        process.stdout.write(`${JSON.stringify({ erased: { messages: erased } })}\n`);
      });
    });

  contact
    .command('export <hubId> <lineId>')
    .description(
      "a person's data as a ZIP: messages.json (the contact as the read API renders it, no range, each message with its id) and content/<messageId> for each media item kept",
    )
    .requiredOption('--out <file>', 'the ZIP file to write (not overwritten: give a new name)')
    .action(async (hubId: string, lineId: string, options: { out: string }) => {
      if (!LINE_ID.test(lineId)) throw new UserError(`"${lineId.slice(0, 100)}" is not a LINE id`);
      const out = path.resolve(options.out);
      if (fs.existsSync(out)) throw new UserError(`${options.out} exists: give a new file name`);
      await withRuntime(globals(), async (runtime) => {
        await runtime.hubs.require(hubId);
        const blobs = await openContentStore(runtime.config);
        try {
          const made = await personalDataZip({ store: runtime.store, blobs }, hubId, lineId);
          if (!made) throw new UserError(`hub ${hubId} has no contact ${lineId} (nothing exported)`);
          // Written beside the target and renamed when whole: a cut export never looks finished.
          const partial = `${out}.partial`;
          try {
            await pipeline(made.zip, fs.createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
            fs.renameSync(partial, out);
          } catch (error) {
            fs.rmSync(partial, { force: true });
            throw error;
          }
          process.stderr.write(
            `chatlog: the data of contact ${lineId} of hub ${hubId} written to ${options.out} (${fs.statSync(out).size.toLocaleString('en-US')} bytes)\n`,
          );
        } finally {
          await blobs.close();
        }
      });
    });
}
