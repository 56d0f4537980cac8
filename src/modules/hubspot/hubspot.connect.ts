/**
 * Connecting a hub to a HubSpot inbox (CONTRACT §18), the account screen's `Connect HubSpot`:
 *
 * 1. begin: a state (32 random bytes; its hash kept, for one use, ten minutes, by the account that
 *    began it) and HubSpot's authorize page with the scopes the documented calls need;
 * 2. finish: HubSpot sends the owner back with a code and the state; the state is used, the code
 *    exchanged for tokens (kept encrypted, waiting), the portal read, the inboxes listed;
 * 3. connect: the owner's inbox gets a channel account of chatlog's channel, and the hub's
 *    connection is kept: from then on its messages are published (hubspot.publisher.ts).
 *
 * `Disconnect HubSpot` disables the channel account in HubSpot (it has no delete) and stops
 * publishing. Tokens never leave this module except encrypted into the store or to HubSpot.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secrets.js';
import type { HubspotConnection, Store } from '../../store/store.js';
import {
  createChannelAccount,
  disableChannelAccount,
  exchangeCode,
  type HubspotAnswer,
  type Inbox,
  listInboxes,
  type OAuthClient,
  portalOf,
  refreshTokens,
} from './hubspot.api.js';
import { accountIdentifier, REFRESH_BEFORE_MS } from './hubspot.publisher.js';

/** What chatlog's calls need (HubSpot's reference): inboxes read, channel accounts and messages written. */
export const SCOPES = ['conversations.read', 'conversations.custom_channels.write'] as const;
const STATE_MS = 10 * 60_000;

const hashOf = (state: string) => createHash('sha256').update(state).digest('base64url');

export const hubspotErrors = {
  notConfigured: () =>
    new AppError(
      'unavailable',
      'this chatlog has no HubSpot app: the operator sets CHATLOG_HUBSPOT_CLIENT_ID and CHATLOG_HUBSPOT_CLIENT_SECRET',
    ),
  noChannel: () =>
    new AppError(
      'unavailable',
      "chatlog's HubSpot channel is not registered yet: the operator runs `chatlog hubspot channel register`",
    ),
  invalidState: () =>
    new AppError(
      'bad_request',
      'this HubSpot authorization is not one this account began, was used already, or is more than 10 minutes old: press Connect HubSpot again',
    ),
  refused: (what: string, reason: string) =>
    new AppError('unavailable', `HubSpot did not ${what}: ${reason}`),
  unknownInbox: () => new AppError('bad_request', 'choose one of the inboxes listed'),
};

function answered<T>(answer: HubspotAnswer<T>, what: string): T {
  if (answer.kind === 'ok') return answer.value;
  throw hubspotErrors.refused(what, answer.reason);
}

export interface HubspotStatus {
  /** The operator set up the app (client id and secret) and registered the channel. */
  ready: boolean;
  connection: HubspotConnection | undefined;
  /** Messages still to publish. */
  waiting: number;
}

export class HubspotConnections {
  constructor(
    private readonly deps: {
      store: Pick<Store, 'hubspot'>;
      secrets: SecretBox;
      apiBaseUrl: string;
      appBaseUrl: string;
      client: OAuthClient | undefined;
      clock: () => number;
    },
  ) {}

  /** Where HubSpot's authorize page is (a page that sends the owner there names it in its CSP). */
  authorizeOrigin(): string {
    return new URL(this.deps.appBaseUrl).origin;
  }

  async status(hubId: string): Promise<HubspotStatus> {
    const { store } = this.deps;
    const [channelId, connection] = await Promise.all([store.hubspot.channelId(), store.hubspot.get(hubId)]);
    const live = connection?.disconnectedAt === null;
    return {
      ready: this.deps.client !== undefined && channelId !== undefined,
      connection,
      waiting: live ? await store.hubspot.waiting(hubId) : 0,
    };
  }

  /** HubSpot's authorize page for this hub, with a new state. */
  async begin(accountId: number, hubId: string, redirectUri: string): Promise<string> {
    const client = this.requireClient();
    if ((await this.deps.store.hubspot.channelId()) === undefined) throw hubspotErrors.noChannel();
    const state = randomBytes(32).toString('base64url');
    const now = this.deps.clock();
    await this.deps.store.hubspot.beginAuthorization({
      stateHash: hashOf(state),
      hubId,
      accountId,
      expiresAt: now + STATE_MS,
      now,
    });
    const query = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: redirectUri,
      scope: SCOPES.join(' '),
      state,
    });
    return `${this.deps.appBaseUrl.replace(/\/+$/, '')}/oauth/authorize?${query}`;
  }

  /** The owner is back from HubSpot: the state used, the code exchanged, the inboxes to choose from. */
  async finish(
    accountId: number,
    state: string,
    code: string,
    redirectUri: string,
  ): Promise<{ hubId: string; inboxes: Inbox[] }> {
    const client = this.requireClient();
    const { store, secrets, apiBaseUrl } = this.deps;
    const used = await store.hubspot.useAuthorization(hashOf(state), accountId, this.deps.clock());
    if (!used) throw hubspotErrors.invalidState();
    const tokens = answered(
      await exchangeCode(apiBaseUrl, client, code, redirectUri),
      'take the authorization',
    );
    const { portalId } = answered(await portalOf(apiBaseUrl, tokens.accessToken), 'say which account it is');
    await store.hubspot.holdTokens(hashOf(state), {
      portalId,
      accessTokenEncrypted: secrets.encrypt(tokens.accessToken),
      refreshTokenEncrypted: secrets.encrypt(tokens.refreshToken),
      tokenExpiresAt: this.deps.clock() + tokens.expiresIn * 1000,
    });
    const inboxes = answered(await listInboxes(apiBaseUrl, tokens.accessToken), 'list the inboxes');
    return { hubId: used.hubId, inboxes };
  }

  /** The inboxes again (the choice shown once more), for a state whose tokens wait. */
  async inboxes(accountId: number, state: string): Promise<{ hubId: string; inboxes: Inbox[] }> {
    const held = await this.deps.store.hubspot.heldTokens(hashOf(state), accountId, this.deps.clock());
    if (!held) throw hubspotErrors.invalidState();
    const token = this.deps.secrets.decrypt(held.accessTokenEncrypted);
    return {
      hubId: held.hubId,
      inboxes: answered(await listInboxes(this.deps.apiBaseUrl, token), 'list the inboxes'),
    };
  }

  /** The chosen inbox gets the hub's channel account; the hub is connected. */
  async connect(
    accountId: number,
    hubId: string,
    state: string,
    inboxId: string,
  ): Promise<HubspotConnection> {
    const { store, secrets, apiBaseUrl } = this.deps;
    const held = await store.hubspot.heldTokens(hashOf(state), accountId, this.deps.clock());
    if (!held || held.hubId !== hubId) throw hubspotErrors.invalidState();
    const channelId = await store.hubspot.channelId();
    if (channelId === undefined) throw hubspotErrors.noChannel();
    const token = secrets.decrypt(held.accessTokenEncrypted);
    const inbox = answered(await listInboxes(apiBaseUrl, token), 'list the inboxes').find(
      (i) => i.id === inboxId,
    );
    if (!inbox) throw hubspotErrors.unknownInbox();
    const account = answered(
      await createChannelAccount(apiBaseUrl, token, channelId, {
        inboxId: inbox.id,
        name: `LINE (chatlog hub ${held.hubId})`,
        deliveryIdentifier: accountIdentifier(held.hubId),
      }),
      'add the channel to the inbox',
    );
    const connection = await store.hubspot.connect({
      hubId: held.hubId,
      portalId: held.portalId,
      accessTokenEncrypted: held.accessTokenEncrypted,
      refreshTokenEncrypted: held.refreshTokenEncrypted,
      tokenExpiresAt: held.tokenExpiresAt,
      inboxId: inbox.id,
      inboxName: inbox.name,
      channelAccountId: account.id,
      connectedAt: this.deps.clock(),
    });
    await store.hubspot.endAuthorization(hashOf(state), this.deps.clock());
    return connection;
  }

  /**
   * Stops publishing the hub, and disables its channel account in HubSpot. Resolves to HubSpot's
   * words when that failed (the hub is disconnected here all the same).
   */
  async disconnect(hubId: string): Promise<{ hubspotError: string | undefined }> {
    const { store, secrets, apiBaseUrl } = this.deps;
    const connection = await store.hubspot.get(hubId);
    if (!connection || connection.disconnectedAt !== null) return { hubspotError: undefined };
    await store.hubspot.disconnect(hubId, this.deps.clock());
    const channelId = await store.hubspot.channelId();
    if (channelId === undefined || !this.deps.client) return { hubspotError: undefined };
    let token = secrets.decrypt(connection.accessTokenEncrypted);
    if (connection.tokenExpiresAt - this.deps.clock() < REFRESH_BEFORE_MS) {
      const renewed = await refreshTokens(
        apiBaseUrl,
        this.deps.client,
        secrets.decrypt(connection.refreshTokenEncrypted),
      );
      if (renewed.kind !== 'ok') return { hubspotError: renewed.reason };
      token = renewed.value.accessToken;
    }
    const answer = await disableChannelAccount(apiBaseUrl, token, channelId, connection.channelAccountId);
    return { hubspotError: answer.kind === 'ok' ? undefined : answer.reason };
  }

  private requireClient(): OAuthClient {
    if (!this.deps.client) throw hubspotErrors.notConfigured();
    return this.deps.client;
  }
}
