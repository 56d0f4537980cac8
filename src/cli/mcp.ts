/**
 * `chatlog mcp` (CONTRACT §15): the MCP server over stdio, for an assistant that starts it (Claude
 * Desktop, an IDE). The key comes from CHATLOG_API_KEY, of scope read; its hub is the only one any
 * tool reaches. stdout carries JSON-RPC and nothing else: logs and the one line of a refusal go to
 * stderr. It runs until stdin ends (the assistant closes it) or SIGINT/SIGTERM.
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { UserError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { packageVersion } from '../lib/package-root.js';
import { AuditRecorder } from '../modules/audit/audit.recorder.js';
import { createAuthorizeDeps } from '../modules/keys/keys.authorize.js';
import { RateLimiter } from '../modules/keys/keys.ratelimit.js';
import { createMcpServer } from '../modules/mcp/mcp.server.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

type StdioSdk = typeof import('@modelcontextprotocol/server/stdio');

export function registerMcpCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command('mcp')
    .description(
      "serve an assistant over MCP on stdin/stdout (CONTRACT §15): CHATLOG_API_KEY=<key of scope read> chatlog mcp; the key's hub is the only one it reads",
    )
    .action(async () => {
      const key = process.env.CHATLOG_API_KEY;
      if (!key) throw new UserError('CHATLOG_API_KEY is not set: give it a key of scope read (chl_...)');
      await withRuntime(globals(), async ({ config, store, keys, hubs }) => {
        const record = await keys.verify(key);
        if (!record) throw new UserError('CHATLOG_API_KEY is not a valid key (mistyped, unknown or revoked)');
        if (record.scope !== 'read') {
          throw new UserError(
            `CHATLOG_API_KEY is a key of scope ${record.scope}; the MCP server needs one of scope read`,
          );
        }
        const hub = await hubs.get(record.hubId);
        if (!hub) throw new UserError(`the key's hub ${record.hubId} no longer exists`);
        // Logs on stderr only: stdout is the protocol's.
        const log = createLogger(config.logLevel, process.stderr);
        const rateLimiter = new RateLimiter({ redisUrl: config.redisUrl, log });
        const authorize = createAuthorizeDeps({ keys, hubs, rateLimiter });
        const audit = new AuditRecorder({ store, log, clock: Date.now, keepDays: config.auditKeepDays });
        audit.start();
        const deps = {
          store,
          search: { store, authorize },
          changes: { store, authorize, keepDays: config.changesKeepDays },
          maxChars: config.mcpMaxChars,
          version: packageVersion(),
          clock: Date.now,
          audit: (entry: Parameters<AuditRecorder['record']>[0]) => audit.record(entry),
          onFailure: (tool: string, error: unknown) => log.error({ err: error, tool }, 'an MCP tool failed'),
        };
        const caller = {
          hub,
          keyId: record.id,
          authorization: `Bearer ${key}`,
          stillValid: async () => {
            const now = await keys.verify(key);
            return now !== undefined && now.scope === 'read' && now.hubId === hub.id;
          },
        };
        const { serveStdio } = createRequire(import.meta.url)(
          '@modelcontextprotocol/server/stdio',
        ) as StdioSdk;
        const served = serveStdio(() => createMcpServer(deps, caller, 'stdio'), {
          onerror: (error) => log.warn({ err: error }, 'MCP over stdio: a message could not be served'),
        });
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          await Promise.race([once(process.stdin, 'end'), once(stop.signal, 'abort')]);
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          await served.close();
          await audit.stop();
          await rateLimiter.close();
        }
      });
    });
}
