/**
 * `chatlog audit <hubId>` (CONTRACT §13): who read what. The hub's records newest first, one line
 * each (tab-separated) or `--json`; `--since D` (a day, UTC, or an instant), `--key ID`, `--limit N`.
 */
import type { Command } from 'commander';
import { formatTimestamp, parseCalendarDay, parseTimestamp, startOfDayInZone } from '../lib/calendar.js';
import { UserError } from '../lib/errors.js';
import { readableQuery } from '../lib/http.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

const MAX_LIMIT = 100_000;

/** `--since`: `YYYY-MM-DD` (the start of that day in UTC) or an RFC 3339 instant. */
function sinceOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const day = parseCalendarDay(text);
  if (day) return startOfDayInZone(day, 'UTC');
  const instant = parseTimestamp(text);
  if (instant === undefined)
    throw new UserError(`--since: "${text.slice(0, 40)}" is not a day (YYYY-MM-DD) or an instant (RFC 3339)`);
  return instant;
}

export function registerAuditCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('audit <hubId>')
    .description(
      "the hub's audit log, newest first: every authorised request to its API (time, key id, endpoint, query without apikey, status, messages, bytes, client address)",
    )
    .option('--since <day>', 'records from this day (YYYY-MM-DD, UTC) or instant (RFC 3339) on')
    .option('--key <id>', 'records of this key id only (key_…)')
    .option('--limit <n>', 'at most this many records', '1000')
    .option('--json', 'a JSON array of {at, keyId, endpoint, query, status, messages, bytes, client}')
    .action(
      async (hubId: string, options: { since?: string; key?: string; limit: string; json?: boolean }) => {
        const limit = /^\d{1,6}$/.test(options.limit) ? Number(options.limit) : 0;
        if (limit < 1 || limit > MAX_LIMIT)
          throw new UserError(`--limit: a whole number from 1 to ${MAX_LIMIT}`);
        const since = sinceOf(options.since);
        await withRuntime(globals(), async ({ hubs, store }) => {
          await hubs.require(hubId);
          const records = await store.audit.list({ hubId, since, keyId: options.key, limit });
          if (options.json) {
            process.stdout.write(
              `${JSON.stringify(
                records.map((r) => ({
                  at: formatTimestamp(r.at),
                  keyId: r.keyId,
                  endpoint: r.endpoint,
                  query: readableQuery(r.query),
                  status: r.status,
                  messages: r.messages,
                  bytes: r.bytes,
                  client: r.client,
                })),
              )}\n`,
            );
            return;
          }
          for (const r of records) {
            const cells = [
              formatTimestamp(r.at),
              r.keyId,
              r.endpoint,
              readableQuery(r.query) || '-',
              r.status,
              r.messages ?? '-',
              r.bytes ?? '-',
              r.client,
            ];
            process.stdout.write(`${cells.join('\t')}\n`);
          }
          if (records.length === 0)
            process.stderr.write(
              `chatlog: no audit record of hub ${hubId}${since === undefined ? '' : ' since then'}\n`,
            );
        });
      },
    );
}
