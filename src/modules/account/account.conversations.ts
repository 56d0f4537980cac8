/**
 * The account screen's conversations (CONTRACT §14), for the account's own hubs only: a hub's
 * contacts newest activity first, one contact's messages a page at a time, a search of the hub's
 * messages (§12's rule), the kept media of a message, a conversation or a range of days as rows for
 * `Download CSV` / `Download JSON`, and erasing a contact (§13). Positions in the URLs are plain
 * `<createdAt>.<rowId>` pairs: the pages are the account's own, and every read is bound to its hub.
 */
import { type CalendarDay, dayRangeInZone } from '../../lib/calendar.js';
import type { ContentStore } from '../../store/content/content-store.js';
import type {
  ContactsPage,
  ConversationPage,
  ConversationQuery,
  Hub,
  MessagePosition,
  MessageRow,
  SearchHit,
  Store,
} from '../../store/store.js';
import { eraseContact } from '../contacts/contacts.erasure.js';
import { personalDataZip } from '../contacts/contacts.export.js';
import { contactMessagePages } from '../contacts/contacts.pages.js';
import { type ServableContent, servableContent } from '../content/content.usecases.js';
import { messageRows, messagesRange } from '../messages/messages.usecases.js';
import type { ReportColumns } from '../reports/reports.columns.js';
import type { Report } from '../reports/reports.compute.js';
import { buildReport } from '../reports/reports.usecases.js';
import { termsOf } from '../search/search.usecases.js';
import type { SendService, SendView } from '../sends/sends.usecases.js';
import { accountErrors } from './account.errors.js';
import type { SignedIn } from './account.usecases.js';

/** Contacts on one page of the list. */
export const CONTACTS_PER_PAGE = 50;
/** Messages on one page of a conversation. */
export const MESSAGES_PER_PAGE = 50;
/** Search results on one page. */
export const RESULTS_PER_PAGE = 20;
/** Audit records on one page. */
export const AUDIT_PER_PAGE = 100;

const POSITION = /^(-?\d{1,16})\.(\d{1,16})$/;

/** `<createdAt>.<rowId>`: where a page ends, in a URL. */
export const positionText = (at: MessagePosition) => `${at.createdAt}.${at.rowId}`;

/** The position a URL names; undefined when it is not one (the page starts at the newest). */
export function parsePosition(text: string | undefined): MessagePosition | undefined {
  const match = text === undefined ? null : POSITION.exec(text);
  if (!match) return undefined;
  const position = { createdAt: Number(match[1]), rowId: Number(match[2]) };
  return Number.isSafeInteger(position.createdAt) && Number.isSafeInteger(position.rowId)
    ? position
    : undefined;
}

/** Where a conversation page is: around a message, before or after a position, or the newest. */
export type ConversationAt = ConversationQuery['at'];

export interface SearchResults {
  terms: string[];
  hits: SearchHit[];
  /** The position after this page's last result, when there are older ones. */
  next: MessagePosition | undefined;
}

export interface ConversationDeps {
  store: Pick<
    Store,
    'hubs' | 'messages' | 'search' | 'conversations' | 'content' | 'audit' | 'contacts' | 'reports'
  >;
  blobs: ContentStore;
  clock: () => number;
  /** Replies to LINE friends (CONTRACT §16); without it, no reply box. */
  sends?: SendService | undefined;
  /** The hubs' messages as reports count them (the API's). */
  reports: ReportColumns;
}

export class AccountConversations {
  /** Where the kept media are read from. */
  readonly blobs: ContentStore;

  constructor(private readonly deps: ConversationDeps) {
    this.blobs = deps.blobs;
  }

  /** `q` as search terms (CONTRACT §12), to mark them on a conversation; undefined when not a query. */
  termsOf(q: string): string[] | undefined {
    return termsOf(q);
  }

  /** The hub, when it is one of the account's; a hub the account does not hold is not found. */
  async hubOf(
    signedIn: SignedIn,
    hubId: string,
  ): Promise<Pick<Hub, 'id' | 'timeZone' | 'lineChannelAccessTokenEncrypted'>> {
    if (!signedIn.hubIds.includes(hubId)) throw accountErrors.hubNotFound();
    return (
      (await this.deps.store.hubs.get(hubId)) ?? {
        id: hubId,
        timeZone: 'UTC',
        lineChannelAccessTokenEncrypted: null,
      }
    );
  }

  async contacts(signedIn: SignedIn, hubId: string, after: string | undefined): Promise<ContactsPage> {
    await this.hubOf(signedIn, hubId);
    const position = parsePosition(after);
    return this.deps.store.conversations.contacts({
      hubId,
      limit: CONTACTS_PER_PAGE,
      after: position && { lastAt: position.createdAt, contactId: position.rowId },
    });
  }

  /** A page of one contact's messages; undefined when the hub has no such contact. */
  async conversation(
    signedIn: SignedIn,
    hubId: string,
    lineId: string,
    at: ConversationAt,
  ): Promise<ConversationPage | undefined> {
    await this.hubOf(signedIn, hubId);
    return this.deps.store.conversations.messages({ hubId, lineId, at, limit: MESSAGES_PER_PAGE });
  }

  /**
   * A page of the hub's messages holding every term of `q` (CONTRACT §12's rule), newest first,
   * after `before`; undefined when `q` has no term or too many or too long ones.
   */
  async search(
    signedIn: SignedIn,
    hubId: string,
    q: string,
    before: string | undefined,
  ): Promise<SearchResults | undefined> {
    await this.hubOf(signedIn, hubId);
    const terms = termsOf(q);
    if (!terms) return undefined;
    const { hits, hasMore } = await this.deps.store.search.page({
      hubId,
      terms,
      before: parsePosition(before),
      limit: RESULTS_PER_PAGE,
    });
    const last = hits.at(-1);
    return {
      terms,
      hits,
      next: hasMore && last ? { createdAt: last.message.createdAt, rowId: last.rowId } : undefined,
    };
  }

  /** A message's kept media, or the error saying why there is none (yet). */
  async content(signedIn: SignedIn, hubId: string, messageId: string): Promise<ServableContent> {
    return servableContent(this.deps, await this.hubOf(signedIn, hubId), messageId);
  }

  /**
   * One contact's messages in `from`..`to` (days of the hub's zone, either open), oldest first, as
   * the read API's rows; undefined when the hub has no such contact.
   */
  async contactRows(
    signedIn: SignedIn,
    hubId: string,
    lineId: string,
    days: { from?: CalendarDay | undefined; to?: CalendarDay | undefined },
  ): Promise<AsyncIterable<MessageRow[]> | undefined> {
    const hub = await this.hubOf(signedIn, hubId);
    const range = dayRangeInZone(days.from, days.to, hub.timeZone);
    if (!(await this.deps.store.contacts.get(hubId, lineId))) return undefined;
    const pages = contactMessagePages(this.deps.store, hubId, lineId, range);
    return (async function* () {
      for await (const { contact, messages } of pages) {
        yield messages.map((m) => ({
          contactId: 0,
          lineId: contact.lineId,
          vid: contact.vid,
          name: contact.name,
          sender: m.sender,
          msg: m.msg,
          contentType: m.contentType,
          createdAt: m.createdAt,
        }));
      }
    })();
  }

  /** The hub's messages in `from`..`to`, in the read API's order and shape. */
  async hubRows(
    signedIn: SignedIn,
    hubId: string,
    days: { from?: CalendarDay | undefined; to?: CalendarDay | undefined },
  ): Promise<AsyncIterable<MessageRow[]>> {
    const hub = await this.hubOf(signedIn, hubId);
    // As `chatlog export` and the read API read them (messages.usecases.ts).
    return messageRows(this.deps.store, messagesRange(hubId, days.from, days.to, hub.timeZone));
  }

  /** A person's data as a ZIP (CONTRACT §13), streamed; undefined when there is no such contact. */
  async personalData(signedIn: SignedIn, hubId: string, lineId: string) {
    await this.hubOf(signedIn, hubId);
    return personalDataZip(this.deps, hubId, lineId);
  }

  /** The hub's friends waiting for an answer now, the longest wait first (CONTRACT §17's waits). */
  async waiting(signedIn: SignedIn, hubId: string, limit = 20) {
    await this.hubOf(signedIn, hubId);
    return this.deps.store.reports.waiting(hubId, limit);
  }

  /** The hub's report (CONTRACT §17) of days already checked, in the hub's zone. */
  async report(signedIn: SignedIn, hubId: string, from: CalendarDay, to: CalendarDay): Promise<Report> {
    const hub = await this.hubOf(signedIn, hubId);
    return buildReport(this.deps.reports, { hubId, from, to, timeZone: hub.timeZone });
  }

  /** A page of the hub's audit log (100 records), newest first, before `before` (`<at>.<id>`). */
  async audit(signedIn: SignedIn, hubId: string, before: MessagePosition | undefined) {
    await this.hubOf(signedIn, hubId);
    const records = await this.deps.store.audit.list({
      hubId,
      before: before && { at: before.createdAt, id: before.rowId },
      limit: AUDIT_PER_PAGE + 1,
    });
    const shown = records.slice(0, AUDIT_PER_PAGE);
    const last = shown.at(-1);
    return {
      records: shown,
      older: records.length > AUDIT_PER_PAGE && last ? `${last.at}.${last.id}` : undefined,
    };
  }

  /** Erases a contact (CONTRACT §13): the messages erased, or undefined when there is no such contact. */
  /** The hub answers replies: it has a LINE channel access token, and sends are served here. */
  canReply(hub: Pick<Hub, 'lineChannelAccessTokenEncrypted'>): boolean {
    return Boolean(this.deps.sends && hub.lineChannelAccessTokenEncrypted);
  }

  /** A reply typed in the conversation, accepted as the send API accepts one (its errors too). */
  async reply(signedIn: SignedIn, hubId: string, lineId: string, text: string): Promise<SendView> {
    const hub = await this.deps.store.hubs.get(hubId);
    if (!signedIn.hubIds.includes(hubId) || !hub || !this.deps.sends) throw accountErrors.hubNotFound();
    return (await this.deps.sends.accept(hub, lineId, { messages: [{ type: 'text', text }] })).send;
  }

  /** A send of the hub, where it is now; undefined when the hub has none of that id. */
  async sendStatus(signedIn: SignedIn, hubId: string, id: string): Promise<SendView | undefined> {
    await this.hubOf(signedIn, hubId);
    return this.deps.sends?.status(hubId, id).catch(() => undefined);
  }

  async erase(signedIn: SignedIn, hubId: string, lineId: string): Promise<number | undefined> {
    await this.hubOf(signedIn, hubId);
    return eraseContact(this.deps, hubId, lineId);
  }
}
