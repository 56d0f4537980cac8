/** `chatlog key issue|list|revoke|limit`: a hub's API keys (CONTRACT §4, §7). */
import { type Command, Option } from 'commander';
import { formatTimestamp } from '../lib/calendar.js';
import { UserError } from '../lib/errors.js';
import { KEY_PREFIX, maskedKey } from '../modules/keys/keys.format.js';
import { KEY_SCOPES, type KeySummary, summarizeKey } from '../modules/keys/keys.usecases.js';
import type { KeyScope } from '../store/store.js';
import { type GlobalOptions, positiveInteger, type Runtime, withRuntime } from './runtime.js';

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

export function registerKeyCommands(program: Command, globals: () => GlobalOptions): void {
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
}
