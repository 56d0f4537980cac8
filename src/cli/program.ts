/**
 * The `chatlog` command line (CONTRACT §7). Exit 0 on success; 1 with one clear line on stderr
 * for a user error, starting `chatlog: error: ` like commander's own; never a stack trace unless
 * --debug is given.
 *
 * What only one command needs (import, backup, the password prompt, the demo, the server) is
 * imported by that command, so that `serve` starts without loading the others.
 */

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { loadConfig, publicBaseUrl, settingOption, settingsHelp } from '../config.js';
import { formatTimestamp } from '../lib/calendar.js';
import { describeStartFailure, isClientError, UserError } from '../lib/errors.js';
import { packageRoot } from '../lib/package-root.js';
import { requireHubId } from '../modules/hubs/hubs.usecases.js';
import { KEY_PREFIX, maskedKey } from '../modules/keys/keys.format.js';
import { KEY_SCOPES, type KeySummary, summarizeKey } from '../modules/keys/keys.usecases.js';
import { answersEncodedHere, exportDays, exportRange } from '../modules/messages/messages.usecases.js';
import type { KeyScope } from '../store/store.js';
import { registerAuditCommands } from './audit.js';
import { registerContactCommands } from './contact.js';
import { registerContentCommands } from './content.js';
import { type GlobalOptions, type Runtime, withRuntime } from './runtime.js';
import { registerWebhookCommands } from './webhook.js';

/** How every error line of the command line starts (commander's own `error: ...` lines too). */
export const ERROR_PREFIX = 'chatlog: error: ';

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000_000) {
    throw new InvalidArgumentError('must be a whole number of 1 or more');
  }
  return Number(value);
}

function packageVersion(): string {
  const text = readFileSync(path.join(packageRoot(), 'package.json'), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

function optionalTime(ms: number | null): string {
  return ms === null ? '-' : formatTimestamp(ms);
}

function keyLine(key: KeySummary): string {
  return [
    key.id,
    maskedKey(key.keyStart),
    key.scope,
    key.label === '' ? '-' : key.label,
    formatTimestamp(key.createdAt),
    optionalTime(key.lastUsedAt),
    optionalTime(key.revokedAt),
  ].join('\t');
}

/**
 * The key a command names: by its id (`key_...`), or by the key itself, which people paste as
 * often. Never printed back: a key is named by its id and first characters only.
 */
async function findKey(runtime: Runtime, given: string): Promise<KeySummary> {
  if (given.startsWith(KEY_PREFIX)) {
    const record = await runtime.keys.findByKey(given);
    if (!record) {
      throw new UserError(
        `that ${KEY_PREFIX}... key is not one of this store's keys (mistyped, or issued elsewhere); pass the key's id (key_..., the first column of ./bin/chatlog key list <hubId>)`,
      );
    }
    return summarizeKey(record);
  }
  if (!/^key_[0-9A-Za-z]{1,64}$/.test(given)) {
    // Not echoed: it may be a secret pasted into the wrong place.
    throw new UserError(
      "pass the key's id (key_..., the first column of ./bin/chatlog key list <hubId>) or the key itself (chl_...)",
    );
  }
  const record = await runtime.store.keys.findById(given);
  if (!record) {
    throw new UserError(`no key has the id ${given}; ./bin/chatlog key list <hubId> lists a hub's keys`);
  }
  return summarizeKey(record);
}

export function buildProgram(): Command {
  const program = new Command('chatlog')
    .description(
      'Keeps the LINE chat messages of HubSpot portals and serves them through one read-only JSON API.',
    )
    .option(...settingOption('dataDir'))
    .option('--debug', 'print stack traces of errors')
    .version(packageVersion(), '-V, --version', 'print the version of chatlog')
    // Commander's own errors start "error: "; ours start the same way, after the program's name.
    .configureOutput({ outputError: (text, write) => write(`chatlog: ${text}`) });
  const globals = () => program.opts<GlobalOptions>();

  program
    .command('serve')
    .description('run the HTTP server until SIGINT/SIGTERM, then drain in-flight requests')
    .option(...settingOption('port'))
    .option(...settingOption('host'))
    .option(
      '--workers <n>',
      'PostgreSQL: server processes sharing the port; embedded store: threads reading answers, in one process (default: one per core)',
      positiveInteger,
      availableParallelism(),
    )
    .addHelpText('after', settingsHelp())
    .action(async (options: { port?: string; host?: string; workers: number }) => {
      const config = loadConfig(process.env, {
        port: options.port,
        host: options.host,
        dataDir: globals().dataDir,
      });
      // With several processes, bring the schema up to date once before they start; a single
      // process does it itself when it opens the store.
      if (options.workers > 1 && config.databaseUrl) await withRuntime(globals(), async () => undefined);
      // Loaded here: the HTTP server is not needed by the other commands.
      const { serve } = await import('../server.js');
      await serve(config, options.workers);
    });

  program
    .command('migrate')
    .description("bring the store's schema up to date (serve and every command also do)")
    .action(async () => {
      await withRuntime(globals(), async () => {
        process.stderr.write('chatlog: schema is up to date\n');
      });
    });

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

  const account = program.command('account').description('logins to the account screen (/account)');
  account
    .command('add <email>')
    .description('create a login (or set a new password) and give it hubs; the password is asked for')
    .requiredOption('--hub <hubId...>', 'a hub the account may see (repeat for more)')
    .option('--password-stdin', 'read the password from stdin instead of asking')
    .action(async (email: string, options: { hub: string[]; passwordStdin?: boolean }) => {
      const { askNewPassword, readAllStdin } = await import('./password.js');
      const password = options.passwordStdin ? await readAllStdin() : await askNewPassword();
      await withRuntime(globals(), async ({ accounts }) => {
        const { created } = await accounts.add(email, options.hub, password);
        process.stderr.write(
          `chatlog: account ${email.trim().toLowerCase()} ${created ? 'created' : 'updated'} (hubs ${options.hub.join(', ')}); sign in at /account\n`,
        );
      });
    });

  const key = program.command('key').description('API keys');
  key
    .command('issue <hubId>')
    .description('issue a new key and print it alone on stdout')
    .addOption(new Option('--scope <scope>', 'what the key may do').choices(KEY_SCOPES).default('read'))
    .option('--label <label>', 'a name to recognise the key by', '')
    .action(async (hubId: string, options: { scope: KeyScope; label: string }) => {
      await withRuntime(globals(), async ({ hubs, keys }) => {
        const { created } = await hubs.ensure(hubId);
        if (created) process.stderr.write(`chatlog: hub ${hubId} created (time zone UTC)\n`);
        const issued = await keys.issue(hubId, options.scope, options.label);
        process.stdout.write(`${issued.key}\n`);
        process.stderr.write(
          `chatlog: issued ${issued.summary.scope} key ${issued.summary.id} for hub ${hubId}\n`,
        );
      });
    });
  key
    .command('list <hubId>')
    .description(
      "one line per key, newest first: id, the key's first characters, scope, label, created, last used, revoked (never the key)",
    )
    .option('--json', 'print a JSON array instead')
    .action(async (hubId: string, options: { json?: boolean }) => {
      await withRuntime(globals(), async ({ hubs, keys }) => {
        await hubs.require(hubId);
        const list = await keys.list(hubId);
        if (options.json) {
          const rows = list.map((k) => ({
            id: k.id,
            keyStart: k.keyStart,
            scope: k.scope,
            label: k.label,
            createdAt: formatTimestamp(k.createdAt),
            lastUsedAt: k.lastUsedAt === null ? null : formatTimestamp(k.lastUsedAt),
            revokedAt: k.revokedAt === null ? null : formatTimestamp(k.revokedAt),
          }));
          process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        } else {
          for (const k of list) process.stdout.write(`${keyLine(k)}\n`);
        }
      });
    });
  key
    .command('revoke <keyId>')
    .description('revoke a key (by its id, key_..., or the key itself); it stops working at the next request')
    .action(async (given: string) => {
      await withRuntime(globals(), async (runtime) => {
        const key = await findKey(runtime, given);
        await runtime.keys.revoke(key.id);
        process.stderr.write(`chatlog: key ${key.id} (${maskedKey(key.keyStart)}) revoked\n`);
      });
    });
  key
    .command('limit <keyId>')
    .description("set or clear a key's rate limit")
    .option('--requests <n>', 'requests allowed per window', positiveInteger)
    .option('--per-seconds <w>', 'window length in seconds', positiveInteger)
    .option('--none', 'remove the limit')
    .action(async (keyId: string, options: { requests?: number; perSeconds?: number; none?: boolean }) => {
      const setting = options.requests !== undefined || options.perSeconds !== undefined;
      if (Boolean(options.none) === setting) {
        throw new UserError('give either --requests N --per-seconds W, or --none');
      }
      if (setting && (options.requests === undefined || options.perSeconds === undefined)) {
        throw new UserError('--requests and --per-seconds go together');
      }
      await withRuntime(globals(), async (runtime) => {
        const limit =
          options.requests !== undefined && options.perSeconds !== undefined
            ? { requests: options.requests, perSeconds: options.perSeconds }
            : null;
        keyId = (await findKey(runtime, keyId)).id;
        await runtime.keys.setRateLimit(keyId, limit);
        process.stderr.write(
          limit
            ? `chatlog: key ${keyId} limited to ${limit.requests} requests per ${limit.perSeconds} s\n`
            : `chatlog: key ${keyId} has no rate limit\n`,
        );
      });
    });

  registerWebhookCommands(program, globals);
  registerAuditCommands(program, globals);
  registerContentCommands(program, globals);
  registerContactCommands(program, globals);

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

  program
    .command('backup <file>')
    .description('write a consistent copy of the SQLite store while chatlog runs (PostgreSQL: pg_dump)')
    .action(async (file: string) => {
      await withRuntime(globals(), async ({ store }) => {
        const { backupTo } = await import('./backup.js');
        const bytes = await backupTo(file, store);
        process.stderr.write(
          `chatlog: backup of ${(bytes / 1024 / 1024).toFixed(1)} MiB written to ${file}; keep the server secret (CHATLOG_SECRET or data/secret) with it\n`,
        );
      });
    });

  program
    .command('demo')
    .description(
      'fill a demo hub with realistic messages, make a login and a key for it, and print how to look around',
    )
    .option('--serve', 'then run the server, and print once it listens (npm run demo)')
    .option(...settingOption('port'))
    .option(...settingOption('host'))
    .action(async (options: { serve?: boolean; port?: string; host?: string }) => {
      const overrides = { port: options.port, host: options.host };
      const config = loadConfig(process.env, { ...overrides, dataDir: globals().dataDir });
      // A demo login with a printed password belongs in a data directory of its own, never in a
      // shared (production) database.
      if (config.databaseUrl) {
        throw new UserError(
          'the demo fills the embedded SQLite store only (a data directory of its own); unset DATABASE_URL',
        );
      }
      // Loaded here: the demo's conversations are not needed by the other commands.
      const { demoText, prepareDemo } = await import('./demo.js');
      if (!options.serve) {
        const setup = await withRuntime(globals(), prepareDemo, overrides);
        process.stdout.write(demoText(setup, publicBaseUrl(config), false));
        return;
      }
      const { startServer } = await import('../server.js');
      // The server listens before the demo changes anything: a port in use ends the run with the
      // last demo's password still the one that works (a new one would be lost with the run).
      // Quiet unless asked (LOG_LEVEL): the demo's own lines are what a newcomer should see.
      const server = await startServer(process.env.LOG_LEVEL ? config : { ...config, logLevel: 'warn' });
      const setup = await withRuntime(globals(), prepareDemo, overrides).catch(async (error: unknown) => {
        await server.close();
        throw error;
      });
      process.stderr.write(`chatlog: listening on ${server.url}\n`);
      // The port actually bound (--port 0 picks one), unless clients reach chatlog elsewhere.
      process.stdout.write(demoText(setup, publicBaseUrl({ ...config, port: server.port }), true));
      await new Promise((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      // As serve does: nothing else is left to finish once the server has drained.
      process.exit(0);
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    const debug = argv.includes('--debug');
    if (error instanceof CommanderError) {
      // Commander already printed its message (help, version, or a usage error).
      return error.exitCode === 0 ? 0 : 1;
    }
    // A 4xx AppError is the same mistake the API would refuse; its message says what to do.
    if (error instanceof UserError || isClientError(error)) {
      process.stderr.write(`${ERROR_PREFIX}${error.message}\n`);
    } else {
      process.stderr.write(`${ERROR_PREFIX}${describeStartFailure(error)}\n`);
    }
    if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}
