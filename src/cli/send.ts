/**
 * `chatlog send <hubId> <lineId> <text>` (CONTRACT §16): a reply to a LINE friend, accepted into the
 * store's send queue as the API accepts it, then pushed from this process (or by a server that runs
 * on the same store, whichever leases it first) and waited for.
 */
import type { Command } from 'commander';
import pino from 'pino';
import { UserError } from '../lib/errors.js';
import { SendService } from '../modules/sends/sends.usecases.js';
import { SendWorker } from '../modules/sends/sends.worker.js';
import { type GlobalOptions, positiveInteger, withRuntime } from './runtime.js';

export function registerSendCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command('send <hubId> <lineId> <text>')
    .description(
      "send a text message to a LINE friend of the hub with LINE's push API (the hub's channel access token), keep it as a message from You, and print the send; waits up to --wait seconds for LINE",
    )
    .option(
      '--idempotency-key <key>',
      'the same key within 24 hours sends nothing again (prints the first send)',
    )
    .option(
      '--wait <seconds>',
      'how long to wait for LINE before printing the send as pending',
      positiveInteger,
      30,
    )
    .action(
      async (
        hubId: string,
        lineId: string,
        text: string,
        options: { idempotencyKey?: string; wait: number },
      ) => {
        await withRuntime(globals(), async (runtime) => {
          const hub = await runtime.hubs.require(hubId);
          const sends = new SendService({ store: runtime.store, clock: Date.now });
          const { send } = await sends.accept(hub, lineId, {
            messages: [{ type: 'text', text }],
            ...(options.idempotencyKey !== undefined && { idempotencyKey: options.idempotencyKey }),
          });
          const worker = new SendWorker({
            store: runtime.store,
            secrets: runtime.secrets,
            log: pino({ level: 'silent' }),
            lineApiBaseUrl: runtime.config.lineApiBaseUrl,
            sweepMs: 200,
          });
          worker.start();
          let now = send;
          try {
            const deadline = Date.now() + options.wait * 1000;
            while (now.status === 'pending' && Date.now() < deadline) {
              await new Promise((resolve) => setTimeout(resolve, 100));
              now = await sends.status(hubId, send.id);
            }
          } finally {
            await worker.stop();
          }
          process.stdout.write(`${JSON.stringify({ send: now })}\n`);
          if (now.status === 'failed')
            throw new UserError(`the send failed: ${now.error ?? 'LINE refused it'}`);
          if (now.status === 'pending') {
            process.stderr.write(
              `chatlog: LINE has not taken it yet (${now.error ?? 'not tried yet'}); it stays queued and goes when chatlog serve runs on this store\n`,
            );
          }
        });
      },
    );
}
