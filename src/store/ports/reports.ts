/** The reports' port of the store (CONTRACT §17), re-exported by store.ts (ARCHITECTURE: a port per feature, store/ports/<feature>.ts). */

/**
 * A message as a report (CONTRACT §17) counts it: its row id and feed seq, its contact's row id, its
 * time, and whether it is from the account (sender `You` as section 3 renders it).
 */
export interface ReportMessage {
  id: number;
  seq: number;
  contact: number;
  createdAt: number;
  fromAccount: boolean;
}

/** Where a hub's messages are: history moves with every change other than a stored message (migration 6). */
export interface ReportPosition {
  history: number;
  lastSeq: number;
  /** The feed's changes other than stored messages up to this seq are gone (CHATLOG_CHANGES_KEEP_DAYS). */
  changesDroppedThrough: number;
}

/** A change of the hub's feed other than a stored message: its seq, type, and contact's row id if it has one. */
export interface ReportChange {
  seq: number;
  type: string;
  contact: number | null;
}

/** A friend waiting for an answer: its last message is its own, and none of the account's follows. */
export interface WaitingContact {
  lineId: string;
  name: string;
  /** When the wait began: the friend's first message after the account's last (or its first ever). */
  since: number;
}

export interface ReportsPort {
  /** The hub's history version and last seq; undefined when there is no such hub. */
  position(hubId: string): Promise<ReportPosition | undefined>;
  /** The hub's contacts named `You`, by row id (their messages without a sender are the account's). */
  namedYou(hubId: string): Promise<ReadonlySet<number>>;
  /** Up to `limit` of the hub's messages after `after` in section 3's order (created, then id). */
  messages(
    hubId: string,
    after: { createdAt: number; id: number } | null,
    limit: number,
    namedYou: ReadonlySet<number>,
  ): Promise<ReportMessage[]>;
  /** The hub's messages whose seq is in (afterSeq, throughSeq], in seq order. */
  appended(hubId: string, afterSeq: number, throughSeq: number): Promise<ReportMessage[]>;
  /** The feed's other changes whose seq is in (afterSeq, throughSeq], in seq order. */
  changes(hubId: string, afterSeq: number, throughSeq: number): Promise<ReportChange[]>;
  /** The messages of these contacts (row ids) with a seq up to throughSeq, in section 3's order. */
  contactMessages(hubId: string, contacts: readonly number[], throughSeq: number): Promise<ReportMessage[]>;
  /** How many of the hub's messages have a seq up to throughSeq. */
  count(hubId: string, throughSeq: number): Promise<number>;
  /** The friends waiting now, the longest wait first, at most `limit`; and how many wait in all. */
  waiting(hubId: string, limit: number): Promise<{ contacts: WaitingContact[]; total: number }>;
}
