/**
 * Each hub's messages as a report counts them (CONTRACT §17), held in memory as columns: contact,
 * time, row id, side, and the side of the contact's message before each. A report counts a slice
 * of them (./reports.compute.ts) with no read of the messages, however long the range.
 *
 * - Read whole once, a page at a time, in section 3's order (created, then id).
 * - Kept current from the store before each report: the hub's history version and last seq are
 *   read (one small query). Messages with a later seq are read and put in their places. When the
 *   history moved too (schema.ts migration 6), the feed's other changes since say what: an unsend
 *   or a changed contact reads that contact's messages again; an erasure or retention reads the
 *   hub whole (takeIn). So a report counts every write answered before it was asked, on any node.
 * - Hubs least recently reported are let go past `maxMessages` messages held in all.
 */
import type { ReportMessage, ReportPosition, ReportsPort } from '../../store/store.js';
import type { ReportInput } from './reports.compute.js';

/** Messages a page when a hub is read whole. */
const PAGE = 20_000;
/** Seqs since the columns were current past which the hub is read whole rather than taken in. */
const MAX_SEQS_TAKEN_IN = 200_000;
/** Messages stored since that go before the newest held, past which they go in one pass (merge). */
const INSERTED_ONE_AT_A_TIME = 16;
/** Bytes a message held takes (contact 4, time 8, id 8, side 1, side before 1). */
export const BYTES_A_MESSAGE = 22;

type Side = -1 | 0 | 1;

/** One hub's messages in section 3's order. */
export class HubColumns {
  count = 0;
  contact = new Int32Array(0);
  createdAt = new Float64Array(0);
  id = new Float64Array(0);
  fromAccount = new Uint8Array(0);
  previous = new Int8Array(0);
  /** Each contact's row id as a dense index, and the side of each contact's newest message. */
  private readonly dense = new Map<number, number>();
  private newest = new Int8Array(0);

  constructor(
    public history: number,
    public seq: number,
  ) {}

  get contacts(): number {
    return this.dense.size;
  }

  /** The messages created in [fromMs, toMsExclusive), for ./reports.compute.ts. */
  slice(fromMs: number, toMsExclusive: number): ReportInput {
    return {
      contact: this.contact,
      createdAt: this.createdAt,
      fromAccount: this.fromAccount,
      previous: this.previous,
      start: this.firstAtOrAfter(fromMs),
      end: this.firstAtOrAfter(toMsExclusive),
      contacts: this.contacts,
    };
  }

  /** Messages that come after every one held (a page of the whole read). */
  pushInOrder(messages: readonly ReportMessage[]): void {
    this.reserve(messages.length);
    for (const m of messages) {
      const c = this.denseOf(m.contact);
      const i = this.count++;
      this.set(i, c, m);
      this.previous[i] = this.newest[c] as Side;
      this.newest[c] = m.fromAccount ? 1 : 0;
    }
  }

  /**
   * Messages stored since, each at its place: a few that go before the newest held one at a time
   * (each moves the columns' tail), more in one pass over the columns (merge).
   */
  insertAll(messages: readonly ReportMessage[]): void {
    const last = this.count - 1;
    const lastAt = this.createdAt[last] ?? Number.NEGATIVE_INFINITY;
    const lastId = this.id[last] ?? Number.NEGATIVE_INFINITY;
    const sorted = [...messages].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
    const before = sorted.filter((m) => m.createdAt < lastAt || (m.createdAt === lastAt && m.id < lastId));
    if (before.length > INSERTED_ONE_AT_A_TIME) this.merge([], sorted);
    else for (const m of sorted) this.insert(m);
  }

  /** A message stored since: at its place in section 3's order (near the end, as appends are). */
  insert(m: ReportMessage): void {
    const at = this.firstAfter(m.createdAt, m.id);
    if (at > 0 && this.createdAt[at - 1] === m.createdAt && this.id[at - 1] === m.id) return; // held
    const c = this.denseOf(m.contact);
    const side: Side = m.fromAccount ? 1 : 0;
    // The contact's first message held: nothing of it before or after to look for.
    const first = this.newest[c] === -1;
    if (at === this.count) {
      this.pushInOrder([m]);
      return;
    }
    this.reserve(1);
    for (const column of [this.contact, this.createdAt, this.id, this.fromAccount, this.previous])
      column.copyWithin(at + 1, at, this.count);
    this.count += 1;
    this.set(at, c, m);
    this.previous[at] = first ? -1 : this.sideBefore(c, at);
    if (first) {
      this.newest[c] = side;
      return;
    }
    for (let i = at + 1; i < this.count; i++) {
      if (this.contact[i] === c) {
        this.previous[i] = side;
        return;
      }
    }
    this.newest[c] = side;
  }

  /**
   * These contacts' messages, all of them, in section 3's order, in place of those held (an unsend
   * or a renamed contact): one pass over the columns, the other contacts' messages as they were.
   */
  replaceContacts(contactIds: readonly number[], messages: readonly ReportMessage[]): void {
    this.merge(contactIds, messages);
  }

  /**
   * One pass over the columns: the messages of `dropped` contacts left out, `incoming` (in section
   * 3's order; one already held is not put in twice) put at their places, and the side before each
   * message of the contacts either touches worked out again as the pass goes.
   */
  private merge(dropped: readonly number[], incoming: readonly ReportMessage[]): void {
    const drop = new Set(dropped.map((id) => this.denseOf(id)));
    const touched = new Set(drop);
    for (const m of incoming) touched.add(this.denseOf(m.contact));
    const old = {
      count: this.count,
      contact: this.contact,
      createdAt: this.createdAt,
      id: this.id,
      fromAccount: this.fromAccount,
      previous: this.previous,
    };
    this.count = 0;
    this.contact = new Int32Array(0);
    this.createdAt = new Float64Array(0);
    this.id = new Float64Array(0);
    this.fromAccount = new Uint8Array(0);
    this.previous = new Int8Array(0);
    const size = old.count + incoming.length;
    this.reserve(size + (size >>> 4));
    for (const c of touched) this.newest[c] = -1;
    const put = (c: number, t: number, id: number, account: number, previous: number) => {
      const i = this.count++;
      this.contact[i] = c;
      this.createdAt[i] = t;
      this.id[i] = id;
      this.fromAccount[i] = account;
      if (touched.has(c)) {
        this.previous[i] = this.newest[c] as Side;
        this.newest[c] = account === 1 ? 1 : 0;
      } else this.previous[i] = previous;
    };
    // One already put (a message given twice) is not put again.
    const putNew = (m: ReportMessage) => {
      const last = this.count - 1;
      if (last >= 0 && this.createdAt[last] === m.createdAt && this.id[last] === m.id) return;
      put(this.denseOf(m.contact), m.createdAt, m.id, m.fromAccount ? 1 : 0, -1);
    };
    let j = 0;
    for (let i = 0; i < old.count; i++) {
      const c = old.contact[i] as number;
      if (drop.has(c)) continue;
      const t = old.createdAt[i] as number;
      const id = old.id[i] as number;
      for (; j < incoming.length; j++) {
        const m = incoming[j] as ReportMessage;
        if (m.createdAt > t || (m.createdAt === t && m.id >= id)) break;
        putNew(m);
      }
      // Already held: put in once.
      while (j < incoming.length && incoming[j]?.createdAt === t && incoming[j]?.id === id) j += 1;
      put(c, t, id, old.fromAccount[i] as number, old.previous[i] as number);
    }
    for (; j < incoming.length; j++) {
      const m = incoming[j] as ReportMessage;
      putNew(m);
    }
  }

  /** The side of the contact's message held before index `at` (-1: none). */
  private sideBefore(c: number, at: number): Side {
    for (let i = at - 1; i >= 0; i--) if (this.contact[i] === c) return this.fromAccount[i] === 1 ? 1 : 0;
    return -1;
  }

  /** Room held for messages, of which `count` are used (what letGo counts). */
  get capacity(): number {
    return this.createdAt.length;
  }

  private set(i: number, c: number, m: ReportMessage): void {
    this.contact[i] = c;
    this.createdAt[i] = m.createdAt;
    this.id[i] = m.id;
    this.fromAccount[i] = m.fromAccount ? 1 : 0;
  }

  private denseOf(contactId: number): number {
    let c = this.dense.get(contactId);
    if (c === undefined) {
      c = this.dense.size;
      this.dense.set(contactId, c);
      if (c >= this.newest.length) {
        const grown = new Int8Array(Math.max(64, this.newest.length * 2));
        grown.set(this.newest);
        this.newest = grown;
      }
      this.newest[c] = -1;
    }
    return c;
  }

  /** Room for `more` messages (the columns grow by half as much again). */
  reserve(more: number): void {
    const needed = this.count + more;
    if (needed <= this.createdAt.length) return;
    this.resize(Math.max(needed, Math.ceil(this.createdAt.length * 1.5), 1024));
  }

  /** Lets go of room well beyond what is held (a sixteenth is kept for what comes next). */
  trim(): void {
    const size = this.count + (this.count >>> 4) + 1024;
    if (size < this.createdAt.length) this.resize(size);
  }

  private resize(size: number): void {
    const grow = <T extends Int32Array | Float64Array | Uint8Array | Int8Array>(
      old: T,
      make: (n: number) => T,
    ): T => {
      const grown = make(size);
      grown.set(old.subarray(0, this.count) as never);
      return grown;
    };
    this.contact = grow(this.contact, (n) => new Int32Array(n));
    this.createdAt = grow(this.createdAt, (n) => new Float64Array(n));
    this.id = grow(this.id, (n) => new Float64Array(n));
    this.fromAccount = grow(this.fromAccount, (n) => new Uint8Array(n));
    this.previous = grow(this.previous, (n) => new Int8Array(n));
  }

  /** The first index whose time is at or after `at`. */
  private firstAtOrAfter(at: number): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.createdAt[mid] as number) < at) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** The first index after (createdAt, id) in section 3's order. */
  private firstAfter(createdAt: number, id: number): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const t = this.createdAt[mid] as number;
      if (t < createdAt || (t === createdAt && (this.id[mid] as number) <= id)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** The hubs' columns of one process, each kept current before it is counted. */
export class ReportColumns {
  /** Least recently reported first. */
  private readonly hubs = new Map<string, HubColumns>();
  /** Per hub: the refresh under way, and the one that starts after it (for callers that came meanwhile). */
  private readonly running = new Map<string, Promise<HubColumns | undefined>>();
  private readonly queued = new Map<string, Promise<HubColumns | undefined>>();

  constructor(
    private readonly store: { reports: ReportsPort },
    private readonly options: { maxMessages?: number } = {},
  ) {}

  /** Columns that hold at most `megabytes` of messages (CHATLOG_REPORTS_MEMORY_MB). */
  static withMemory(store: { reports: ReportsPort }, megabytes: number): ReportColumns {
    return new ReportColumns(store, { maxMessages: Math.floor((megabytes * 1024 * 1024) / BYTES_A_MESSAGE) });
  }

  /** How many messages are held, of all hubs. */
  get held(): number {
    let total = 0;
    for (const hub of this.hubs.values()) total += hub.count;
    return total;
  }

  /** Room for how many messages is held, of all hubs (what the memory limit counts). */
  private get room(): number {
    let total = 0;
    for (const hub of this.hubs.values()) total += hub.capacity;
    return total;
  }

  /**
   * The hub's columns with every write answered before this call (undefined: no such hub). A
   * refresh under way may have read the hub's position before that write: a caller then waits for
   * the next one.
   */
  of(hubId: string): Promise<HubColumns | undefined> {
    const queued = this.queued.get(hubId);
    if (queued) return queued;
    const running = this.running.get(hubId);
    const start = (): Promise<HubColumns | undefined> => {
      this.queued.delete(hubId);
      const refresh = this.refresh(hubId).finally(() => {
        if (this.running.get(hubId) === refresh) this.running.delete(hubId);
      });
      this.running.set(hubId, refresh);
      return refresh;
    };
    if (!running) return start();
    const next = running.catch(() => undefined).then(start);
    this.queued.set(hubId, next);
    return next;
  }

  private async refresh(hubId: string): Promise<HubColumns | undefined> {
    const position = await this.store.reports.position(hubId);
    if (!position) {
      this.hubs.delete(hubId);
      return undefined;
    }
    let hub = this.hubs.get(hubId);
    if (hub && !(await this.takeIn(hubId, hub, position))) hub = undefined;
    if (!hub) {
      this.hubs.delete(hubId);
      hub = await this.readWhole(hubId, position);
    }
    // The most recently reported last.
    this.hubs.delete(hubId);
    this.hubs.set(hubId, hub);
    this.letGo(hubId);
    return hub;
  }

  /**
   * What was written since the hub's columns were current, taken in; false when they must be read
   * whole again. Messages stored since are put in their places. Of the other changes, an unsend
   * and a changed contact (its name may make its messages the account's) read that contact's
   * messages again; any other (an erasure, retention), or changes the feed no longer holds, read
   * the hub whole. A change of history must leave the hub with as many messages as held: one that
   * took messages away without a change in the feed (a retention run's later batches) is caught so.
   */
  private async takeIn(hubId: string, hub: HubColumns, position: ReportPosition): Promise<boolean> {
    if (position.lastSeq < hub.seq) return false;
    const historyMoved = position.history !== hub.history;
    if (historyMoved && position.changesDroppedThrough > hub.seq) return false;
    if (position.lastSeq > hub.seq) {
      // An import of a year, say, is read whole rather than taken in a message at a time.
      if (position.lastSeq - hub.seq > MAX_SEQS_TAKEN_IN) return false;
      const appended = await this.store.reports.appended(hubId, hub.seq, position.lastSeq);
      hub.insertAll(appended);
    }
    if (historyMoved) {
      const changes = await this.store.reports.changes(hubId, hub.seq, position.lastSeq);
      // Old changes may have been dropped since the position was read (they take no hub's lock).
      const now = await this.store.reports.position(hubId);
      if (!now || now.changesDroppedThrough > hub.seq) return false;
      const contacts = new Set<number>();
      for (const change of changes) {
        if (
          (change.type !== 'message.deleted' && change.type !== 'contact.updated') ||
          change.contact === null
        )
          return false;
        contacts.add(change.contact);
      }
      if (contacts.size > 0) {
        const ids = [...contacts];
        hub.replaceContacts(ids, await this.store.reports.contactMessages(hubId, ids, position.lastSeq));
      }
      if ((await this.store.reports.count(hubId, position.lastSeq)) !== hub.count) return false;
      hub.history = position.history;
    }
    hub.seq = position.lastSeq;
    return true;
  }

  /**
   * The hub read whole, as of `position`: messages stored after it (a later seq) are left to the
   * next refresh, and so are changes after it (the next refresh takes them in, takeIn).
   */
  private async readWhole(hubId: string, position: ReportPosition): Promise<HubColumns> {
    const hub = new HubColumns(position.history, position.lastSeq);
    // Room for them at once, not grown a page at a time; others let go of first if need be.
    const count = await this.store.reports.count(hubId, position.lastSeq);
    this.letGo(hubId, count);
    hub.reserve(count);
    let after: { createdAt: number; id: number } | null = null;
    const named = await this.store.reports.namedYou(hubId);
    for (;;) {
      const page = await this.store.reports.messages(hubId, after, PAGE, named);
      hub.pushInOrder(page.filter((m) => m.seq <= position.lastSeq));
      const last = page[page.length - 1];
      if (!last || page.length < PAGE) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
    hub.trim();
    return hub;
  }

  /** Lets go of the least recently reported hubs past the limit, with room for `more` (never `keep`'s). */
  private letGo(keep: string, more = 0): void {
    const max = this.options.maxMessages;
    if (max === undefined) return;
    let total = this.room + more;
    for (const [hubId, hub] of this.hubs) {
      if (total <= max) return;
      if (hubId === keep) continue;
      this.hubs.delete(hubId);
      total -= hub.capacity;
    }
  }
}
