/**
 * Managing a hub's outgoing webhook endpoints (CONTRACT §10), for the admin API, the command line
 * and the account screen alike: add (the URL rules checked, the secret made and shown once), list
 * (never a secret), remove, replay, and the recent deliveries.
 */
import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../../lib/secrets.js';
import {
  CHANGE_TYPES,
  type ChangeType,
  type DeliveryRecord,
  type Store,
  type WebhookEndpoint,
} from '../../store/store.js';
import { decodeCursor } from '../changes/changes.cursor.js';
import { webhookErrors } from './webhooks.errors.js';
import { newWebhookSecret } from './webhooks.signature.js';
import { checkEndpointUrl, type Resolve, resolveAll, type UrlPolicy } from './webhooks.url.js';

export const MAX_URL_LENGTH = 2048;

/** An endpoint as it is shown: never its secret. */
export interface EndpointSummary {
  id: string;
  url: string;
  events: ChangeType[];
  createdAt: number;
  /** When an answer 410 Gone disabled it; null while it is live. */
  disabledAt: number | null;
}

export interface WebhookServiceDeps {
  store: Pick<Store, 'webhooks'>;
  secrets: SecretBox;
  policy: UrlPolicy;
  clock: () => number;
  resolve?: Resolve;
  /** Told when an endpoint is added or replayed, so this node's worker looks at once. */
  onWork?: (endpointId: string) => void;
}

export function summarize(endpoint: WebhookEndpoint): EndpointSummary {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events ?? [...CHANGE_TYPES],
    createdAt: endpoint.createdAt,
    disabledAt: endpoint.disabledAt,
  };
}

/** The types asked for; undefined or null: every type (those added later included). */
export function parseEvents(events: unknown): ChangeType[] | null {
  if (events === undefined || events === null) return null;
  if (
    !Array.isArray(events) ||
    events.length === 0 ||
    new Set(events).size !== events.length ||
    !events.every((type) => CHANGE_TYPES.includes(type as ChangeType))
  ) {
    throw webhookErrors.invalidEvents();
  }
  return events as ChangeType[];
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** Adds an endpoint; the answer is the only time its secret is shown. */
  async add(
    hubId: string,
    request: { url: string; events?: unknown },
  ): Promise<EndpointSummary & { secret: string }> {
    const events = parseEvents(request.events);
    if (request.url.length > MAX_URL_LENGTH) {
      throw webhookErrors.invalidUrl(`it is longer than ${MAX_URL_LENGTH} characters`);
    }
    const checked = await checkEndpointUrl(request.url, this.deps.policy, this.deps.resolve ?? resolveAll);
    if (!checked.ok) throw webhookErrors.invalidUrl(checked.reason);
    const secret = newWebhookSecret();
    const endpoint = await this.deps.store.webhooks.add({
      id: `whe_${randomBytes(12).toString('base64url')}`,
      hubId,
      url: checked.url.href,
      events,
      secretEncrypted: this.deps.secrets.encrypt(secret),
      createdAt: this.deps.clock(),
    });
    this.deps.onWork?.(endpoint.id);
    return { ...summarize(endpoint), secret };
  }

  async list(hubId: string): Promise<EndpointSummary[]> {
    return (await this.deps.store.webhooks.list(hubId)).map(summarize);
  }

  /** The endpoint of that id, of any hub (the command line names endpoints by id alone). */
  async find(id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.deps.store.webhooks.get(id);
    if (!endpoint) throw webhookErrors.unknownEndpoint(id);
    return endpoint;
  }

  async remove(hubId: string, id: string): Promise<void> {
    if (!(await this.deps.store.webhooks.remove(hubId, id, this.deps.clock())))
      throw webhookErrors.notFound(id);
  }

  /**
   * Sends again every change after the cursor (from the start of the hub's feed when none) up to
   * what the endpoint has been given so far, of its types: resolves to how many. A cursor from
   * before the endpoint was added sends it those earlier changes too (a way to fill a new copy).
   */
  async replay(id: string, cursor: string | undefined): Promise<number> {
    const endpoint = await this.find(id);
    let after = 0;
    if (cursor !== undefined) {
      const seq = decodeCursor(endpoint.hubId, cursor);
      if (seq === undefined) throw webhookErrors.invalidCursor();
      after = seq;
    }
    const count = await this.deps.store.webhooks.replay(endpoint, after, this.deps.clock());
    this.deps.onWork?.(endpoint.id);
    return count;
  }

  /**
   * "Retry now": the deliveries of the hub's endpoints (or of the one named) that wait for a later
   * attempt are attempted at once, by whichever node's worker looks first (within seconds), with
   * the settings that node runs with now. Resolves, per endpoint, how many.
   */
  async retryNow(hubId: string, endpointId?: string): Promise<Array<{ id: string; retried: number }>> {
    const endpoints =
      endpointId === undefined
        ? await this.deps.store.webhooks.list(hubId)
        : [(await this.deps.store.webhooks.list(hubId)).find((e) => e.id === endpointId)];
    const retried: Array<{ id: string; retried: number }> = [];
    for (const endpoint of endpoints) {
      if (!endpoint) throw webhookErrors.notFound(endpointId ?? '');
      if (endpoint.disabledAt !== null) continue;
      const count = await this.deps.store.webhooks.retryNow(endpoint.id, this.deps.clock());
      if (count > 0) this.deps.onWork?.(endpoint.id);
      retried.push({ id: endpoint.id, retried: count });
    }
    return retried;
  }

  recent(endpointId: string, limit = 20): Promise<DeliveryRecord[]> {
    return this.deps.store.webhooks.recent(endpointId, limit);
  }
}
