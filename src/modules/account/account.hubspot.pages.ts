/**
 * The account screen's HubSpot inbox page of a hub (CONTRACT §18): the connection's state (the
 * inbox, messages published and waiting, the last error), `Connect HubSpot` and `Disconnect
 * HubSpot`; and the choice of inbox after HubSpot's authorize page. No token ever reaches a page.
 */
import { escapeHtml } from '../../lib/html.js';
import type { Inbox } from '../hubspot/hubspot.api.js';
import type { HubspotStatus } from '../hubspot/hubspot.connect.js';
import type { HubspotWords } from './account.hubspot.i18n.js';
import type { Language, Words } from './account.i18n.js';
import { page, signedInHeader, timeIn } from './account.pages.js';

export const hubspotPath = (hubId: string) => `/account/hubs/${encodeURIComponent(hubId)}/hubspot`;

interface Common {
  language: Language;
  words: Words;
  hw: HubspotWords;
  email: string;
  csrfToken: string;
  hubId: string;
  timeZone: string;
}

const csrfField = (token: string) => `<input type="hidden" name="csrf" value="${escapeHtml(token)}">`;

function connectForm(args: Common): string {
  return `<form method="post" action="${hubspotPath(args.hubId)}/connect">
${csrfField(args.csrfToken)}
<button type="submit" class="primary" aria-describedby="connect-hint">${escapeHtml(args.hw.connect)}</button>
<p class="hint" id="connect-hint">${escapeHtml(args.hw.connectHint)}</p>
</form>`;
}

function stateOf(args: Common & { status: HubspotStatus }): string {
  const { hw, status, timeZone } = args;
  const connection = status.connection;
  if (!connection)
    return `<p class="state">${escapeHtml(hw.notConnected)}</p>${status.ready ? connectForm(args) : ''}`;
  if (connection.disconnectedAt !== null) {
    return `<p class="state">${escapeHtml(hw.disconnected)}</p>
<dl class="api">
<dt>${escapeHtml(hw.inbox)}</dt><dd>${escapeHtml(connection.inboxName)}</dd>
<dt>${escapeHtml(hw.disconnectedSince)}</dt><dd>${timeIn(connection.disconnectedAt, timeZone)}</dd>
</dl>
<p>${escapeHtml(hw.nothingPublished)}</p>
${status.ready ? connectForm(args) : ''}`;
  }
  const error =
    connection.lastError === null || connection.lastErrorAt === null
      ? escapeHtml(hw.none)
      : `${timeIn(connection.lastErrorAt, timeZone)} <span class="detail">${escapeHtml(connection.lastError)}</span>`;
  return `<p class="state connected" role="status">${escapeHtml(hw.connected)}</p>
<dl class="api">
<dt>${escapeHtml(hw.inbox)}</dt><dd>${escapeHtml(connection.inboxName)}</dd>
<dt>${escapeHtml(hw.portal)}</dt><dd><code>${escapeHtml(connection.portalId)}</code></dd>
<dt>${escapeHtml(hw.since)}</dt><dd>${timeIn(connection.connectedAt, timeZone)}</dd>
<dt>${escapeHtml(hw.published)}</dt><dd>${connection.published}</dd>
<dt>${escapeHtml(hw.waiting)}</dt><dd>${status.waiting}</dd>
<dt>${escapeHtml(hw.lastError)}</dt><dd>${error}</dd>
${
  connection.backfill
    ? `<dt>${escapeHtml(hw.backfill)}</dt><dd>${escapeHtml(hw.backfillOf(connection.backfill.published, connection.backfill.total, connection.backfill.done))}</dd>`
    : ''
}
</dl>
<form method="post" action="${hubspotPath(args.hubId)}/disconnect">
${csrfField(args.csrfToken)}
<button type="submit" class="danger" aria-describedby="disconnect-hint">${escapeHtml(hw.disconnect)}</button>
<p class="hint" id="disconnect-hint">${escapeHtml(hw.disconnectHint)}</p>
</form>`;
}

export function hubspotPage(args: Common & { status: HubspotStatus; notice?: string | undefined }): string {
  const { hw } = args;
  return page({
    language: args.language,
    words: args.words,
    title: hw.title(args.hubId),
    csrfToken: args.csrfToken,
    path: hubspotPath(args.hubId),
    header: signedInHeader(args.words, args.email, args.csrfToken),
    body: `<p><a href="/account">${escapeHtml(args.words.backToKeys)}</a></p>
<h1>${escapeHtml(hw.title(args.hubId))}</h1>
${args.notice ? `<p class="notice" role="status">${escapeHtml(args.notice)}</p>\n` : ''}<p>${escapeHtml(hw.intro)}</p>
${args.status.ready || args.status.connection ? '' : `<p class="error">${escapeHtml(hw.notReady)}</p>`}
${stateOf(args)}`,
  });
}

/** After HubSpot's authorize page: the inbox to connect (the state carried, for this account only). */
export function chooseInboxPage(args: Common & { state: string; inboxes: Inbox[] }): string {
  const { hw } = args;
  const options = args.inboxes
    .map(
      (inbox) =>
        `<option value="${escapeHtml(inbox.id)}">${escapeHtml(inbox.name)}${inbox.type === 'HELP_DESK' ? ` (${escapeHtml(hw.helpDesk)})` : ''}</option>`,
    )
    .join('\n');
  const body =
    args.inboxes.length === 0
      ? `<p class="error">${escapeHtml(hw.noInboxes)}</p>`
      : `<p>${escapeHtml(hw.chooseIntro)}</p>
<form method="post" action="${hubspotPath(args.hubId)}/inbox">
${csrfField(args.csrfToken)}
<input type="hidden" name="state" value="${escapeHtml(args.state)}">
<div class="field">
<label for="inbox">${escapeHtml(hw.inbox)}</label>
<select id="inbox" name="inbox">
${options}
</select>
</div>
<button type="submit" class="primary">${escapeHtml(hw.connectButton)}</button>
</form>`;
  return page({
    language: args.language,
    words: args.words,
    title: hw.chooseTitle,
    csrfToken: args.csrfToken,
    path: hubspotPath(args.hubId),
    header: signedInHeader(args.words, args.email, args.csrfToken),
    body: `<p><a href="${hubspotPath(args.hubId)}">${escapeHtml(hw.back)}</a></p>
<h1>${escapeHtml(hw.chooseTitle)}</h1>
${body}`,
  });
}
