/**
 * `chatlog webhook add|list|remove|replay|retry|deliveries` (CONTRACT §10): a hub's outgoing webhook
 * endpoints, through the same WebhookService as the admin API. This process sends nothing itself: a
 * running server's worker picks up new and replayed deliveries within a few seconds.
 *
 * Only `add` and `list` name a hub; the others name an endpoint by its id alone (`whe_...`, the
 * first column of `webhook list`), which belongs to one hub: nothing to mismatch.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { formatTimestamp } from '../lib/calendar.js';
import { UserError } from '../lib/errors.js';
import { type EndpointSummary, WebhookService } from '../modules/webhooks/webhooks.usecases.js';
import { CHANGE_TYPES, type ChangeType, type DeliveryRecord } from '../store/store.js';
import { type GlobalOptions, type Runtime, withRuntime } from './runtime.js';

const SECRET_PREFIX = 'whsec_';

function webhookService(runtime: Runtime): WebhookService {
  return new WebhookService({
    store: runtime.store,
    secrets: runtime.secrets,
    policy: { allowPrivate: runtime.config.webhookAllowPrivate },
    clock: Date.now,
  });
}

/** `--events a,b`: change types, each known, none twice. */
function parseEventList(value: string): ChangeType[] {
  const types = value.split(',').map((type) => type.trim());
  const unknown = types.find((type) => !CHANGE_TYPES.includes(type as ChangeType));
  if (unknown !== undefined) {
    throw new UserError(
      `--events: ${unknown === '' ? 'an empty type' : `"${unknown.slice(0, 40)}"`} is not a change type; give a comma-separated list of: ${CHANGE_TYPES.join(', ')}`,
    );
  }
  if (new Set(types).size !== types.length) throw new UserError('--events: a change type is given twice');
  return types as ChangeType[];
}

function limitOf(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1000) {
    throw new InvalidArgumentError('must be a whole number from 1 to 1000');
  }
  return Number(value);
}

/** An endpoint id as given; a pasted secret is refused without being echoed. */
function endpointId(given: string): string {
  if (given.startsWith(SECRET_PREFIX)) {
    throw new UserError(
      "that is an endpoint's signing secret, not its id; pass the id (whe_..., the first column of ./bin/chatlog webhook list <hubId>)",
    );
  }
  return given;
}

const optionalTime = (ms: number | null) => (ms === null ? null : formatTimestamp(ms));

function endpointJson(endpoint: EndpointSummary) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    createdAt: formatTimestamp(endpoint.createdAt),
    disabledAt: optionalTime(endpoint.disabledAt),
  };
}

function endpointLine(endpoint: EndpointSummary): string {
  return [
    endpoint.id,
    endpoint.url,
    endpoint.events.join(','),
    formatTimestamp(endpoint.createdAt),
    optionalTime(endpoint.disabledAt) ?? '-',
  ].join('\t');
}

function deliveryJson(delivery: DeliveryRecord) {
  return {
    seq: delivery.seq,
    type: delivery.type,
    state: delivery.state,
    attempts: delivery.attempts,
    lastStatus: delivery.lastStatus,
    lastError: delivery.lastError,
    createdAt: formatTimestamp(delivery.createdAt),
    updatedAt: formatTimestamp(delivery.updatedAt),
    nextAttemptAt: delivery.state === 'pending' ? formatTimestamp(delivery.nextAttemptAt) : null,
  };
}

function deliveryLine(delivery: DeliveryRecord): string {
  return [
    formatTimestamp(delivery.updatedAt),
    delivery.seq,
    delivery.type,
    delivery.state,
    delivery.attempts,
    delivery.lastStatus ?? delivery.lastError ?? '-',
    delivery.state === 'pending' ? formatTimestamp(delivery.nextAttemptAt) : '-',
  ].join('\t');
}

export function registerWebhookCommands(program: Command, globals: () => GlobalOptions): void {
  const webhook = program
    .command('webhook')
    .description("a hub's outgoing webhook endpoints (a running server sends the deliveries)");

  webhook
    .command('add <hubId> <url>')
    .description(
      'add an endpoint: prints its id and signing secret (whsec_..., shown this once); https, or http to a private address with CHATLOG_WEBHOOK_ALLOW_PRIVATE=true',
    )
    .option(
      '--events <types>',
      `comma-separated change types to send (default all): ${CHANGE_TYPES.join(', ')}`,
    )
    .option('--json', 'print a JSON object {id, url, events, createdAt, disabledAt, secret} instead')
    .action(async (hubId: string, url: string, options: { events?: string; json?: boolean }) => {
      // Checked before the store is opened, so a typo costs nothing.
      const events = options.events === undefined ? undefined : parseEventList(options.events);
      await withRuntime(globals(), async (runtime) => {
        await runtime.hubs.require(hubId);
        const added = await webhookService(runtime).add(hubId, { url, events });
        if (options.json) {
          process.stdout.write(
            `${JSON.stringify({ ...endpointJson(added), secret: added.secret }, null, 2)}\n`,
          );
        } else {
          process.stdout.write(`${added.id}\t${added.secret}\n`);
        }
        process.stderr.write(
          `chatlog: endpoint ${added.id} added to hub ${hubId} (${added.url}, events ${added.events.join(', ')}); its signing secret is shown this once: keep it now\n`,
        );
      });
    });

  webhook
    .command('list <hubId>')
    .description(
      'one line per endpoint, oldest first, tab-separated: id, url, events, created, disabled (never the secret)',
    )
    .option('--json', 'print a JSON array of {id, url, events, createdAt, disabledAt} instead')
    .action(async (hubId: string, options: { json?: boolean }) => {
      await withRuntime(globals(), async (runtime) => {
        await runtime.hubs.require(hubId);
        const endpoints = await webhookService(runtime).list(hubId);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(endpoints.map(endpointJson), null, 2)}\n`);
        } else {
          for (const endpoint of endpoints) process.stdout.write(`${endpointLine(endpoint)}\n`);
        }
      });
    });

  webhook
    .command('remove <id>')
    .description(
      'remove an endpoint, named by its id alone (whe_..., the first column of webhook list): nothing more is sent to it',
    )
    .action(async (given: string) => {
      const id = endpointId(given);
      await withRuntime(globals(), async (runtime) => {
        const webhooks = webhookService(runtime);
        const endpoint = await webhooks.find(id);
        await webhooks.remove(endpoint.hubId, endpoint.id);
        process.stderr.write(
          `chatlog: endpoint ${endpoint.id} (${endpoint.url}) of hub ${endpoint.hubId} removed\n`,
        );
      });
    });

  webhook
    .command('replay <id>')
    .description(
      "send again every change of the endpoint's types after --cursor, or from the start of the hub's feed without it (changes from before the endpoint was added included); prints how many on stderr, and a running server sends them within seconds",
    )
    .option(
      '--cursor <cursor>',
      "a cursor of the endpoint's hub (GET /api/line/:hubId/changes): only the changes after it",
    )
    .action(async (given: string, options: { cursor?: string }) => {
      const id = endpointId(given);
      await withRuntime(globals(), async (runtime) => {
        const webhooks = webhookService(runtime);
        const endpoint = await webhooks.find(id);
        const count = await webhooks.replay(endpoint.id, options.cursor);
        process.stderr.write(
          `chatlog: ${count} ${count === 1 ? 'delivery' : 'deliveries'} queued again for endpoint ${endpoint.id} of hub ${endpoint.hubId}${
            endpoint.disabledAt === null ? '' : ' (the endpoint is disabled: nothing is sent to it)'
          }\n`,
        );
      });
    });

  webhook
    .command('retry <hubId> [id]')
    .description(
      'attempt now the deliveries that wait for a later attempt (after failures, up to hours away), of every endpoint of the hub or of the one named: a running server sends them within seconds, with the settings it runs with now; prints per endpoint how many',
    )
    .action(async (hubId: string, given: string | undefined) => {
      const id = given === undefined ? undefined : endpointId(given);
      await withRuntime(globals(), async (runtime) => {
        await runtime.hubs.require(hubId);
        const retried = await webhookService(runtime).retryNow(hubId, id);
        for (const endpoint of retried) process.stdout.write(`${endpoint.id}\t${endpoint.retried}\n`);
        const total = retried.reduce((sum, endpoint) => sum + endpoint.retried, 0);
        process.stderr.write(
          retried.length === 0
            ? `chatlog: hub ${hubId} has no live webhook endpoint: nothing to retry\n`
            : `chatlog: ${total} ${total === 1 ? 'delivery' : 'deliveries'} of hub ${hubId} to be attempted now (a running server sends them within seconds)\n`,
        );
      });
    });

  webhook
    .command('deliveries <id>')
    .description(
      "an endpoint's recent deliveries, latest first, tab-separated: updated, seq, type, state, attempts, last status (or error), next attempt",
    )
    .option('--limit <n>', 'how many (1 to 1000)', limitOf, 20)
    .option('--json', 'print a JSON array instead')
    .action(async (given: string, options: { limit: number; json?: boolean }) => {
      const id = endpointId(given);
      await withRuntime(globals(), async (runtime) => {
        const webhooks = webhookService(runtime);
        const endpoint = await webhooks.find(id);
        const deliveries = await webhooks.recent(endpoint.id, options.limit);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(deliveries.map(deliveryJson), null, 2)}\n`);
        } else {
          for (const delivery of deliveries) process.stdout.write(`${deliveryLine(delivery)}\n`);
        }
      });
    });
}
