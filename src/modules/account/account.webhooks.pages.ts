/**
 * The account screen's page of a hub's outgoing webhooks (CONTRACT §10, §14): its endpoints, each
 * with its recent deliveries, the "Add endpoint" form and "Remove". Like the keys page it never
 * holds a secret, but for the one answer that adds an endpoint: that page shows the new endpoint's
 * signing secret once, to be copied then. A password written into an endpoint URL is masked.
 */
import { escapeHtml } from '../../lib/html.js';
import { CHANGE_TYPES, type DeliveryRecord } from '../../store/store.js';
import type { Language, Words } from './account.i18n.js';
import { breakableName, cellLabel, page, signedInHeader, timeIn, webhooksPath } from './account.pages.js';
import type { EndpointView } from './account.webhooks.js';

/** An endpoint URL as the page shows it: a password in it (`https://user:pw@host/`) masked. */
export function displayUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password === '') return text;
    url.password = '••••';
    return decodeURI(url.href);
  } catch {
    return text;
  }
}

/**
 * A URL that may break after its slashes where it is set as plain text (the dialog's question):
 * a long one would otherwise widen the dialog past a phone's screen.
 */
const breakableText = (url: string) => url.replaceAll('/', '/\u200b');

/** The deliveries table's column names, as HTML. */
interface Columns {
  time: string;
  type: string;
  status: string;
  attempts: string;
}

function deliveryRow(words: Words, delivery: DeliveryRecord, columns: Columns, timeZone: string): string {
  // An HTTP status reads the same in both languages; otherwise what went wrong (the worker's words).
  const detail =
    delivery.state === 'skipped'
      ? ''
      : delivery.lastStatus !== null
        ? `HTTP ${delivery.lastStatus}`
        : words.deliveryError(delivery.lastError ?? '');
  const next =
    delivery.state === 'pending' && delivery.attempts > 0
      ? ` <span class="next">${escapeHtml(words.nextTry)} ${timeIn(delivery.nextAttemptAt, timeZone)}</span>`
      : '';
  const status = `<span class="state ${delivery.state}">${escapeHtml(words.deliveryStates[delivery.state])}</span>${
    detail ? `<span class="detail">${escapeHtml(words.statusDetail(detail))}</span>` : ''
  }${next}`;
  // The time names the row; on a phone's card it comes under its column's name (the zone).
  return `<tr role="row">
<th role="rowheader" scope="row">${cellLabel(columns.time)}${timeIn(delivery.updatedAt, timeZone)}</th>
<td role="cell">${cellLabel(columns.type)}<code>${escapeHtml(delivery.type)}</code></td>
<td role="cell">${cellLabel(columns.status)}<span>${status}</span></td>
<td role="cell">${cellLabel(columns.attempts)}<span>${delivery.attempts}</span></td>
</tr>`;
}

function endpointSection(
  words: Words,
  hubId: string,
  endpoint: EndpointView,
  timeZone: string,
  csrfToken: string,
): string {
  const id = `endpoint-${endpoint.id}`;
  const url = displayUrl(endpoint.url);
  const inZone = `<span class="in-zone">${breakableName(words.inZone(timeZone))}</span>`;
  const columns: Columns = {
    time: `${escapeHtml(words.colTime)}${inZone}`,
    type: escapeHtml(words.colType),
    status: escapeHtml(words.colStatus),
    attempts: escapeHtml(words.colAttempts),
  };
  const header = (Object.keys(columns) as Array<keyof Columns>)
    .map((column) => `<th role="columnheader" scope="col" class="col-${column}">${columns[column]}</th>`)
    .join('');
  const state =
    endpoint.disabledAt === null
      ? `<span class="state live">${escapeHtml(words.endpointLive)}</span>`
      : `<span class="state stopped">${escapeHtml(words.endpointDisabled)} ${timeIn(endpoint.disabledAt, timeZone)}: ${escapeHtml(words.endpointDisabledWhy)}</span>`;
  // A live endpoint with a delivery that failed and waits for its next try: it can go now.
  const failing =
    endpoint.disabledAt === null &&
    endpoint.deliveries.some((delivery) => delivery.state === 'pending' && delivery.attempts > 0);
  const retryForm = failing
    ? `<form method="post" action="${webhooksPath(hubId)}/${encodeURIComponent(endpoint.id)}/retry" class="retry">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<button type="submit">${escapeHtml(words.retryNow)}</button>
</form>
`
    : '';
  const deliveries =
    endpoint.deliveries.length === 0
      ? `<p>${escapeHtml(words.noDeliveries)}</p>`
      : `<div class="table-wrap">
<table class="keys deliveries" role="table">
<caption>${escapeHtml(words.deliveriesOf(url))}</caption>
<thead role="rowgroup"><tr role="row">${header}</tr></thead>
<tbody role="rowgroup">
${endpoint.deliveries.map((delivery) => deliveryRow(words, delivery, columns, timeZone)).join('\n')}
</tbody>
</table>
</div>`;
  return `<section class="hub endpoint" id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-url">
<h2 id="${escapeHtml(id)}-url"><code>${escapeHtml(url)}</code></h2>
<p>${escapeHtml(words.added)} ${timeIn(endpoint.createdAt, timeZone)}${breakableName(words.inZone(timeZone))} · ${escapeHtml(words.events)}: ${
    endpoint.events.length === CHANGE_TYPES.length
      ? escapeHtml(words.allEvents)
      : endpoint.events.map((type) => `<code>${escapeHtml(type)}</code>`).join(', ')
  } · ${state}</p>
${retryForm}<form method="post" action="${webhooksPath(hubId)}/${encodeURIComponent(endpoint.id)}/remove" class="revoke" data-question="${escapeHtml(words.removeQuestion(breakableText(url)))}">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<button type="submit" class="danger">${escapeHtml(words.remove)}</button>
</form>
${deliveries}
</section>`;
}

export interface WebhooksPageArgs {
  language: Language;
  words: Words;
  email: string;
  csrfToken: string;
  hubId: string;
  timeZone: string;
  endpoints: EndpointView[];
  notice?: string | undefined;
  /** The endpoint just added, with its secret: the one page that shows it. */
  added?: { url: string; secret: string } | undefined;
  /** A URL the server refused, and why: the form stays open with both. */
  refused?: { url: string; message: string } | undefined;
}

export function webhooksPage(args: WebhooksPageArgs): string {
  const { words, csrfToken, hubId } = args;
  const notice = args.notice ? `<p class="notice" role="status">${escapeHtml(args.notice)}</p>\n` : '';
  const secret = args.added
    ? `<section class="notice secret" aria-labelledby="secret-title">
<h2 id="secret-title">${escapeHtml(words.secretTitle)}: <code>${escapeHtml(displayUrl(args.added.url))}</code></h2>
<p>${escapeHtml(words.secretExplained)}${words.sentenceGap}<strong>${escapeHtml(words.secretOnce)}</strong></p>
<pre><code id="new-secret">${escapeHtml(args.added.secret)}</code></pre>
<p class="icons"><button type="button" data-action="copy-secret" aria-controls="new-secret" data-copied="${escapeHtml(words.copied)}" data-failed="${escapeHtml(words.copyFailed)}" hidden>${escapeHtml(words.copySecret)}</button>
<span class="copied" role="status" aria-live="polite"></span></p>
</section>
`
    : '';
  const refused = args.refused;
  const describedBy = refused ? 'endpoint-url-error endpoint-url-hint' : 'endpoint-url-hint';
  const form = `<p><button type="button" class="primary" data-action="issue" aria-expanded="true" aria-controls="add-endpoint">${escapeHtml(words.addEndpoint)}</button></p>
<form method="post" action="${webhooksPath(hubId)}" id="add-endpoint" class="issue"${refused ? ' data-open="true"' : ''}>
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<div class="field">
<label for="endpoint-url">${escapeHtml(words.url)}</label>
<input id="endpoint-url" name="url" type="url" inputmode="url" required maxlength="2048" autocomplete="off" spellcheck="false" placeholder="https://" aria-describedby="${describedBy}"${
    refused ? ` aria-invalid="true" value="${escapeHtml(refused.url)}"` : ''
  }>
${refused ? `<p class="error" id="endpoint-url-error" role="alert">${escapeHtml(refused.message)}</p>\n` : ''}<p class="hint" id="endpoint-url-hint">${escapeHtml(words.urlHint)}</p>
</div>
<button type="submit" class="primary">${escapeHtml(words.add)}</button>
</form>`;
  const endpoints =
    args.endpoints.length === 0
      ? `<p>${escapeHtml(words.noEndpoints)}</p>`
      : args.endpoints
          .map((endpoint) => endpointSection(words, hubId, endpoint, args.timeZone, csrfToken))
          .join('\n');
  return page({
    language: args.language,
    words,
    title: words.webhooksTitle(hubId),
    csrfToken,
    script: 'webhooks.js',
    path: webhooksPath(hubId),
    header: signedInHeader(words, args.email, csrfToken),
    body: `<p><a href="/account">${escapeHtml(words.backToKeys)}</a></p>
<h1>${escapeHtml(words.webhooksOf(hubId))}</h1>
${notice}${secret}<p>${escapeHtml(words.webhooksIntro)}</p>
${form}
${endpoints}
<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-explained">
<form method="dialog">
<h2 id="revoke-title"></h2>
<p id="revoke-explained">${escapeHtml(words.removeExplained)}</p>
<div class="buttons">
<button type="submit" value="cancel">${escapeHtml(words.cancel)}</button>
<button type="submit" value="confirm" class="danger">${escapeHtml(words.removeEndpoint)}</button>
</div>
</form>
</dialog>`,
  });
}

/** The confirmation step without JavaScript (with it, a dialog asks instead). */
export function confirmRemovePage(args: {
  language: Language;
  words: Words;
  csrfToken: string;
  hubId: string;
  endpoint: { id: string; url: string };
}): string {
  const { words } = args;
  return page({
    language: args.language,
    words,
    title: words.removeEndpoint,
    csrfToken: args.csrfToken,
    body: `<h1>${breakableName(words.removeQuestion(displayUrl(args.endpoint.url)))}</h1>
<p>${escapeHtml(words.removeExplained)}</p>
<form method="post" action="${webhooksPath(args.hubId)}/${encodeURIComponent(args.endpoint.id)}/remove">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrfToken)}">
<input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger">${escapeHtml(words.removeEndpoint)}</button>
<a href="${webhooksPath(args.hubId)}">${escapeHtml(words.cancel)}</a>
</form>`,
  });
}
