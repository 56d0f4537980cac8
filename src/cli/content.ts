/**
 * `chatlog content status|retry` (CONTRACT §11): how a hub's media downloads stand, and failed ones
 * tried again. This process downloads nothing itself: a running server's worker does, within
 * seconds.
 */
import type { Command } from 'commander';
import type { ContentStatus } from '../store/store.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

function statusLine(hubId: string, status: ContentStatus, token: boolean): string {
  return [
    `hub ${hubId}: ${status.done} kept (${status.bytes} bytes), ${status.pending} pending, ${status.failed} failed, ${status.gone} gone from LINE`,
    token
      ? undefined
      : 'the hub has no LINE channel access token: nothing is downloaded until one is set (hub add <hubId> --line-channel-access-token ...)',
  ]
    .filter((line) => line !== undefined)
    .join('\n');
}

export function registerContentCommands(program: Command, globals: () => GlobalOptions): void {
  const content = program
    .command('content')
    .description("a hub's media kept from LINE (a running server downloads them)");

  content
    .command('status <hubId>')
    .description(
      "how the hub's media downloads stand: kept (and their bytes), pending, failed (every attempt used), gone (LINE no longer had them)",
    )
    .option('--json', 'print a JSON object {hubId, done, pending, failed, gone, bytes, accessToken} instead')
    .action(async (hubId: string, options: { json?: boolean }) => {
      await withRuntime(globals(), async (runtime) => {
        const hub = await runtime.hubs.require(hubId);
        const status = await runtime.store.content.status(hubId);
        const token = hub.lineChannelAccessTokenEncrypted !== null;
        if (options.json) {
          process.stdout.write(`${JSON.stringify({ hubId, ...status, accessToken: token }, null, 2)}\n`);
        } else process.stdout.write(`${statusLine(hubId, status, token)}\n`);
      });
    });

  content
    .command('retry <hubId>')
    .description("try the hub's failed media downloads again (a running server starts within seconds)")
    .action(async (hubId: string) => {
      await withRuntime(globals(), async (runtime) => {
        await runtime.hubs.require(hubId);
        const count = await runtime.store.content.retry(hubId, Date.now());
        process.stderr.write(
          `chatlog: ${count} failed ${count === 1 ? 'download' : 'downloads'} of hub ${hubId} queued again\n`,
        );
      });
    });
}
