/**
 * The account screen's part of outgoing webhooks (CONTRACT §10, §14): a hub's endpoints with their
 * recent deliveries, adding one (its secret shown once) and removing one, for the account's own
 * hubs only, as the keys are. The rules of endpoints themselves are the WebhookService's.
 */
import type { DeliveryRecord } from '../../store/store.js';
import type { EndpointSummary, WebhookService } from '../webhooks/webhooks.usecases.js';
import { accountErrors } from './account.errors.js';
import type { SignedIn } from './account.usecases.js';

/** How many of an endpoint's deliveries the screen lists, newest first. */
export const RECENT_DELIVERIES = 10;

export interface EndpointView extends EndpointSummary {
  /** Its most recently changed deliveries, newest first. */
  deliveries: DeliveryRecord[];
}

export class AccountWebhooks {
  constructor(private readonly webhooks: WebhookService) {}

  private requireHub(signedIn: SignedIn, hubId: string): void {
    if (!signedIn.hubIds.includes(hubId)) throw accountErrors.hubNotFound();
  }

  /** How many endpoints the hub has (the keys page says it beside the link). */
  async countOf(signedIn: SignedIn, hubId: string): Promise<number> {
    this.requireHub(signedIn, hubId);
    return (await this.webhooks.list(hubId)).length;
  }

  async endpointsOf(signedIn: SignedIn, hubId: string): Promise<EndpointView[]> {
    this.requireHub(signedIn, hubId);
    const views: EndpointView[] = [];
    // Deliveries are asked for by endpoint id only: ids that come from this hub's own list.
    for (const endpoint of await this.webhooks.list(hubId)) {
      views.push({ ...endpoint, deliveries: await this.webhooks.recent(endpoint.id, RECENT_DELIVERIES) });
    }
    return views;
  }

  /** The hub's endpoint of that id, or undefined (another hub's, removed, or none). */
  async endpointOf(signedIn: SignedIn, hubId: string, id: string): Promise<EndpointSummary | undefined> {
    this.requireHub(signedIn, hubId);
    return (await this.webhooks.list(hubId)).find((endpoint) => endpoint.id === id);
  }

  /** Adds an endpoint of every change type; the answer is the one time its secret is shown. */
  add(signedIn: SignedIn, hubId: string, url: string): Promise<EndpointSummary & { secret: string }> {
    this.requireHub(signedIn, hubId);
    return this.webhooks.add(hubId, { url: url.trim() });
  }

  /** "Retry now": the endpoint's deliveries waiting for a later attempt go at once; how many. */
  async retryNow(signedIn: SignedIn, hubId: string, id: string): Promise<number> {
    this.requireHub(signedIn, hubId);
    const [endpoint] = await this.webhooks.retryNow(hubId, id);
    return endpoint?.retried ?? 0;
  }

  async remove(signedIn: SignedIn, hubId: string, id: string): Promise<void> {
    this.requireHub(signedIn, hubId);
    await this.webhooks.remove(hubId, id);
  }
}
