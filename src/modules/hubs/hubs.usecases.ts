/** Hub settings: the IANA time zone its days are read in, and its LINE channel secret. */
import { canonicalTimeZone } from '../../lib/calendar.js';
import type { SecretBox } from '../../lib/secrets.js';
import type { Hub, Store } from '../../store/store.js';
import { hubErrors } from './hubs.errors.js';

export const HUB_ID_PATTERN = /^[0-9]{1,20}$/;

export function isValidHubId(text: string): boolean {
  return HUB_ID_PATTERN.test(text);
}

export function requireHubId(text: string): string {
  if (!isValidHubId(text)) throw hubErrors.invalidIdGiven(text);
  return text;
}

export class HubService {
  constructor(
    private readonly store: Pick<Store, 'hubs'>,
    private readonly secrets: SecretBox,
    private readonly clock: () => number = Date.now,
  ) {}

  async get(hubId: string): Promise<Hub | undefined> {
    return this.store.hubs.get(hubId);
  }

  async require(hubId: string): Promise<Hub> {
    const hub = await this.store.hubs.get(requireHubId(hubId));
    if (!hub) throw hubErrors.notFound(hubId);
    return hub;
  }

  /** Creates the hub, or changes only the settings given. */
  async add(
    hubId: string,
    settings: {
      timeZone?: string | undefined;
      lineChannelSecret?: string | undefined;
      lineChannelAccessToken?: string | undefined;
      /** Days of messages kept (CONTRACT §13), as typed: a whole number, 0 (everything) to 36500. */
      retentionDays?: string | number | undefined;
    },
  ): Promise<{ hub: Hub; created: boolean }> {
    requireHubId(hubId);
    let timeZone: string | undefined;
    if (settings.timeZone !== undefined) {
      timeZone = canonicalTimeZone(settings.timeZone);
      if (!timeZone) throw hubErrors.invalidTimeZone(settings.timeZone);
    }
    let lineChannelSecretEncrypted: Buffer | undefined;
    if (settings.lineChannelSecret !== undefined) {
      if (!/^[\x21-\x7e]{8,256}$/.test(settings.lineChannelSecret)) {
        throw hubErrors.invalidChannelSecret();
      }
      lineChannelSecretEncrypted = this.secrets.encrypt(settings.lineChannelSecret);
    }
    let lineChannelAccessTokenEncrypted: Buffer | undefined;
    if (settings.lineChannelAccessToken !== undefined) {
      if (!/^[\x21-\x7e]{8,2048}$/.test(settings.lineChannelAccessToken)) {
        throw hubErrors.invalidAccessToken();
      }
      lineChannelAccessTokenEncrypted = this.secrets.encrypt(settings.lineChannelAccessToken);
    }
    let retentionDays: number | undefined;
    if (settings.retentionDays !== undefined) {
      const text = String(settings.retentionDays);
      if (!/^\d{1,5}$/.test(text) || Number(text) > 36_500) throw hubErrors.invalidRetentionDays(text);
      retentionDays = Number(text);
    }
    return this.store.hubs.upsert(
      hubId,
      { timeZone, lineChannelSecretEncrypted, lineChannelAccessTokenEncrypted, retentionDays },
      this.clock(),
    );
  }

  /** The hub, created with default settings when it does not exist yet. */
  async ensure(hubId: string): Promise<{ hub: Hub; created: boolean }> {
    const existing = await this.store.hubs.get(requireHubId(hubId));
    if (existing) return { hub: existing, created: false };
    return this.store.hubs.upsert(hubId, {}, this.clock());
  }
}
