/**
 * The `chatlog` command line (CONTRACT §7). Exit 0 on success; 1 with one clear line on stderr
 * for a user error, starting `chatlog: error: ` like commander's own; never a stack trace unless
 * --debug is given.
 *
 * What only one command needs (import, backup, the password prompt, the demo, the server) is
 * imported by that command, so that `serve` starts without loading the others.
 */

import { availableParallelism } from 'node:os';
import { Command, CommanderError } from 'commander';
import { loadConfig, publicBaseUrl, settingOption, settingsHelp } from '../config.js';
import { describeStartFailure, isClientError, UserError } from '../lib/errors.js';
import { packageVersion } from '../lib/package-root.js';
import { registerAccountCommands } from './account.js';
import { registerAuditCommands } from './audit.js';
import { registerContactCommands } from './contact.js';
import { registerContentCommands } from './content.js';
import { registerHubCommands } from './hub.js';
import { registerHubspotCommands } from './hubspot.js';
import { registerKeyCommands } from './key.js';
import { registerMcpCommand } from './mcp.js';
import { registerMessageCommands } from './messages.js';
import { registerReportCommand } from './report.js';
import { type GlobalOptions, positiveInteger, withRuntime } from './runtime.js';
import { registerSendCommand } from './send.js';
import { registerWebhookCommands } from './webhook.js';

/** How every error line of the command line starts (commander's own `error: ...` lines too). */
export const ERROR_PREFIX = 'chatlog: error: ';

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

  registerHubCommands(program, globals);
  registerAccountCommands(program, globals);
  registerKeyCommands(program, globals);
  registerWebhookCommands(program, globals);
  registerAuditCommands(program, globals);
  registerContentCommands(program, globals);
  registerContactCommands(program, globals);
  registerSendCommand(program, globals);
  registerReportCommand(program, globals);
  registerHubspotCommands(program, globals);
  registerMcpCommand(program, globals);

  registerMessageCommands(program, globals);

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
