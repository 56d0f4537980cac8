/**
 * A hub's contacts: linking a LINE friend to a HubSpot contact (the ingest API), and display names
 * from LINE's profile endpoints for hubs that have a channel access token. Every contact write of
 * chatlog goes through here.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SecretBox } from '../../lib/secrets.js';
import type { Contact, Hub, IngestOperation, IngestOutcome, Store } from '../../store/store.js';
import type { ContactLinkBody } from '../ingest/ingest.schemas.js';
import { fetchDisplayName, type ProfileLookup } from './line-profile.js';

export interface ContactDeps {
  store: Pick<Store, 'contacts'>;
  secrets: SecretBox;
  log: FastifyBaseLogger;
  /** Base URL of LINE's Messaging API (tests point it at a local server). */
  lineApiBaseUrl: string;
  clock: () => number;
}

export class ContactService {
  private readonly lookupsInFlight = new Set<string>();

  constructor(private readonly deps: ContactDeps) {}

  /** PUT /ingest/line/:hubId/contacts/:lineId: link the friend to a HubSpot contact, set the name. */
  async link(hubId: string, lineId: string, body: ContactLinkBody): Promise<Contact> {
    const vid = body.vid === undefined || body.vid === null ? undefined : String(body.vid);
    const name = body.name ?? undefined;
    return (await this.deps.store.contacts.upsert(hubId, lineId, { vid, name }, this.deps.clock())).contact;
  }

  /**
   * After a webhook is stored: the names of the friends the hub saw for the first time, and of those
   * who followed again (they may have changed their name while away). Only with an access token.
   */
  lookUpNames(
    hub: Hub,
    operations: readonly IngestOperation[],
    candidates: readonly ProfileLookup[],
    outcome: IngestOutcome,
  ): void {
    const token = hub.lineChannelAccessTokenEncrypted;
    if (!token) return;
    const created = new Set(outcome.contactsCreated);
    const wanted = candidates.filter((c) => created.has(c.lineId));
    for (const op of operations) {
      if (op.kind === 'follow' && !created.has(op.lineId)) {
        const candidate = candidates.find((c) => c.lineId === op.lineId);
        if (candidate) wanted.push(candidate);
      }
    }
    for (const lookup of wanted) this.lookUpDisplayName(hub.id, token, lookup);
  }

  /** Fire and forget: the name arrives when LINE answers; the message is already stored. */
  private lookUpDisplayName(hubId: string, tokenEncrypted: Buffer, lookup: ProfileLookup): void {
    const flight = `${hubId} ${lookup.lineId}`;
    if (this.lookupsInFlight.has(flight)) return;
    this.lookupsInFlight.add(flight);
    const token = this.deps.secrets.decrypt(tokenEncrypted);
    void fetchDisplayName(this.deps.lineApiBaseUrl, token, lookup, this.deps.log)
      .then(async (name) => {
        if (name === undefined) return;
        // LINE's display name never overrides a name set through the ingest API.
        await this.deps.store.contacts.upsert(
          hubId,
          lookup.lineId,
          { name, onlyIfNameEmpty: true },
          this.deps.clock(),
        );
      })
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not store a LINE display name'))
      .finally(() => this.lookupsInFlight.delete(flight));
  }
}
