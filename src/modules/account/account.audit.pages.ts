/**
 * The account screen's `Audit log` of a hub (CONTRACT §13, §14): every authorised request to the
 * hub's API, newest first, 100 to a page: time in the hub's zone, the key (its label and id, never
 * the key), endpoint, query (without apikey), status, messages, bytes and client address.
 */
import { escapeHtml } from '../../lib/html.js';
import { readableQuery } from '../../lib/http.js';
import type { AuditRecord } from '../../store/store.js';
import type { KeySummary } from '../keys/keys.usecases.js';
import type { HubPage } from './account.conversations.pages.js';
import { breakableName, cellLabel, page, signedInHeader, timeIn } from './account.pages.js';

export const auditPath = (hubId: string) => `/account/hubs/${encodeURIComponent(hubId)}/audit`;

export interface AuditPageArgs extends HubPage {
  records: Array<AuditRecord & { id: number }>;
  keys: KeySummary[];
  /** The next page's position, when there are older records. */
  older: string | undefined;
  laterPage: boolean;
}

export function auditPage(args: AuditPageArgs): string {
  const { words, cw, hubId, timeZone } = args;
  const labels = new Map(args.keys.map((key) => [key.id, key.label || words.noLabel]));
  const inZone = `<span class="in-zone">${breakableName(cw.inZone(timeZone))}</span>`;
  const columns = {
    time: `${escapeHtml(cw.colTime)}${inZone}`,
    key: escapeHtml(cw.colKey),
    endpoint: escapeHtml(cw.colEndpoint),
    query: escapeHtml(cw.colQuery),
    status: escapeHtml(cw.colStatus),
    messages: escapeHtml(cw.colMessages),
    bytes: escapeHtml(cw.colBytes),
    client: escapeHtml(cw.colClient),
  };
  const header = Object.entries(columns)
    .map(([name, html]) => `<th role="columnheader" scope="col" class="col-${name}">${html}</th>`)
    .join('');
  const number = (value: number | null) =>
    value === null ? '<span class="muted">–</span>' : escapeHtml(value.toLocaleString(args.language));
  const rows = args.records
    .map(
      (r) => `<tr role="row">
<th role="rowheader" scope="row">${cellLabel(columns.time)}${timeIn(r.at, timeZone)}</th>
<td role="cell">${cellLabel(columns.key)}<span>${escapeHtml(labels.get(r.keyId) ?? cw.unknownKey)} <code>${escapeHtml(r.keyId)}</code></span></td>
<td role="cell">${cellLabel(columns.endpoint)}<code class="line-id">${breakableName(r.endpoint)}</code></td>
<td role="cell">${cellLabel(columns.query)}<code class="line-id">${escapeHtml(readableQuery(r.query) || '–')}</code></td>
<td role="cell">${cellLabel(columns.status)}<span>${r.status}</span></td>
<td role="cell" class="count">${cellLabel(columns.messages)}${number(r.messages)}</td>
<td role="cell" class="count">${cellLabel(columns.bytes)}${number(r.bytes)}</td>
<td role="cell">${cellLabel(columns.client)}<code>${escapeHtml(r.client)}</code></td>
</tr>`,
    )
    .join('\n');
  const pages = [
    args.laterPage ? `<a href="${auditPath(hubId)}">${escapeHtml(cw.newestRecords)}</a>` : '',
    args.older
      ? `<a href="${auditPath(hubId)}?before=${escapeHtml(args.older)}" rel="next">${escapeHtml(cw.olderRecords)}</a>`
      : '',
  ].filter(Boolean);
  return page({
    language: args.language,
    words,
    title: cw.auditTitle(hubId),
    csrfToken: args.csrfToken,
    path: auditPath(hubId),
    header: signedInHeader(words, args.email, args.csrfToken),
    body: `<p><a href="/account">${escapeHtml(cw.backToKeys)}</a></p>
<h1>${escapeHtml(cw.auditOf(hubId))}</h1>
<p>${escapeHtml(cw.auditIntro)}</p>
${
  args.records.length === 0
    ? `<p>${escapeHtml(cw.noRecords)}</p>`
    : `<div class="table-wrap">
<table class="keys audit" role="table">
<caption>${escapeHtml(cw.auditOf(hubId))}</caption>
<thead role="rowgroup"><tr role="row">${header}</tr></thead>
<tbody role="rowgroup">
${rows}
</tbody>
</table>
</div>`
}
${pages.length ? `<nav class="pages" aria-label="${escapeHtml(cw.auditOf(hubId))}">${pages.join(' ')}</nav>` : ''}`,
  });
}
