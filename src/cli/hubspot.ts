/**
 * `chatlog hubspot …` (CONTRACT §18):
 *
 * - `channel register` registers chatlog's custom channel with HubSpot once (its webhook at
 *   CHATLOG_PUBLIC_URL + /webhooks/hubspot/channel) and keeps its id; run again, it updates that
 *   channel (a new public URL) instead of making another.
 * - `backfill <hubId> [--from D]` publishes a connected hub's messages stored before it connected
 *   (created from day D of the hub's zone; all without it), with progress: from this process, or
 *   from a server on the same store, whichever holds the hub's lease.
 */
import type { Command } from 'commander';
import pino from 'pino';
import { parseCalendarDay, startOfDayInZone } from '../lib/calendar.js';
import { UserError } from '../lib/errors.js';
import { registerChannel } from '../modules/hubspot/hubspot.api.js';
import { HubspotPublisher } from '../modules/hubspot/hubspot.publisher.js';
import { createProgress } from './progress.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

export function registerHubspotCommands(program: Command, globals: () => GlobalOptions): void {
  const hubspot = program
    .command('hubspot')
    .description("HubSpot's inbox: chatlog's custom channel (CONTRACT §18)");
  const channel = hubspot.command('channel').description("chatlog's custom channel in HubSpot");
  channel
    .command('register')
    .description(
      'register chatlog as a custom channel of your HubSpot app (CHATLOG_HUBSPOT_APP_ID, CHATLOG_HUBSPOT_DEVELOPER_API_KEY), its webhook at CHATLOG_PUBLIC_URL/webhooks/hubspot/channel; run again, it updates the same channel',
    )
    .action(async () => {
      await withRuntime(globals(), async ({ config, store }) => {
        const { hubspotAppId: appId, hubspotDeveloperApiKey: apiKey, publicUrl } = config;
        const missing = [
          ...(appId ? [] : ['CHATLOG_HUBSPOT_APP_ID']),
          ...(apiKey ? [] : ['CHATLOG_HUBSPOT_DEVELOPER_API_KEY']),
          ...(publicUrl ? [] : ["CHATLOG_PUBLIC_URL (where HubSpot sends agents' replies)"]),
        ];
        if (!appId || !apiKey || !publicUrl) throw new UserError(`set ${missing.join(', ')} first`);
        const existing = await store.hubspot.channelId();
        const webhookUrl = `${publicUrl}/webhooks/hubspot/channel`;
        const answer = await registerChannel(
          config.hubspotApiBaseUrl,
          { apiKey, appId },
          webhookUrl,
          existing,
        );
        // HubSpot's words only: the developer key is in the request's query, never in what is printed.
        if (answer.kind !== 'ok')
          throw new UserError(`HubSpot did not register the channel: ${answer.reason}`);
        await store.hubspot.setChannelId(answer.value.id);
        process.stdout.write(
          `${JSON.stringify({ channelId: answer.value.id, webhookUrl, updated: existing !== undefined })}\n`,
        );
        process.stderr.write(
          `chatlog: ${existing === undefined ? 'registered' : 'updated'} custom channel ${answer.value.id}; hubs can now be connected on the account screen (HubSpot inbox)\n`,
        );
      });
    });

  hubspot
    .command('backfill <hubId>')
    .description(
      "publish the hub's messages stored before it was connected to its HubSpot inbox, created from --from (a day of the hub's zone) on, with progress; days an earlier backfill covered are not sent again",
    )
    .option('--from <day>', "the first day (YYYY-MM-DD, in the hub's zone); without it, every message")
    .action(async (hubId: string, options: { from?: string }) => {
      await withRuntime(globals(), async ({ config, store, secrets, hubs }) => {
        const hub = await hubs.require(hubId);
        let from = 0;
        if (options.from !== undefined) {
          const day = parseCalendarDay(options.from);
          if (!day)
            throw new UserError(`--from must be a day as YYYY-MM-DD, got "${options.from.slice(0, 40)}"`);
          from = startOfDayInZone(day, hub.timeZone);
        }
        if (!config.hubspotClientId || !config.hubspotClientSecret)
          throw new UserError('set CHATLOG_HUBSPOT_CLIENT_ID and CHATLOG_HUBSPOT_CLIENT_SECRET first');
        const started = await store.hubspot.startBackfill(hub.id, from);
        if (!started?.backfill)
          throw new UserError(
            `hub ${hub.id} is not connected to a HubSpot inbox: Connect HubSpot on the account screen first`,
          );
        const publisher = new HubspotPublisher({
          store,
          secrets,
          log: pino({ level: 'silent' }),
          apiBaseUrl: config.hubspotApiBaseUrl,
          client: { clientId: config.hubspotClientId, clientSecret: config.hubspotClientSecret },
          sweepMs: 200,
        });
        const progress = createProgress(`hub ${hub.id} to HubSpot`);
        progress.start(started.backfill.total, 'records', 'publishing');
        publisher.start();
        let now = started;
        try {
          for (;;) {
            const backfill = now.backfill;
            if (!backfill) break;
            progress.update(backfill.published);
            if (backfill.done) break;
            // Paused after an error (429, HubSpot unreachable): said, and left to go on later.
            if (now.attempts > 0 && now.lastError) {
              progress.stop();
              process.stderr.write(
                `chatlog: HubSpot publishing is paused (${now.lastError}); the rest goes on in chatlog serve, or run this again\n`,
              );
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 250));
            now = (await store.hubspot.get(hub.id)) ?? now;
          }
        } finally {
          progress.stop();
          await publisher.stop();
        }
        const backfill = (await store.hubspot.get(hub.id))?.backfill;
        process.stdout.write(
          `${JSON.stringify({ hubId: hub.id, from: options.from === undefined ? null : new Date(backfill?.from ?? from).toISOString(), published: backfill?.published ?? 0, total: backfill?.total ?? 0, done: backfill?.done ?? false })}\n`,
        );
      });
    });
}
