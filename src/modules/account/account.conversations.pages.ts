/**
 * The account screen's conversation pages (CONTRACT §14), rendered on the server: a hub's contacts
 * with the search box and the range downloads, search results that link into their conversation,
 * and one conversation (the friend on one side, `You` on the other, day separators in the hub's
 * zone, stickers and locations as cards, kept media inline). No inline script or style.
 */
import { formatTimestamp, localDayAt } from '../../lib/calendar.js';
import { escapeHtml } from '../../lib/html.js';
import type { ContactSummary, ConversationMessage, ConversationPage, SearchHit } from '../../store/store.js';
import type { ConversationWords } from './account.conversations.i18n.js';
import { positionText, type SearchResults } from './account.conversations.js';
import { highlight } from './account.highlight.js';
import type { Language, Words } from './account.i18n.js';
import {
  breakableName,
  cellLabel,
  conversationsPath,
  page,
  signedInHeader,
  timeIn,
} from './account.pages.js';

import { type ReplyBox, replyForm } from './account.reply.pages.js';
import { formatLocalMinute } from './account.time.js';
import { type Waiting, waitingList } from './account.waiting.pages.js';

export { conversationsPath };
export const conversationPath = (hubId: string, lineId: string) =>
  `${conversationsPath(hubId)}/${encodeURIComponent(lineId)}`;
const contentPath = (hubId: string, messageId: string) =>
  `/account/hubs/${encodeURIComponent(hubId)}/content/${encodeURIComponent(messageId)}`;

const query = (params: Record<string, string | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  // As HTML: the query goes into href attributes.
  return text ? `?${escapeHtml(text)}` : '';
};

/** What every page of a hub's own (conversations, audit) is drawn with. */
export interface HubPage {
  language: Language;
  words: Words;
  cw: ConversationWords;
  email: string;
  csrfToken: string;
  hubId: string;
  timeZone: string;
  /** The hub has a LINE channel access token: its media are downloaded (else they wait for one). */
  downloadsMedia: boolean;
  /** A download asked with days that cannot be read: the form again, with what was typed and why. */
  download?: DownloadProblem | undefined;
}

export interface DownloadProblem {
  from: string;
  to: string;
  /** Which day is wrong ('both': the range is reversed). */
  field: 'from' | 'to' | 'both';
  message: string;
}

/** A contact as the pages name it: its name, or its LINE user id while the name is unknown. */
export const contactName = (contact: { name: string; lineId: string }) => contact.name || contact.lineId;

/**
 * A link to the contact's conversation named by `html`. A LINE event may come without its user's id
 * (LINE's schema allows it): its messages are kept, under a contact with no LINE id, which has no
 * page of its own (its messages are in the hub's downloads and answers): its name, without a link.
 */
function contactLink(common: HubPage, contact: { name: string; lineId: string }, suffix = ''): string {
  const name = contactName(contact);
  if (contact.lineId === '')
    return `<span class="no-line-id">${escapeHtml(name || common.cw.noLineId)}</span>`;
  return `<a href="${conversationPath(common.hubId, contact.lineId)}${suffix}">${escapeHtml(name)}</a>`;
}

function searchForm(common: HubPage, q: string, invalid: boolean): string {
  const { cw, hubId } = common;
  return `<form role="search" method="get" action="${conversationsPath(hubId)}" class="search">
<label for="q">${escapeHtml(cw.searchMessages)}</label>
<div class="search-row">
<input id="q" name="q" type="search" maxlength="1100" value="${escapeHtml(q)}" aria-describedby="${invalid ? 'q-error ' : ''}q-hint"${invalid ? ' aria-invalid="true"' : ''}>
<button type="submit" class="primary">${escapeHtml(cw.search)}</button>
</div>
${invalid ? `<p class="error" id="q-error" role="alert">${escapeHtml(cw.badQuery)}</p>\n` : ''}<p class="hint" id="q-hint">${escapeHtml(cw.searchHint)}</p>
</form>`;
}

/** The range download (the hub's, or one contact's): two days of the hub's zone and a button per format. */
function downloadForm(common: HubPage, base: string, title: string): string {
  const { cw, download } = common;
  const day = (name: 'from' | 'to') => {
    const invalid = download !== undefined && (download.field === name || download.field === 'both');
    const value = download ? ` value="${escapeHtml(download[name])}"` : '';
    // The first wrong day takes the focus: the form may be far down a long page.
    const focus = invalid && (name === 'from' || download.field === 'to') ? ' autofocus' : '';
    return `<div class="field"><label for="${name}">${escapeHtml(cw[name])}</label><input id="${name}" name="${name}" type="date" min="0001-01-01" max="9999-12-31"${value} aria-describedby="${invalid ? 'download-error ' : ''}download-hint"${invalid ? ' aria-invalid="true"' : ''}${focus}></div>`;
  };
  const error = download
    ? `<p class="error" id="download-error" role="alert">${escapeHtml(download.message)}</p>\n`
    : '';
  return `<section class="download" aria-labelledby="download-title">
<h2 id="download-title">${escapeHtml(title)}</h2>
<form method="get" action="${base}.csv">
<div class="days">
${day('from')}
${day('to')}
</div>
${error}<p class="hint" id="download-hint">${escapeHtml(cw.downloadHint)} <code class="zone">${breakableName(common.timeZone)}</code></p>
<div class="download-buttons">
<button type="submit">${escapeHtml(cw.downloadCsv)}</button>
<button type="submit" formaction="${base}.json">${escapeHtml(cw.downloadJson)}</button>
</div>
</form>
</section>`;
}

function contactsTable(common: HubPage, contacts: ContactSummary[]): string {
  const { cw, hubId, timeZone } = common;
  const inZone = `<span class="in-zone">${breakableName(cw.inZone(timeZone))}</span>`;
  const columns = {
    contact: escapeHtml(cw.colContact),
    lineId: escapeHtml(cw.colLineId),
    vid: escapeHtml(cw.colVid),
    last: `${escapeHtml(cw.colLastMessage)}${inZone}`,
    count: escapeHtml(cw.colMessages),
  };
  const header = Object.entries(columns)
    .map(([name, html]) => `<th role="columnheader" scope="col" class="col-${name}">${html}</th>`)
    .join('');
  const rows = contacts
    .map(
      (contact) => `<tr role="row">
<th role="rowheader" scope="row">${contactLink(common, contact)}</th>
<td role="cell">${cellLabel(columns.lineId)}<code class="line-id">${escapeHtml(contact.lineId)}</code></td>
<td role="cell">${cellLabel(columns.vid)}<span>${contact.vid ? escapeHtml(contact.vid) : `<span class="muted">${escapeHtml(cw.notLinked)}</span>`}</span></td>
<td role="cell">${cellLabel(columns.last)}${contact.lastMessageAt === null ? `<span class="muted">${escapeHtml(cw.noMessage)}</span>` : timeIn(contact.lastMessageAt, timeZone)}</td>
<td role="cell" class="count">${cellLabel(columns.count)}<span>${contact.messageCount.toLocaleString(common.language)}</span></td>
</tr>`,
    )
    .join('\n');
  return `<div class="table-wrap">
<table class="keys contacts" role="table">
<caption>${escapeHtml(cw.contactsOf(hubId))}</caption>
<thead role="rowgroup"><tr role="row">${header}</tr></thead>
<tbody role="rowgroup">
${rows}
</tbody>
</table>
</div>`;
}

function resultsList(common: HubPage, q: string, results: SearchResults, before: string | undefined): string {
  const { cw, hubId, timeZone } = common;
  const item = (hit: SearchHit) => {
    const link = contactLink(common, hit, `${query({ at: hit.id, q })}#m-${encodeURIComponent(hit.id)}`);
    return `<li class="result">
<p class="meta">${link} ${timeIn(hit.message.createdAt, timeZone)} <span class="sender">${escapeHtml(hit.message.sender === 'You' ? cw.you : hit.message.sender)}</span></p>
<p class="text">${highlight(hit.message.msg, results.terms)}</p>
</li>`;
  };
  const more = [
    before ? `<a href="${conversationsPath(hubId)}${query({ q })}">${escapeHtml(cw.newestResults)}</a>` : '',
    results.next
      ? `<a href="${conversationsPath(hubId)}${query({ q, before: positionText(results.next) })}" rel="next">${escapeHtml(cw.olderResults)}</a>`
      : '',
  ].filter(Boolean);
  return `<section class="results" aria-labelledby="results-title">
<h2 id="results-title">${escapeHtml(cw.resultsFor(q))}</h2>
${results.hits.length === 0 ? `<p role="status">${escapeHtml(cw.noResults)}</p>` : `<ol class="results">\n${results.hits.map(item).join('\n')}\n</ol>`}
${more.length ? `<nav class="pages" aria-label="${escapeHtml(cw.resultsFor(q))}">${more.join(' ')}</nav>` : ''}
<p><a href="${conversationsPath(hubId)}">${escapeHtml(cw.clearSearch)}</a></p>
</section>`;
}

export interface ConversationsPageArgs extends HubPage {
  contacts: ContactSummary[];
  /** The friends waiting for an answer now (on the first page of contacts only). */
  waiting?: Waiting | undefined;
  /** The next page of contacts, when there is one. */
  nextContacts: string | undefined;
  /** Whether this is a later page of contacts (a link back to the first). */
  laterPage: boolean;
  /** The search asked: q, its results (undefined when q is not a valid query), its page. */
  search?: { q: string; results: SearchResults | undefined; before: string | undefined } | undefined;
  notice?: string | undefined;
}

export function conversationsPage(args: ConversationsPageArgs): string {
  const { words, cw, hubId } = args;
  const notice = args.notice ? `<p class="notice" role="status">${escapeHtml(args.notice)}</p>\n` : '';
  const search = args.search;
  let body: string;
  if (search?.results) body = resultsList(args, search.q, search.results, search.before);
  else if (args.contacts.length === 0) body = `<p>${escapeHtml(cw.noContacts)}</p>`;
  else {
    const pages = [
      args.laterPage ? `<a href="${conversationsPath(hubId)}">${escapeHtml(cw.firstContacts)}</a>` : '',
      args.nextContacts
        ? `<a href="${conversationsPath(hubId)}${query({ after: args.nextContacts })}" rel="next">${escapeHtml(cw.moreContacts)}</a>`
        : '',
    ].filter(Boolean);
    body = `${args.waiting ? waitingList(args, args.waiting, (w) => contactLink(args, w)) : ''}
${contactsTable(args, args.contacts)}
${pages.length ? `<nav class="pages" aria-label="${escapeHtml(cw.contactsOf(hubId))}">${pages.join(' ')}</nav>` : ''}`;
  }
  return page({
    language: args.language,
    words,
    title: args.cw.conversationsTitle(hubId),
    csrfToken: args.csrfToken,
    path: conversationsPath(hubId),
    header: signedInHeader(words, args.email, args.csrfToken),
    body: `<p><a href="/account">${escapeHtml(cw.backToKeys)}</a></p>
<h1>${escapeHtml(cw.conversationsOf(hubId))}</h1>
${notice}${searchForm(args, search?.q ?? '', search !== undefined && search.results === undefined)}
${body}
${downloadForm(args, `/account/hubs/${encodeURIComponent(hubId)}/messages`, cw.download)}`,
  });
}

/** What a non-text message's `msg` says (CONTRACT §3): its lines after the kind, `ID: ` lines apart. */
function detailLines(msg: string): { id: string | undefined; lines: string[] } {
  const [, ...rest] = msg.split('\n');
  let id: string | undefined;
  const lines: string[] = [];
  for (const line of rest) {
    if (id === undefined && line.startsWith('ID: ')) id = line.slice(4);
    else lines.push(line);
  }
  return { id, lines };
}

const COORDINATES = /^(-?\d{1,3}(?:\.\d+)?),(-?\d{1,3}(?:\.\d+)?)$/;

function card(kind: string, inner: string, extraClass = ''): string {
  return `<div class="card ${extraClass}"><span class="kind">${escapeHtml(kind)}</span>${inner}</div>`;
}

function messageBody(
  common: HubPage,
  m: ConversationMessage,
  terms: readonly string[],
  friend: string,
): string {
  const { cw, hubId } = common;
  const kind = cw.kinds[m.contentType];
  if (m.contentType === 'text' || kind === undefined) return `<p class="text">${highlight(m.msg, terms)}</p>`;
  const { id, lines } = detailLines(m.msg);
  if (m.contentType === 'sticker') {
    return card(kind, id ? ` <span class="detail">ID ${escapeHtml(id)}</span>` : '', 'sticker');
  }
  if (m.contentType === 'location') {
    const last = lines.at(-1) ?? '';
    const coordinates = COORDINATES.exec(last);
    const text = (coordinates ? lines.slice(0, -1) : lines).filter((line) => line !== '');
    const map = coordinates
      ? `<a href="https://www.openstreetmap.org/?mlat=${coordinates[1]}&amp;mlon=${coordinates[2]}#map=17/${coordinates[1]}/${coordinates[2]}" rel="noopener noreferrer">${escapeHtml(cw.openMap)}</a> <span class="detail">${escapeHtml(last)}</span>`
      : '';
    return card(
      kind,
      `${text.map((line) => `<span class="line">${highlight(line, terms)}</span>`).join('')}${map ? `<span class="line">${map}</span>` : ''}`,
      'location',
    );
  }
  // Image, video, audio, file: the kept bytes when there are some.
  const fileName = m.content?.fileName ?? lines.find((line) => line.startsWith('Name: '))?.slice(6);
  const src = contentPath(hubId, m.id);
  if (m.content?.state === 'done') {
    if (m.contentType === 'image') {
      return `<a class="media" href="${src}"><img src="${src}" alt="${escapeHtml(cw.openImage(friend))}" loading="lazy" decoding="async"></a>`;
    }
    if (m.contentType === 'video')
      return `<video class="media" controls preload="none" src="${src}"></video>`;
    if (m.contentType === 'audio')
      return `<audio class="media" controls preload="none" src="${src}"></audio>`;
    return card(kind, ` <a href="${src}" download>${highlight(fileName ?? m.id, terms)}</a>`, 'file');
  }
  // What the content endpoint would answer (CONTRACT §11), in the page's words.
  const state =
    m.content === null
      ? cw.notKept
      : m.content.state !== 'pending'
        ? cw.unavailable
        : common.downloadsMedia
          ? cw.pending
          : cw.noToken(hubId);
  const name = fileName ? ` <span class="line">${highlight(fileName, terms)}</span>` : '';
  return card(kind, `${name} <span class="detail">${escapeHtml(state)}</span>`, m.contentType);
}

/** A day separator's words: the day in the hub's zone, written in the page's language. */
function dayHeading(language: Language, epochMs: number, timeZone: string): { iso: string; text: string } {
  const day = localDayAt(epochMs, timeZone);
  const iso = `${String(day.year).padStart(4, '0')}-${String(day.month).padStart(2, '0')}-${String(day.day).padStart(2, '0')}`;
  // The day as a UTC date (setUTCFullYear: Date.UTC would read years below 100 as 19xx).
  const date = new Date(0);
  date.setUTCFullYear(day.year, day.month - 1, day.day);
  // Japanese as it is usually written, 2026年11月28日(土); English in full, Saturday, 28 November 2026.
  const text = new Intl.DateTimeFormat(
    language === 'ja' ? 'ja-JP' : 'en-GB',
    language === 'ja'
      ? { timeZone: 'UTC', year: 'numeric', month: 'long', day: 'numeric', weekday: 'short' }
      : { timeZone: 'UTC', dateStyle: 'full' },
  ).format(date);
  return { iso, text };
}

export interface ConversationPageArgs extends HubPage {
  page: ConversationPage;
  /** The normalised terms to mark, and the query they came from (kept in the page's links). */
  terms: string[];
  q: string;
  /** The message asked for (a search result), when the page is around it. */
  target: string | undefined;
  notice?: string | undefined;
  /** The reply box (CONTRACT §16): shown when the hub has a LINE channel access token. */
  reply?: ReplyBox | undefined;
}

export function conversationPage(args: ConversationPageArgs): string {
  const { words, cw, hubId, timeZone, page: conversation, terms, q } = args;
  const contact = conversation.contact;
  const name = contactName(contact);
  const path = conversationPath(hubId, contact.lineId);
  const notice = args.notice ? `<p class="notice" role="status">${escapeHtml(args.notice)}</p>\n` : '';
  const first = conversation.messages[0];
  const last = conversation.messages.at(-1);
  const older =
    conversation.hasOlder && first
      ? `<a href="${path}${query({ before: positionText(first), q })}">${escapeHtml(cw.olderMessages)}</a>`
      : '';
  const newer =
    conversation.hasNewer && last
      ? `<a href="${path}${query({ after: positionText(last), q })}">${escapeHtml(cw.newerMessages)}</a> <a href="${path}${query({ q })}">${escapeHtml(cw.newestMessages)}</a>`
      : '';
  // Messages grouped by their day in the hub's zone, each day under its heading.
  const days: string[] = [];
  let dayKey = '';
  let items: string[] = [];
  const flush = (heading: { iso: string; text: string }) => {
    days.push(`<section class="day" aria-labelledby="day-${heading.iso}">
<h2 class="day" id="day-${heading.iso}"><time datetime="${heading.iso}">${escapeHtml(heading.text)}</time></h2>
<ol class="messages">
${items.join('\n')}
</ol>
</section>`);
    items = [];
  };
  let heading: { iso: string; text: string } | undefined;
  for (const m of conversation.messages) {
    const key = formatLocalMinute(m.createdAt, timeZone).slice(0, 10);
    if (key !== dayKey) {
      if (heading) flush(heading);
      heading = dayHeading(args.language, m.createdAt, timeZone);
      dayKey = key;
    }
    const mine = m.sender === 'You';
    const classes = ['message', mine ? 'you' : 'friend', m.id === args.target ? 'target' : ''].filter(
      Boolean,
    );
    const clock = formatLocalMinute(m.createdAt, timeZone).slice(11);
    items.push(`<li id="m-${escapeHtml(m.id)}" class="${classes.join(' ')}"${m.id === args.target ? ' aria-current="true"' : ''}>
<p class="meta"><span class="sender">${escapeHtml(mine ? cw.you : m.sender)}</span> <time datetime="${formatTimestamp(m.createdAt)}">${clock}</time></p>
${messageBody(args, m, terms, name)}
</li>`);
  }
  if (heading) flush(heading);
  return page({
    language: args.language,
    words,
    title: `chatlog — ${name}`,
    csrfToken: args.csrfToken,
    path,
    refreshSeconds: args.reply?.send?.status === 'pending' ? 1 : undefined,
    header: signedInHeader(words, args.email, args.csrfToken),
    body: `<p><a href="${conversationsPath(hubId)}${query({ q })}">${escapeHtml(cw.backToConversations(hubId))}</a></p>
<h1>${escapeHtml(name)}</h1>
${notice}<dl class="api contact">
<dt>${escapeHtml(cw.lineIdLabel)}</dt><dd><code class="line-id">${escapeHtml(contact.lineId)}</code></dd>
<dt>${escapeHtml(cw.vidLabel)}</dt><dd>${contact.vid ? escapeHtml(contact.vid) : escapeHtml(cw.notLinked)}</dd>
<dt>${escapeHtml(cw.timeZone)}</dt><dd><code class="zone">${escapeHtml(timeZone)}</code></dd>
</dl>
<div class="contact-actions">
<form method="get" action="${path}/personal-data.zip">
<button type="submit">${escapeHtml(cw.exportPersonalData)}</button>
</form>
<form method="post" action="${path}/erase" class="revoke" data-question="${escapeHtml(cw.eraseQuestion(name))}">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrfToken)}">
<button type="submit" class="danger">${escapeHtml(cw.eraseContact)}</button>
</form>
</div>
<section class="conversation" aria-label="${escapeHtml(cw.messagesOf(name))}">
${older ? `<nav class="pages" aria-label="${escapeHtml(cw.olderMessages)}">${older}</nav>` : ''}
${days.length === 0 ? `<p>${escapeHtml(cw.noMessages)}</p>` : days.join('\n')}
${newer ? `<nav class="pages" aria-label="${escapeHtml(cw.newerMessages)}">${newer}</nav>` : ''}
</section>
${replyForm({ cw: args.cw, csrfToken: args.csrfToken, reply: args.reply }, path)}
${downloadForm(args, `${path}/messages`, cw.downloadOf(name))}
<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-explained">
<form method="dialog">
<h2 id="revoke-title"></h2>
<p id="revoke-explained">${escapeHtml(cw.eraseExplained)}</p>
<div class="buttons">
<button type="submit" value="cancel">${escapeHtml(cw.cancel)}</button>
<button type="submit" value="confirm" class="danger">${escapeHtml(cw.erase)}</button>
</div>
</form>
</dialog>`,
  });
}

/** The erasure's confirmation without JavaScript (with it, a dialog asks instead). */
export function confirmErasePage(args: HubPage & { contact: { lineId: string; name: string } }): string {
  const { words, cw } = args;
  const name = contactName(args.contact);
  const path = conversationPath(args.hubId, args.contact.lineId);
  return page({
    language: args.language,
    words,
    title: cw.eraseContact,
    csrfToken: args.csrfToken,
    body: `<h1>${escapeHtml(cw.eraseQuestion(name))}</h1>
<p>${escapeHtml(cw.eraseExplained)}</p>
<form method="post" action="${path}/erase">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrfToken)}">
<input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger">${escapeHtml(cw.erase)}</button>
<a href="${path}">${escapeHtml(cw.cancel)}</a>
</form>`,
  });
}
