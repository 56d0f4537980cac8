/** The HubSpot inbox's port of the store (CONTRACT §18), re-exported by store.ts (ARCHITECTURE: a port per feature, store/ports/<feature>.ts). */
import type { HubspotConnection, LeasedHubspotConnection } from '../types.js';

/** Tokens of a finished authorization, waiting for the owner's choice of inbox. */
export type HeldTokens = Pick<
  HubspotConnection,
  'portalId' | 'accessTokenEncrypted' | 'refreshTokenEncrypted' | 'tokenExpiresAt'
>;

/** An agent's reply that ended, its status not yet set in HubSpot. */
export interface UnreportedReply {
  sendId: string;
  hubspotMessageId: string;
  state: 'sent' | 'failed';
  /** LINE's words when it failed. */
  lastError: string | null;
}

/** The HubSpot inbox (CONTRACT §18): the custom channel, each hub's connection and its publishing. */
export interface HubspotPort {
  /** The custom channel's id, once `chatlog hubspot channel register` made it. */
  channelId(): Promise<string | undefined>;
  setChannelId(id: string): Promise<void>;
  /**
   * Connects the hub (again): messages stored from now on are published; a hub connected before
   * starts again from now, its counts and error cleared.
   */
  connect(
    connection: Pick<
      HubspotConnection,
      | 'hubId'
      | 'portalId'
      | 'accessTokenEncrypted'
      | 'refreshTokenEncrypted'
      | 'tokenExpiresAt'
      | 'inboxId'
      | 'inboxName'
      | 'channelAccountId'
      | 'connectedAt'
    >,
  ): Promise<HubspotConnection>;
  get(hubId: string): Promise<HubspotConnection | undefined>;
  /** The hubs connected now (not disconnected). */
  connectedHubs(): Promise<string[]>;
  /** Stops publishing the hub; false when it was not connected. */
  disconnect(hubId: string, now: number): Promise<boolean>;
  /** New tokens after a refresh (kept whatever the lease: a token is the hub's, not the lease's). */
  setTokens(
    hubId: string,
    tokens: Pick<HubspotConnection, 'accessTokenEncrypted' | 'refreshTokenEncrypted' | 'tokenExpiresAt'>,
  ): Promise<void>;
  /**
   * Up to `max` connected hubs with messages to publish and due, none held by another lease, for
   * this node until `leasedUntil`.
   */
  lease(now: number, leasedUntil: number, max: number): Promise<LeasedHubspotConnection[]>;
  /**
   * The hub's feed went out up to `seq`, `messages` of it published: the mark moved, the attempts
   * in a row cleared (the last error stays, with its time), and the lease renewed until
   * `renewedUntil`. False when the lease had passed (another node may hold the hub now).
   */
  advance(mark: {
    hubId: string;
    leasedUntil: number;
    renewedUntil: number;
    seq: number;
    messages: number;
    /** A message HubSpot refused for good (400) and that was passed over: said, not cleared. */
    skipped?: { error: string; at: number } | undefined;
  }): Promise<boolean>;
  /**
   * Asks for the messages created from `from` and stored before the connection to be published
   * (`chatlog hubspot backfill`): days not covered by an earlier backfill, after it. Resolves to the
   * connection with its backfill (a running one is left as it is), undefined when not connected.
   */
  startBackfill(hubId: string, from: number): Promise<HubspotConnection | undefined>;
  /** The backfill went through the feed up to `seq`, `messages` of it published (as advance). */
  advanceBackfill(mark: {
    hubId: string;
    leasedUntil: number;
    renewedUntil: number;
    seq: number;
    messages: number;
  }): Promise<boolean>;
  /** Lets go of the hub, with why the last attempt did not go and when to try again, if it did not. */
  release(
    hubId: string,
    leasedUntil: number,
    failure?: { attempts: number; nextAttemptAt: number; error: string; at: number },
  ): Promise<void>;
  /** The hub whose channel account this is (an agent's reply names it), connected or not. */
  byChannelAccount(channelAccountId: string): Promise<HubspotConnection | undefined>;
  /** LINE ids of the messages sent for agents' replies (§18) that ended at or after `since`. */
  replies(hubId: string, since: number): Promise<Set<string>>;
  /** Agents' replies of the hub that ended (sent or failed) and whose status HubSpot was not told. */
  unreported(hubId: string, max: number): Promise<UnreportedReply[]>;
  /** HubSpot was told of the reply's status. */
  reported(sendId: string): Promise<void>;
  /** Keeps the state of an owner's way to HubSpot's authorize page (its hash: one use, until `expiresAt`). */
  beginAuthorization(state: {
    stateHash: string;
    hubId: string;
    accountId: number;
    expiresAt: number;
    /** Expired states are forgotten meanwhile. */
    now: number;
  }): Promise<void>;
  /**
   * Uses the state once, for the account that began it, before it expires: its hub, or undefined
   * (unknown, used already, another account's, expired).
   */
  useAuthorization(stateHash: string, accountId: number, now: number): Promise<{ hubId: string } | undefined>;
  /** The tokens of a used state, kept until the owner picks an inbox. */
  holdTokens(stateHash: string, tokens: HeldTokens): Promise<void>;
  /** The tokens a used state holds, for the account that began it, and its hub; undefined when none. */
  heldTokens(
    stateHash: string,
    accountId: number,
    now: number,
  ): Promise<(HeldTokens & { hubId: string }) | undefined>;
  /** Forgets a state (connected, or given up) and every expired one. */
  endAuthorization(stateHash: string, now: number): Promise<void>;
  /** For /metrics: hubs connected, their messages still to publish, and those paused after an error. */
  totals(now: number): Promise<{ connected: number; waiting: number; failing: number }>;
  /** Messages stored after the mark: those still to publish. */
  waiting(hubId: string): Promise<number>;
}
