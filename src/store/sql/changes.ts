/**
 * The change log (CONTRACT §9), written once for both engines: how a write numbers its changes,
 * and how the feed reads them back.
 *
 * Ordering. A write first locks the rows of the hubs it changes (in id order, so two writers never
 * lock crosswise) and reads each hub's `last_seq`; it numbers its changes after it and writes the
 * new `last_seq` just before it commits, still holding the lock. The next writer of that hub waits
 * for the commit before it reads `last_seq`, so seq order is commit order, on SQLite (one writer)
 * and on PostgreSQL with any number of nodes: a change never becomes visible behind one already
 * served.
 *
 * Storage. A stored message is its own `message.created` (seq and commit time on its row), so it
 * leaves the feed with the message. The other changes are rows of `changes`; those about a contact
 * name it by row id, so erasing the contact hides them too. The feed is the merge of both by seq,
 * read in one statement (one snapshot: no change can slip between two reads).
 *
 * Kept whole: numbering (FeedClock), the feed's statements and its port share the one ordering rule
 * above; split, each half would have to restate it.
 */
import { createHash } from 'node:crypto';
import type { Change, ChangesPort, FeedJsonPage, FeedPosition } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';
import type { Wakeups } from './wakeups.js';

export const MESSAGE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The id chatlog gives a message that brought none (or one another message of the hub has):
 * 22 characters of the SHA-256 of its source id, `attempt` making another when that one is taken.
 */
export function assignedMessageId(sourceId: string, attempt = 0): string {
  return createHash('sha256')
    .update(attempt === 0 ? sourceId : `${sourceId}\u0000${attempt}`)
    .digest('base64url')
    .slice(0, 22);
}

/** A change of a hub that does not exist, or that its write did not lock first. */
export class UnlockedHub extends Error {
  constructor(readonly hubId: string) {
    super(`hub ${hubId} does not exist or was not locked before its change`);
    this.name = 'UnlockedHub';
  }
}

/** An append a day past the floor starts a new epoch there (see schema.ts migration 6). */
export const APPEND_EPOCH_MS = 24 * 60 * 60 * 1000;
/** How far below the newest a new floor is set, for messages still on their way. */
const APPEND_EPOCH_SLACK_MS = 5 * 60 * 1000;

interface HeldHub {
  lastSeq: number;
  seqAtLock: number;
  /** The newest createdAt of the hub's messages (null: none yet). */
  maxCreatedAt: number | null;
  /**
   * At or below every createdAt appended since the last history change or epoch: set a little
   * below the newest message at the first such append (null: none yet).
   */
  appendFloor: number | null;
  appendEpoch: number;
  /** A change other than appending a message happened (history_version moves). */
  history: boolean;
  /** Something changed that finish() must write. */
  touched: boolean;
}

/**
 * The hubs one write transaction holds, the seqs it hands out, and what its changes do to the
 * answers' versions (schema.ts migration 6): a message at or after the append floor appends;
 * anything else is a change of history.
 */
export class FeedClock {
  private readonly held = new Map<string, HeldHub>();

  constructor(private readonly tx: Transaction) {}

  /**
   * Locks the hubs' rows (in id order) for the rest of the transaction, reads their positions, and
   * counts a change to each hub's data (the answer cache's version). Call it before any other write
   * to those hubs.
   */
  async lock(hubIds: Iterable<string>): Promise<void> {
    for (const hubId of lockOrder(hubIds)) {
      if (this.held.has(hubId)) continue;
      this.hold(hubId, await this.tx.get<LockedHub>(LOCK_HUB_SQL, [hubId]));
    }
  }

  /**
   * Takes what LOCK_HUB_SQL returned for a hub this transaction has just locked (an engine that
   * sends the lock its own way, with its BEGIN: postgres.fast-ingest.ts). A hub that does not exist
   * (no row): its writes fail in next(), each alone.
   */
  hold(hubId: string, row: LockedHub | undefined): void {
    if (!row || this.held.has(hubId)) return;
    this.held.set(hubId, {
      lastSeq: row.last_seq,
      seqAtLock: row.last_seq,
      maxCreatedAt: row.max_created_at,
      appendFloor: row.append_floor,
      appendEpoch: row.append_epoch,
      history: false,
      touched: false,
    });
  }

  private hub(hubId: string): HeldHub {
    const hub = this.held.get(hubId);
    if (!hub) throw new UnlockedHub(hubId);
    return hub;
  }

  /** The next seq of a locked hub. A seq undone with its savepoint leaves a gap, which is allowed. */
  next(hubId: string): number {
    const hub = this.hub(hubId);
    hub.touched = true;
    hub.lastSeq += 1;
    return hub.lastSeq;
  }

  /**
   * A message was stored. It leaves every range ending at or before the floor as it was when its
   * createdAt is at or after the floor (messages that arrive a little out of order, as concurrent
   * webhooks do, included): an append. With no floor yet (a new hub, or just after a change of
   * history), the floor is set a little below the newest message, this one included, so that the
   * next webhooks, sent at once and stored in any order, are appends too. Once the newest is a day
   * past the floor, a new epoch moves the floor up to a little before it. A floor lower than it
   * could be is always safe: it only keeps fewer ranges stable.
   *
   * A message older than the floor starts a new epoch with the floor at its createdAt: every range
   * changes once (as at a change of history), and the messages that follow it, at its time or later,
   * are appends again. Raising the floor back above it would make every later message at that time a
   * change of its own: a hub whose newest stored message is later than the webhooks now arriving (an
   * import dated ahead, a clock ahead) would have changed every range at every webhook, and its
   * cached answers with them.
   */
  stored(hubId: string, createdAt: number): void {
    const hub = this.hub(hubId);
    hub.touched = true;
    const floor =
      hub.appendFloor ?? Math.max(hub.maxCreatedAt ?? createdAt, createdAt) - APPEND_EPOCH_SLACK_MS;
    hub.maxCreatedAt = hub.maxCreatedAt === null ? createdAt : Math.max(hub.maxCreatedAt, createdAt);
    if (createdAt < floor) {
      hub.appendEpoch += 1;
      hub.appendFloor = createdAt;
    } else if (hub.appendFloor === null) hub.appendFloor = floor;
    else if (createdAt - hub.appendFloor > APPEND_EPOCH_MS) {
      hub.appendEpoch += 1;
      hub.appendFloor = createdAt - APPEND_EPOCH_SLACK_MS;
    }
  }

  /** A change other than an appended message: every answer of the hub may differ. */
  changedHistory(hubId: string): void {
    const hub = this.hub(hubId);
    hub.touched = true;
    hub.history = true;
    hub.appendFloor = null;
  }

  /** Writes the hubs' new positions and versions; resolves to the hubs whose feed grew. */
  async finish(): Promise<string[]> {
    const { updates, grown } = this.finishing();
    for (const params of updates) await this.tx.run(FINISH_HUB_SQL, params);
    return grown;
  }

  /**
   * What finish() writes, for an engine that sends it its own way: FINISH_HUB_SQL's parameters for
   * each hub that changed, and the hubs whose feed grew.
   */
  finishing(): { updates: FinishValues[]; grown: string[] } {
    const updates: FinishValues[] = [];
    const grown: string[] = [];
    for (const [hubId, hub] of this.held) {
      if (!hub.touched) continue;
      updates.push([
        hub.lastSeq,
        hub.maxCreatedAt,
        hub.appendFloor,
        hub.appendEpoch,
        hub.history ? 1 : 0,
        hubId,
      ]);
      if (hub.lastSeq !== hub.seqAtLock) grown.push(hubId);
    }
    return { updates, grown };
  }
}

/** What locking a hub reads (FeedClock.lock). */
export interface LockedHub {
  last_seq: number;
  max_created_at: number | null;
  append_floor: number | null;
  append_epoch: number;
}

/** The order in which a write locks its hubs: by id, so that two writers never lock crosswise. */
export const lockOrder = (hubIds: Iterable<string>): string[] => [...new Set(hubIds)].sort();

/** Locks a hub's row (FeedClock.lock), counting a change to its data; returns a LockedHub. */
export const LOCK_HUB_SQL = `UPDATE hubs SET data_version = data_version + 1 WHERE id = ?
  RETURNING last_seq, max_created_at, append_floor, append_epoch`;

/** FINISH_HUB_SQL's values: last_seq, max_created_at, append_floor, append_epoch, history step, hub. */
type FinishValues = [number, number | null, number | null, number, 0 | 1, string];

/** Writes a hub's position and versions at the end of a write (FeedClock.finishing's parameters). */
export const FINISH_HUB_SQL = `UPDATE hubs SET last_seq = ?, max_created_at = ?, append_floor = ?, append_epoch = ?,
  history_version = history_version + ? WHERE id = ?`;

export type LoggedChange =
  | { type: 'message.deleted'; contactId: number; messageId: string; reason: 'unsend' }
  | { type: 'contact.updated'; contactId: number }
  | { type: 'contact.erased'; lineId: string }
  | { type: 'retention.applied'; before: number };

/** Appends a change other than message.created (which is the message row itself). */
export async function logChange(
  tx: Transaction,
  clock: FeedClock,
  hubId: string,
  at: number,
  change: LoggedChange,
): Promise<void> {
  clock.changedHistory(hubId);
  await tx.run(
    `INSERT INTO changes (hub_id, seq, type, at, contact_id, line_id, message_id, reason, before_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      hubId,
      clock.next(hubId),
      change.type,
      at,
      'contactId' in change ? change.contactId : null,
      'lineId' in change ? change.lineId : null,
      'messageId' in change ? change.messageId : null,
      'reason' in change ? change.reason : null,
      'before' in change ? change.before : null,
    ],
  );
}

export async function feedPosition(sql: Sql, hubId: string): Promise<FeedPosition | undefined> {
  const row = await sql.get<{ last_seq: number; changes_dropped_through: number; history_version: number }>(
    'SELECT last_seq, changes_dropped_through, history_version FROM hubs WHERE id = ?',
    [hubId],
  );
  return (
    row && {
      lastSeq: row.last_seq,
      droppedThrough: row.changes_dropped_through,
      historyVersion: row.history_version,
    }
  );
}

export type FeedTuple = [
  seq: number,
  type: string,
  at: number,
  id: string | null,
  lineId: string | null,
  vid: string | null,
  name: string | null,
  sender: string | null,
  msg: string | null,
  contentType: string | null,
  createdAt: number | null,
  line: string | null,
  reason: string | null,
];

/** The select lists of FEED_SQL's two sources, for other reads of the same rows. */
const CREATED_COLUMNS = `m.seq, 'message.created' AS type, m.changed_at AS at, m.public_id AS id, c.line_id, c.vid, c.name,
  COALESCE(m.sender, NULLIF(c.name, ''), 'User') AS sender, m.msg, m.content_type, m.created_at, m.line_json, NULL AS reason`;
const OTHER_COLUMNS = `ch.seq, ch.type, ch.at, ch.message_id, COALESCE(c.line_id, ch.line_id), c.vid, c.name,
  NULL, NULL, NULL, ch.before_at, NULL, ch.reason`;

/** A change this version serves (a newer version's, read by an older one after a downgrade, is not). */
const KNOWN_TYPE = `ch.type IN ('message.deleted', 'contact.updated', 'contact.erased', 'retention.applied')`;

/**
 * The changes after `afterSeq`, at most `limit`, in seq order: both sources limited alone, then
 * merged, in one statement. A change about a contact that is gone (erased) is not served.
 */
export const FEED_SQL = `
  SELECT * FROM (
    SELECT ${CREATED_COLUMNS}
    FROM messages AS m JOIN contacts AS c ON c.id = m.contact_id
    WHERE m.hub_id = ? AND m.seq > ?
    ORDER BY m.seq LIMIT ?) AS created
  UNION ALL
  SELECT * FROM (
    SELECT ${OTHER_COLUMNS}
    FROM changes AS ch LEFT JOIN contacts AS c ON c.id = ch.contact_id
    WHERE ch.hub_id = ? AND ch.seq > ? AND ${KNOWN_TYPE} AND (ch.contact_id IS NULL OR c.id IS NOT NULL)
    ORDER BY ch.seq LIMIT ?) AS other
  ORDER BY seq LIMIT ?`;

/** FEED_SQL's two halves alone, each read in seq order by its index (SQLite merges them in code). */
export const CREATED_SQL = `
  SELECT ${CREATED_COLUMNS}
  FROM messages AS m JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = ? AND m.seq > ?
  ORDER BY m.seq LIMIT ?`;
export const OTHER_SQL = `
  SELECT ${OTHER_COLUMNS}
  FROM changes AS ch LEFT JOIN contacts AS c ON c.id = ch.contact_id
  WHERE ch.hub_id = ? AND ch.seq > ? AND ch.seq <= ? AND ${KNOWN_TYPE}
    AND (ch.contact_id IS NULL OR c.id IS NOT NULL)
  ORDER BY ch.seq LIMIT ?`;

/**
 * How an engine writes a JSON string and a time in SQL (SQLite's: sqlite.feed.ts; PostgreSQL
 * writes the JSON from COPY's bytes, postgres.feed.ts): `quote` as JSON.stringify writes the text,
 * `time` as formatTimestamp writes the epoch milliseconds, quotes included.
 */
export interface JsonDialect {
  quote(text: string): string;
  time(epochMs: string): string;
}

/**
 * The feed's changes as its JSON, made by the database: per row the change's object, byte for byte
 * what modules/changes/changes.serializer.ts writes (test/store/feed-json.test.ts). A page is then
 * one value (the engine joins the rows), not a JavaScript value per column and row to be taken
 * apart and encoded again: SQLite reads the 2,000,000-message hub's feed at about 3.5 µs a change
 * where rows and the serializer took 8-10 (bench/results/2026-11-27-issue-16-feed-json.md).
 */
export function feedJsonSql(d: JsonDialect): { created: string; other: string } {
  const q = d.quote;
  const head = (seq: string, type: string, at: string) =>
    `'{"seq":"' || ${seq} || '","type":"' || ${type} || '","at":' || ${d.time(at)}`;
  const lineId = q(`COALESCE(c.line_id, ch.line_id, '')`);
  const created = `${head('m.seq', `'message.created'`, 'm.changed_at')}
    || ',"id":' || ${q(`COALESCE(m.public_id, '')`)} || ',"lineId":' || ${q('c.line_id')}
    || ',"vid":' || ${q('c.vid')} || ',"name":' || ${q('c.name')}
    || ',"message":{"sender":' || ${q(`COALESCE(m.sender, NULLIF(c.name, ''), 'User')`)}
    || ',"msg":' || ${q('m.msg')} || ',"contentType":' || ${q('m.content_type')}
    || ',"createdAt":' || ${d.time('m.created_at')} || '}'
    || COALESCE(',"line":' || m.line_json, '') || '}'`;
  // Only the types KNOWN_TYPE lets through.
  const other = `${head('ch.seq', 'ch.type', 'ch.at')} || CASE ch.type
      WHEN 'message.deleted' THEN ',"id":' || ${q(`COALESCE(ch.message_id, '')`)} || ',"lineId":' || ${lineId}
        || ',"reason":' || ${q(`COALESCE(ch.reason, 'unsend')`)} || '}'
      WHEN 'contact.updated' THEN ',"lineId":' || ${lineId} || ',"vid":' || ${q(`COALESCE(c.vid, '')`)}
        || ',"name":' || ${q(`COALESCE(c.name, '')`)} || '}'
      WHEN 'contact.erased' THEN ',"lineId":' || ${lineId} || '}'
      ELSE ',"before":' || ${d.time('COALESCE(ch.before_at, 0)')} || '}'
    END`;
  return { created, other };
}

/**
 * The created half's rows with seq in (after, before), at most `limit`, as one value: how many, the
 * last seq, and their JSON joined by commas in seq order (`aggregate` names the engine's function).
 */
export function createdJsonRunSql(d: JsonDialect, aggregate: (json: string) => string): string {
  return `
    SELECT count(*), max(seq), ${aggregate('json')} FROM (
      SELECT m.seq AS seq, ${feedJsonSql(d).created} AS json
      FROM messages AS m JOIN contacts AS c ON c.id = m.contact_id
      WHERE m.hub_id = ? AND m.seq > ? AND m.seq < ?
      ORDER BY m.seq LIMIT ?) AS run`;
}

/** OTHER_SQL's rows as [seq, json] (feedJsonSql). */
export function otherJsonSql(d: JsonDialect): string {
  return OTHER_SQL.replace(OTHER_COLUMNS, `ch.seq, ${feedJsonSql(d).other}`);
}

/** Whether the hub has a stored message after a seq. */
export const CREATED_AFTER_SQL = 'SELECT EXISTS (SELECT 1 FROM messages WHERE hub_id = ? AND seq > ?)';
/** Whether the hub has another change the feed serves after a seq (OTHER_SQL's rows). */
export const OTHER_AFTER_SQL = `
  SELECT EXISTS (
    SELECT 1 FROM changes AS ch LEFT JOIN contacts AS c ON c.id = ch.contact_id
    WHERE ch.hub_id = ? AND ch.seq > ? AND ${KNOWN_TYPE} AND (ch.contact_id IS NULL OR c.id IS NOT NULL))`;

/** The first `limit` changes of the two halves' rows (each in seq order), merged by seq. */
export function mergeFeed(created: FeedTuple[], other: FeedTuple[], limit: number): Change[] {
  const changes: Change[] = [];
  let i = 0;
  let j = 0;
  while (changes.length < limit && (i < created.length || j < other.length)) {
    const a = created[i];
    const b = other[j];
    const takeCreated = b === undefined || (a !== undefined && a[0] < b[0]);
    const row = takeCreated ? a : b;
    if (takeCreated) i += 1;
    else j += 1;
    const change = row && toChange(row);
    if (change) changes.push(change);
  }
  return changes;
}

export const feedParams = (hubId: string, afterSeq: number, limit: number) => [
  hubId,
  afterSeq,
  limit,
  hubId,
  afterSeq,
  limit,
  limit,
];

/** The change a row of FEED_SQL is; undefined for a type this version does not know. */
export function toChange(row: FeedTuple): Change | undefined {
  const [seq, type, at, id, lineId, vid, name, sender, msg, contentType, createdAt, line, reason] = row;
  switch (type) {
    case 'message.created':
      return {
        seq,
        type,
        at,
        id: id ?? '',
        lineId: lineId ?? '',
        vid: vid ?? '',
        name: name ?? '',
        message: {
          sender: sender ?? '',
          msg: msg ?? '',
          contentType: contentType ?? '',
          createdAt: createdAt ?? 0,
        },
        line,
      };
    case 'message.deleted':
      return { seq, type, at, id: id ?? '', lineId: lineId ?? '', reason: reason ?? 'unsend' };
    case 'contact.updated':
      return { seq, type, at, lineId: lineId ?? '', vid: vid ?? '', name: name ?? '' };
    case 'contact.erased':
      return { seq, type, at, lineId: lineId ?? '' };
    case 'retention.applied':
      return { seq, type, at, before: createdAt ?? 0 };
    default:
      return undefined;
  }
}

/**
 * The lowest and highest of these seqs, for `seq BETWEEN ? AND ?` beside `seq IN (...)`. With
 * statistics taken before an endpoint (or a hub) had rows, PostgreSQL expects one row for its key
 * and reads every row of it, filtering by the list (3-20 ms behind 20,000); a range is always an
 * index condition.
 */
export function seqRange(seqs: readonly number[]): [number, number] {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const seq of seqs) {
    if (seq < low) low = seq;
    if (seq > high) high = seq;
  }
  return [low, high];
}

/** The changes of these seqs still served, in seq order (what an outgoing webhook sends). */
export async function readChangesAt(sql: Sql, hubId: string, seqs: readonly number[]): Promise<Change[]> {
  if (seqs.length === 0) return [];
  const list = seqs.map(() => '?').join(', ');
  // The range beside the list: an index condition whatever the statistics say (seqRange).
  const range = seqRange(seqs);
  const rows = await sql.all<Record<string, unknown>>(
    `SELECT ${CREATED_COLUMNS} FROM messages AS m JOIN contacts AS c ON c.id = m.contact_id
     WHERE m.hub_id = ? AND m.seq BETWEEN ? AND ? AND m.seq IN (${list})
     UNION ALL
     SELECT ${OTHER_COLUMNS} FROM changes AS ch LEFT JOIN contacts AS c ON c.id = ch.contact_id
     WHERE ch.hub_id = ? AND ch.seq BETWEEN ? AND ? AND ch.seq IN (${list}) AND (ch.contact_id IS NULL OR c.id IS NOT NULL)
     ORDER BY 1`,
    [hubId, ...range, ...seqs, hubId, ...range, ...seqs],
  );
  return rows.flatMap((row) => toChange(Object.values(row) as FeedTuple) ?? []);
}

/** The seq and type of the changes after `afterSeq` (at most `limit`): what a dispatcher needs. */
export function changeTypesAfter(
  sql: Sql,
  hubId: string,
  afterSeq: number,
  limit: number,
): Promise<Array<{ seq: number; type: string }>> {
  return sql.all(
    `SELECT * FROM (
       SELECT seq, 'message.created' AS type FROM messages WHERE hub_id = ? AND seq > ? ORDER BY seq LIMIT ?) AS created
     UNION ALL
     SELECT * FROM (SELECT seq, type FROM changes WHERE hub_id = ? AND seq > ? ORDER BY seq LIMIT ?) AS other
     ORDER BY seq LIMIT ?`,
    [hubId, afterSeq, limit, hubId, afterSeq, limit, limit],
  );
}

/** One page of the feed through the executor (PostgreSQL; SQLite reads it on a reader of its own). */
export async function readFeed(sql: Sql, hubId: string, afterSeq: number, limit: number): Promise<Change[]> {
  const rows = await sql.all<Record<string, unknown>>(FEED_SQL, feedParams(hubId, afterSeq, limit));
  return rows.flatMap((row) => toChange(Object.values(row) as FeedTuple) ?? []);
}

/**
 * Drops deletion and contact changes committed before `before` (CONTRACT §9's keep days), and
 * remembers per hub the highest seq dropped, so an older cursor is known to have missed some.
 */
export async function dropChangesBefore(tx: Transaction, before: number): Promise<number> {
  const hubs = await tx.all<{ hub_id: string; through: number }>(
    'SELECT hub_id, MAX(seq) AS through FROM changes WHERE at < ? GROUP BY hub_id',
    [before],
  );
  let dropped = 0;
  for (const { hub_id, through } of hubs) {
    await tx.run('UPDATE hubs SET changes_dropped_through = ? WHERE id = ? AND changes_dropped_through < ?', [
      through,
      hub_id,
      through,
    ]);
    dropped += await tx.run('DELETE FROM changes WHERE hub_id = ? AND seq <= ?', [hub_id, through]);
  }
  return dropped;
}

/** What the changes port takes of the engine's own: how it reads a page, and its wake-ups. */
export interface FeedEngine {
  page(hubId: string, afterSeq: number, limit: number): Promise<Change[]>;
  pageJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage>;
  /** Where this node hears of the changes committed on every node (read when first used). */
  wakeups(): Wakeups;
}

/** The changes port (store.ts): the change feed (CONTRACT §9) and its long polls. */
export function changesPort(engine: Engine, feed: FeedEngine): ChangesPort {
  return engine.port(
    'changes',
    {
      position: (hubId) => feedPosition(engine.reads, hubId),
      page: (hubId, afterSeq, limit) => feed.page(hubId, afterSeq, limit),
      pageJson: (hubId, afterSeq, limit) => feed.pageJson(hubId, afterSeq, limit),
      at: (hubId, seqs) => readChangesAt(engine.reads, hubId, seqs),
      subscribe: (hubId) => feed.wakeups().subscribe(hubId),
      onChange: (listener) => feed.wakeups().listen(listener),
      dropBefore: (before) => engine.write((tx) => dropChangesBefore(tx, before)),
    },
    ['dropBefore'],
  );
}
