/**
 * The account screen's HTML, rendered on the server. No inline script or style (the CSP forbids
 * them), every control a native element with a label, and never a full key: keys are shown as
 * their first characters followed by `•`, and the copy and show icons fetch the key when pressed.
 */
import { formatTimestamp } from '../../lib/calendar.js';
import { escapeHtml } from '../../lib/html.js';
import { maskedKey } from '../keys/keys.format.js';
import type { KeySummary } from '../keys/keys.usecases.js';
import type { Language, Words } from './account.i18n.js';
import { formatLocalMinute } from './account.time.js';
import type { HubOverview } from './account.usecases.js';

/** Where the copy-for-Claude-Code button's command takes the key (account.js puts it there). */
const MCP_KEY_SLOT = '{{key}}';

/** The line that adds chatlog to Claude Code (README, "Use it from an assistant"). */
export const claudeCommand = (mcpUrl: string, key: string) =>
  `claude mcp add --transport http chatlog ${mcpUrl} --header "Authorization: Bearer ${key}"`;

const ICONS = {
  assistant:
    '<svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="20" height="20"><path d="M4 5h16v10H9l-5 4z"/><path d="M8 9h8M8 12h5"/></svg>',
  copy: '<svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="20" height="20"><rect x="8" y="8" width="12" height="12" rx="2"/><path d="M16 8V6a2 2 0 0 0-2-2H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h2"/></svg>',
  eye: '<svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="20" height="20"><path d="M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12z"/><circle cx="12" cy="12" r="3"/></svg>',
};

export interface Layout {
  language: Language;
  words: Words;
  title: string;
  csrfToken?: string;
  body: string;
  header?: string;
  /** A script of the screen's besides account.js, run after it (the webhooks page's). */
  script?: string;
  /** The page's own path, where the language switch comes back to (it takes `?lang=`). */
  path?: string;
  /** Load the page again after this many seconds (a send on its way to LINE). */
  refreshSeconds?: number | undefined;
}

export function page({
  language,
  words,
  title,
  csrfToken,
  body,
  header = '',
  script,
  path = '/account',
  refreshSeconds,
}: Layout): string {
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">\n` : ''}${csrfToken ? `<meta name="csrf-token" content="${escapeHtml(csrfToken)}">\n` : ''}<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/account/assets/account.css">
<script src="/account/assets/account.js" defer></script>
${script ? `<script src="/account/assets/${script}" defer></script>\n` : ''}</head>
<body>
<header class="top">
<span class="brand">chatlog</span>
<nav aria-label="${escapeHtml(words.languageNav)}"><a class="language" href="${path}?lang=${words.otherLanguageCode}" lang="${words.otherLanguageCode}" hreflang="${words.otherLanguageCode}">${escapeHtml(words.otherLanguage)}</a></nav>
${header}</header>
<main id="main">
${body}
</main>
</body>
</html>
`;
}

export function signInPage(args: {
  language: Language;
  words: Words;
  token: string;
  email?: string;
  error?: string;
}): string {
  const { words } = args;
  const error = args.error ? `<p class="error" role="alert">${escapeHtml(args.error)}</p>\n` : '';
  return page({
    language: args.language,
    words,
    title: words.signInTitle,
    body: `<section class="sign-in">
<h1>${escapeHtml(words.signInTitle)}</h1>
<p>${escapeHtml(words.signInIntro)}</p>
${error}<form method="post" action="/account/sign-in">
<input type="hidden" name="csrf" value="${escapeHtml(args.token)}">
<label for="email">${escapeHtml(words.email)}</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(args.email ?? '')}">
<label for="password">${escapeHtml(words.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
<button type="submit" class="primary">${escapeHtml(words.signIn)}</button>
</form>
</section>`,
  });
}

/** The page of a hub's conversations (account.conversations.pages.ts). */
export const conversationsPath = (hubId: string) =>
  `/account/hubs/${encodeURIComponent(hubId)}/conversations`;

/** The page of a hub's outgoing webhooks (account.webhooks.pages.ts). */
export const webhooksPath = (hubId: string) => `/account/hubs/${encodeURIComponent(hubId)}/webhooks`;

export interface HubView extends HubOverview {
  hubId: string;
  apiUrl: string;
  /** The MCP server's URL, for assistants. */
  mcpUrl: string;
  keys: KeySummary[];
  /** How many outgoing webhook endpoints the hub has (said beside the link to them). */
  webhookCount: number;
}

/** A column name whose time zone (`America/Argentina/Buenos_Aires`) may break after a slash. */
export const breakableName = (text: string) => escapeHtml(text).replaceAll('/', '/<wbr>');

/**
 * A cell's column name (HTML), shown beside its value where the table is laid out as cards (narrow
 * screens); hidden from assistive technology, which has the column headers.
 */
export const cellLabel = (html: string) => `<span class="cell-label" aria-hidden="true">${html}</span>`;

/**
 * An instant in the hub's zone, with its exact UTC value for machines. The day and the clock time
 * may go on two lines (a narrower table), never the day itself.
 */
export function timeIn(epochMs: number, timeZone: string): string {
  const [day, clock] = formatLocalMinute(epochMs, timeZone).split(' ');
  return `<time datetime="${formatTimestamp(epochMs)}"><span class="day">${day}</span> <span class="clock">${clock}</span></time>`;
}

/** The key table's column names, as HTML. */
interface Columns {
  label: string;
  scope: string;
  key: string;
  created: string;
  lastUsed: string;
  state: string;
  actions: string;
}

function keyRow(
  words: Words,
  key: KeySummary,
  columns: Columns,
  timeZone: string,
  csrfToken: string,
  isNew: boolean,
  mcpUrl: string,
): string {
  const label = key.label || words.noLabel;
  const masked = maskedKey(key.keyStart);
  const keyCell =
    key.revokedAt === null
      ? `<span class="key" data-masked="${escapeHtml(masked)}">${escapeHtml(masked)}</span>
<span class="icons">
<button type="button" class="icon" data-action="show" data-key-id="${escapeHtml(key.id)}" aria-label="${escapeHtml(words.showKey)}" aria-pressed="false" data-show-label="${escapeHtml(words.showKey)}" data-hide-label="${escapeHtml(words.hideKey)}">${ICONS.eye}</button>
<button type="button" class="icon" data-action="copy" data-key-id="${escapeHtml(key.id)}" aria-label="${escapeHtml(words.copyKey)}" data-copied="${escapeHtml(words.copied)}" data-failed="${escapeHtml(words.copyFailed)}">${ICONS.copy}</button>${
          key.scope === 'read'
            ? `\n<button type="button" class="icon" data-action="copy-mcp" data-key-id="${escapeHtml(key.id)}" data-command="${escapeHtml(claudeCommand(mcpUrl, MCP_KEY_SLOT))}" data-slot="${MCP_KEY_SLOT}" aria-label="${escapeHtml(words.copyMcp)}" data-copied="${escapeHtml(words.copied)}" data-failed="${escapeHtml(words.copyFailed)}">${ICONS.assistant}</button>`
            : ''
        }
<span class="copied" role="status" aria-live="polite"></span>
</span>`
      : `<span class="key revoked">${escapeHtml(masked)}</span>`;
  const actions =
    key.revokedAt === null
      ? `<form method="post" action="/account/keys/${encodeURIComponent(key.id)}/revoke" class="revoke" data-question="${escapeHtml(words.revokeQuestion(label))}">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<button type="submit" class="danger">${escapeHtml(words.revoke)}</button>
</form>`
      : '';
  const state =
    key.revokedAt === null
      ? `<span class="state live">${escapeHtml(words.live)}</span>`
      : `<span class="state revoked">${escapeHtml(words.revokedOn)} ${timeIn(key.revokedAt, timeZone)}</span>`;
  return `<tr role="row" id="key-${escapeHtml(key.id)}"${isNew ? ' class="new"' : ''}>
<th role="rowheader" scope="row">${escapeHtml(label)}</th>
<td role="cell" class="scope">${cellLabel(columns.scope)}<span>${escapeHtml(words.scopeNames[key.scope])}</span></td>
<td role="cell" class="key-cell">${cellLabel(columns.key)}<span class="key-value">${keyCell}</span></td>
<td role="cell">${cellLabel(columns.created)}${timeIn(key.createdAt, timeZone)}</td>
<td role="cell">${cellLabel(columns.lastUsed)}${key.lastUsedAt === null ? `<span>${escapeHtml(words.never)}</span>` : timeIn(key.lastUsedAt, timeZone)}</td>
<td role="cell">${cellLabel(columns.state)}${state}</td>
<td role="cell" class="actions">${actions}</td>
</tr>`;
}

function hubSection(words: Words, hub: HubView, csrfToken: string, newKeyId: string | undefined): string {
  const id = `hub-${hub.hubId}`;
  const { from, to } = hub.exampleDays;
  const example = `curl '${hub.apiUrl}?apikey=${maskedKey('chl_')}&from=${from}&to=${to}'`;
  // A time column's name has the zone on a line of its own under it: the times keep one line each.
  const inZone = `<span class="in-zone">${breakableName(words.inZone(hub.timeZone))}</span>`;
  const columns: Columns = {
    label: escapeHtml(words.colLabel),
    scope: escapeHtml(words.colScope),
    key: escapeHtml(words.colKey),
    created: `${escapeHtml(words.colCreated)}${inZone}`,
    lastUsed: `${escapeHtml(words.colLastUsed)}${inZone}`,
    state: escapeHtml(words.colState),
    actions: escapeHtml(words.colActions),
  };
  const rows = hub.keys
    .map((key) => keyRow(words, key, columns, hub.timeZone, csrfToken, key.id === newKeyId, hub.mcpUrl))
    .join('\n');
  const header = (Object.keys(columns) as Array<keyof Columns>)
    .map((column) => `<th role="columnheader" scope="col" class="col-${column}">${columns[column]}</th>`)
    .join('');
  // The table's roles are explicit: the narrow-screen layout (cards) changes its CSS display, which
  // would otherwise cost it its table semantics in some browsers.
  return `<section class="hub" aria-labelledby="${id}">
<h2 id="${id}">${escapeHtml(words.hub(hub.hubId))}</h2>
<dl class="api">
<dt>${escapeHtml(words.apiUrl)}</dt>
<dd><code>${escapeHtml(hub.apiUrl)}</code></dd>
<dt>${escapeHtml(words.timeZone)}</dt>
<dd><code class="zone">${escapeHtml(hub.timeZone)}</code>: ${escapeHtml(words.timeZoneUse)}</dd>
<dt>${escapeHtml(words.curlExample(hub.latestMessageAt !== undefined))}</dt>
<dd><pre><code class="example">${escapeHtml(example)}</code></pre></dd>
<dt>${escapeHtml(words.mcp)}</dt>
<dd><code>${escapeHtml(hub.mcpUrl)}</code>: ${escapeHtml(words.mcpUse)}
<pre><code class="command">${escapeHtml(claudeCommand(hub.mcpUrl, maskedKey('chl_')))}</code></pre></dd>
</dl>
<p><a href="/docs">${escapeHtml(words.apiDocs)}</a></p>
<p><a href="${conversationsPath(hub.hubId)}">${escapeHtml(words.conversations)}</a></p>
<p><a href="/account/hubs/${encodeURIComponent(hub.hubId)}/reports">${escapeHtml(words.reports)}</a></p>
<p><a href="/account/hubs/${encodeURIComponent(hub.hubId)}/audit">${escapeHtml(words.auditLog)}</a></p>
<p><a href="${webhooksPath(hub.hubId)}">${escapeHtml(words.webhooks)}</a>${escapeHtml(words.webhookCount(hub.webhookCount))}</p>
<p><a href="/account/hubs/${encodeURIComponent(hub.hubId)}/hubspot">${escapeHtml(words.hubspotInbox)}</a></p>
<button type="button" class="primary" data-action="issue" aria-expanded="true" aria-controls="issue-${id}">${escapeHtml(words.issueKey)}</button>
<form method="post" action="/account/hubs/${encodeURIComponent(hub.hubId)}/keys" id="issue-${id}" class="issue">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<div class="field">
<label for="label-${id}">${escapeHtml(words.label)}</label>
<input id="label-${id}" name="label" maxlength="200" aria-describedby="label-hint-${id}">
<p class="hint" id="label-hint-${id}">${escapeHtml(words.labelHint)}</p>
</div>
<div class="field">
<label for="scope-${id}">${escapeHtml(words.scope)}</label>
<select id="scope-${id}" name="scope" aria-describedby="scope-hint-${id}">
<option value="read">${escapeHtml(words.scopeRead)}</option>
<option value="ingest">${escapeHtml(words.scopeIngest)}</option>
<option value="send">${escapeHtml(words.scopeSend)}</option>
</select>
<p class="hint" id="scope-hint-${id}">${escapeHtml(words.scopeHint)}</p>
</div>
<button type="submit" class="primary">${escapeHtml(words.createKey)}</button>
</form>
${
  hub.keys.length === 0
    ? `<p>${escapeHtml(words.noKeys)}</p>`
    : `<div class="table-wrap">
<table class="keys" role="table">
<caption>${escapeHtml(words.keysOf(hub.hubId))}</caption>
<thead role="rowgroup"><tr role="row">${header}</tr></thead>
<tbody role="rowgroup">
${rows}
</tbody>
</table>
</div>`
}
</section>`;
}

/** Who is signed in, and the sign-out button: the top of every page of a signed-in account. */
export function signedInHeader(words: Words, email: string, csrfToken: string): string {
  return `<div class="who"><span>${escapeHtml(words.signedInAs)} ${escapeHtml(email)}</span>
<form method="post" action="/account/sign-out"><input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}"><button type="submit">${escapeHtml(words.signOut)}</button></form></div>
`;
}

export function keysPage(args: {
  language: Language;
  words: Words;
  email: string;
  csrfToken: string;
  hubs: HubView[];
  notice?: string | undefined;
  newKeyId?: string | undefined;
}): string {
  const { words, csrfToken } = args;
  const notice = args.notice ? `<p class="notice" role="status">${escapeHtml(args.notice)}</p>\n` : '';
  const sections =
    args.hubs.length === 0
      ? `<p>${escapeHtml(words.noHubs)}</p>`
      : args.hubs.map((hub) => hubSection(words, hub, csrfToken, args.newKeyId)).join('\n');
  return page({
    language: args.language,
    words,
    title: words.title,
    csrfToken,
    header: signedInHeader(words, args.email, csrfToken),
    body: `<h1>${escapeHtml(words.heading)}</h1>
${notice}${sections}
<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-explained">
<form method="dialog">
<h2 id="revoke-title"></h2>
<p id="revoke-explained">${escapeHtml(words.revokeExplained)}</p>
<div class="buttons">
<button type="submit" value="cancel">${escapeHtml(words.cancel)}</button>
<button type="submit" value="confirm" class="danger">${escapeHtml(words.revokeKey)}</button>
</div>
</form>
</dialog>`,
  });
}

/** The confirmation step without JavaScript (with it, a dialog asks instead). */
export function confirmRevokePage(args: {
  language: Language;
  words: Words;
  csrfToken: string;
  key: KeySummary;
}): string {
  const { words } = args;
  const label = args.key.label || words.noLabel;
  return page({
    language: args.language,
    words,
    title: words.revokeKey,
    csrfToken: args.csrfToken,
    body: `<h1>${escapeHtml(words.revokeQuestion(label))}</h1>
<p>${escapeHtml(words.revokeExplained)}</p>
<form method="post" action="/account/keys/${encodeURIComponent(args.key.id)}/revoke">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrfToken)}">
<input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger">${escapeHtml(words.revokeKey)}</button>
<a href="/account">${escapeHtml(words.cancel)}</a>
</form>`,
  });
}

export function messagePage(args: { language: Language; words: Words; message: string }): string {
  const { words } = args;
  return page({
    language: args.language,
    words,
    title: words.title,
    body: `<p class="error" role="alert">${escapeHtml(args.message)}</p>
<p><a href="/account">${escapeHtml(words.backToKeys)}</a></p>`,
  });
}
