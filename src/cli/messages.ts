/** `chatlog import` and `chatlog export`: a hub's messages from a file, and its answer to stdout. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { requireHubId } from '../modules/hubs/hubs.usecases.js';
import { answersEncodedHere, exportDays, exportRange } from '../modules/messages/messages.usecases.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

export function registerMessageCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('import <hubId> <file>')
    .description('import a JSON array in the answer shape, or NDJSON with one message per line')
    .action(async (hubId: string, file: string) => {
      await withRuntime(globals(), async ({ hubs, store }) => {
        requireHubId(hubId);
        // Loaded here: only this command draws a progress bar.
        const { createProgress } = await import('./progress.js');
        const { importFile } = await import('../modules/ingest/import.usecases.js');
        const outcome = await importFile(store, hubId, file, createProgress('import'), {
          // Only once every record has passed its checks.
          beforeWrite: async () => {
            const { created } = await hubs.ensure(hubId);
            if (created) process.stderr.write(`chatlog: hub ${hubId} created (time zone UTC)\n`);
          },
        });
        process.stderr.write(
          `chatlog: imported ${outcome.inserted} new messages (${outcome.duplicates} already stored, ${outcome.contactsCreated} new contacts) into hub ${hubId}\n`,
        );
      });
    });

  program
    .command('export <hubId>')
    .description('write exactly what the API would answer to stdout')
    .option('--from <date>', 'first day, YYYY-MM-DD')
    .option('--to <date>', 'last day, YYYY-MM-DD')
    .option('--tz <zone>', "read the days in this IANA time zone instead of the hub's")
    .action(async (hubId: string, options: { from?: string; to?: string; tz?: string }) => {
      // The same use case as the read API (modules/messages/messages.usecases.ts).
      const days = exportDays(options);
      await withRuntime(globals(), async ({ hubs, store }) => {
        const range = await exportRange(hubs, { hubId, ...days, tz: options.tz });
        try {
          // The read API's own source: on PostgreSQL the JSON written from a COPY's bytes.
          await pipeline(Readable.from(answersEncodedHere(store).json(range)), process.stdout);
        } catch (error) {
          // The reader went away (`chatlog export ... | head`): nothing more to write, not an error.
          if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
        }
      });
    });
}
