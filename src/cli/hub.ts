/** `chatlog hub add` and `chatlog hub purge`: a hub's settings, and its retention run now. */
import type { Command } from 'commander';
import { formatTimestamp } from '../lib/calendar.js';
import { UserError } from '../lib/errors.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

export function registerHubCommands(program: Command, globals: () => GlobalOptions): void {
  const hub = program.command('hub').description('hub settings');
  hub
    .command('add <hubId>')
    .description('create a hub, or update the settings given (the others keep their value)')
    .option('--time-zone <zone>', 'IANA time zone the days of from/to are read in (default UTC)')
    .option(
      '--line-channel-secret <secret>',
      "the LINE channel's secret, to verify its webhooks (- reads stdin)",
    )
    .option(
      '--line-channel-access-token <token>',
      "the LINE channel's access token, to look up display names and download media",
    )
    .option(
      '--retention-days <days>',
      "keep messages this many days (in the hub's time zone), removing older ones with their media at least hourly; 0 keeps everything (the default)",
    )
    .action(
      async (
        hubId: string,
        options: {
          timeZone?: string;
          lineChannelSecret?: string;
          lineChannelAccessToken?: string;
          retentionDays?: string;
        },
      ) => {
        // "-" reads the value from stdin, so it stays out of `ps` and the shell history.
        const fromStdin = Object.entries(options).filter(([, value]) => value === '-');
        if (fromStdin.length > 1) throw new UserError('only one setting can be read from stdin');
        if (fromStdin[0]) {
          const chunks: Buffer[] = [];
          for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
          (options as Record<string, string>)[fromStdin[0][0]] = Buffer.concat(chunks)
            .toString('utf8')
            .trim();
        }
        await withRuntime(globals(), async ({ hubs }) => {
          const { hub: saved, created } = await hubs.add(hubId, options);
          process.stderr.write(
            `chatlog: hub ${saved.id} ${created ? 'created' : 'updated'} (time zone ${saved.timeZone}, LINE channel secret ${
              saved.lineChannelSecretEncrypted ? 'set' : 'not set'
            }, access token ${saved.lineChannelAccessTokenEncrypted ? 'set' : 'not set'}, ${
              saved.retentionDays > 0 ? `messages kept ${saved.retentionDays} days` : 'every message kept'
            })\n`,
          );
        });
      },
    );

  hub
    .command('purge <hubId>')
    .description(
      "remove now the messages older than the hub's --retention-days (as the server does at least hourly), with their media; --dry-run says what would go",
    )
    .option('--dry-run', 'only say what would be removed')
    .action(async (hubId: string, options: { dryRun?: boolean }) => {
      const { previewPurge, purgeNow } = await import('../modules/retention/retention.usecases.js');
      await withRuntime(globals(), async ({ hubs, store }) => {
        const saved = await hubs.require(hubId);
        if (saved.retentionDays === 0) {
          throw new UserError(
            `hub ${hubId} keeps every message: set --retention-days first (chatlog hub add ${hubId} --retention-days N)`,
          );
        }
        const purge = { store, clock: Date.now };
        const { before, preview } = await previewPurge(purge, saved);
        const what = `${preview.messages.toLocaleString('en-US')} messages created before ${formatTimestamp(before)} (the start of the day ${saved.retentionDays} days ago in ${saved.timeZone}), ${preview.media.toLocaleString('en-US')} of them with media${
          preview.oldest === null
            ? ''
            : `; oldest ${formatTimestamp(preview.oldest)}, newest ${formatTimestamp(preview.newest ?? preview.oldest)}`
        }`;
        if (options.dryRun) {
          process.stderr.write(`chatlog: hub ${hubId} would lose ${what}\n`);
          // Every time in the one form of CONTRACT §3 (24 characters, UTC), none as epoch milliseconds.
          const time = (ms: number | null) => (ms === null ? null : formatTimestamp(ms));
          const { messages, media, oldest, newest } = preview;
          process.stdout.write(
            `${JSON.stringify({ hubId, before: formatTimestamp(before), messages, media, oldest: time(oldest), newest: time(newest), dryRun: true })}\n`,
          );
          return;
        }
        let reported = 0;
        const removed = await purgeNow(purge, hubId, before, (n) => {
          if (n - reported >= 50_000) {
            reported = n;
            process.stderr.write(
              `chatlog: ${n.toLocaleString('en-US')} of ${preview.messages.toLocaleString('en-US')} removed\n`,
            );
          }
        });
        process.stderr.write(`chatlog: hub ${hubId}: ${removed.toLocaleString('en-US')} messages removed\n`);
        if (removed > 0) {
          process.stderr.write("chatlog: removing them from the search index's files…\n");
          await store.search.compacted();
        }
        process.stdout.write(`${JSON.stringify({ hubId, before: formatTimestamp(before), removed })}\n`);
      });
    });
}
