/** The HubSpot inbox's port of the store (CONTRACT §18), re-exported by store.ts (ARCHITECTURE: a port per feature, store/ports/<feature>.ts). */
import type { HubspotConnection, LeasedHubspotConnection } from '../types.js';

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
  /** Lets go of the hub, with why the last attempt did not go and when to try again, if it did not. */
  release(
    hubId: string,
    leasedUntil: number,
    failure?: { attempts: number; nextAttemptAt: number; error: string; at: number },
  ): Promise<void>;
  /** Messages stored after the mark: those still to publish. */
  waiting(hubId: string): Promise<number>;
}
