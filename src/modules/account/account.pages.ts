/**
 * The account screen's HTML, rendered on the server. No inline script or style (the CSP forbids
 * them), every control a native element with a label, and never a full key: keys are shown as
 * their first characters followed by `•`, and the copy and show icons fetch the key when pressed.
 */
import { formatTimestamp } from '../../lib/calendar.js';
import { escapeHtml } from '../../lib/html.js';
import type { KeySummary } from '../keys/keys.usecases.js';
import type { Language, Words } from './account.i18n.js';

/** A key as the screen shows it: its first characters, then dots (not one per hidden character). */
export function maskedKey(keyStart: string): string {
  return `${keyStart}${'•'.repeat(MASK_DOTS)}`;
}

const MASK_DOTS = 12;
/** Times in UTC, as the column headers say. */
const when = (ms: number) => formatTimestamp(ms).slice(0, 16).replace('T', ' ');

const ICONS = {
  copy: '<svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="20" height="20"><rect x="8" y="8" width="12" height="12" rx="2"/><path d="M16 8V6a2 2 0 0 0-2-2H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h2"/></svg>',
  eye: '<svg aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="20" height="20"><path d="M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12z"/><circle cx="12" cy="12" r="3"/></svg>',
};

interface Layout {
  language: Language;
  words: Words;
  title: string;
  csrfToken?: string;
  body: string;
  header?: string;
}

function page({ language, words, title, csrfToken, body, header = '' }: Layout): string {
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${csrfToken ? `<meta name="csrf-token" content="${escapeHtml(csrfToken)}">\n` : ''}<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/account/assets/account.css">
<script src="/account/assets/account.js" defer></script>
</head>
<body>
<header class="top">
<span class="brand">chatlog</span>
<nav aria-label="${escapeHtml(words.languageNav)}"><a class="language" href="/account?lang=${words.otherLanguageCode}" lang="${words.otherLanguageCode}" hreflang="${words.otherLanguageCode}">${escapeHtml(words.otherLanguage)}</a></nav>
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

export interface HubView {
  hubId: string;
  apiUrl: string;
  keys: KeySummary[];
}

function keyRow(words: Words, key: KeySummary, csrfToken: string, isNew: boolean): string {
  const label = key.label || words.noLabel;
  const live = key.revokedAt === null;
  const masked = maskedKey(key.keyStart);
  const keyCell = live
    ? `<span class="key" data-masked="${escapeHtml(masked)}">${escapeHtml(masked)}</span>
<span class="icons">
<button type="button" class="icon" data-action="show" data-key-id="${escapeHtml(key.id)}" aria-label="${escapeHtml(words.showKey)}" aria-pressed="false" data-show-label="${escapeHtml(words.showKey)}" data-hide-label="${escapeHtml(words.hideKey)}">${ICONS.eye}</button>
<button type="button" class="icon" data-action="copy" data-key-id="${escapeHtml(key.id)}" aria-label="${escapeHtml(words.copyKey)}" data-copied="${escapeHtml(words.copied)}" data-failed="${escapeHtml(words.copyFailed)}">${ICONS.copy}</button>
<span class="copied" role="status" aria-live="polite"></span>
</span>`
    : `<span class="key revoked">${escapeHtml(masked)}</span>`;
  const actions = live
    ? `<form method="post" action="/account/keys/${encodeURIComponent(key.id)}/revoke" class="revoke" data-question="${escapeHtml(words.revokeQuestion(label))}">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<button type="submit" class="danger">${escapeHtml(words.revoke)}</button>
</form>`
    : '';
  return `<tr id="key-${escapeHtml(key.id)}"${isNew ? ' class="new"' : ''}>
<th scope="row">${escapeHtml(label)}</th>
<td>${escapeHtml(key.scope)}</td>
<td class="key-cell">${keyCell}</td>
<td><time datetime="${formatTimestamp(key.createdAt)}">${when(key.createdAt)}</time></td>
<td>${key.lastUsedAt === null ? escapeHtml(words.never) : `<time datetime="${formatTimestamp(key.lastUsedAt)}">${when(key.lastUsedAt)}</time>`}</td>
<td>${live ? escapeHtml(words.live) : escapeHtml(words.revokedOn(formatTimestamp(key.revokedAt ?? 0).slice(0, 10)))}</td>
<td>${actions}</td>
</tr>`;
}

function hubSection(words: Words, hub: HubView, csrfToken: string, newKeyId: string | undefined): string {
  const id = `hub-${hub.hubId}`;
  const example = `curl '${hub.apiUrl}?apikey=${maskedKey('chl_')}&from=2024-01-01&to=2024-01-31'`;
  const rows = hub.keys.map((key) => keyRow(words, key, csrfToken, key.id === newKeyId)).join('\n');
  return `<section class="hub" aria-labelledby="${id}">
<h2 id="${id}">${escapeHtml(words.hub(hub.hubId))}</h2>
<dl class="api">
<dt>${escapeHtml(words.apiUrl)}</dt>
<dd><code>${escapeHtml(hub.apiUrl)}</code></dd>
<dt>${escapeHtml(words.curlExample)}</dt>
<dd><pre><code>${escapeHtml(example)}</code></pre></dd>
</dl>
<p><a href="/docs">${escapeHtml(words.apiDocs)}</a></p>
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
<select id="scope-${id}" name="scope">
<option value="read">${escapeHtml(words.scopeRead)}</option>
<option value="ingest">${escapeHtml(words.scopeIngest)}</option>
</select>
</div>
<button type="submit" class="primary">${escapeHtml(words.createKey)}</button>
</form>
${
  hub.keys.length === 0
    ? `<p>${escapeHtml(words.noKeys)}</p>`
    : `<div class="table-wrap">
<table>
<caption>${escapeHtml(words.keysOf(hub.hubId))}</caption>
<thead><tr><th scope="col">${escapeHtml(words.colLabel)}</th><th scope="col">${escapeHtml(words.colScope)}</th><th scope="col">${escapeHtml(words.colKey)}</th><th scope="col">${escapeHtml(words.colCreated)}</th><th scope="col">${escapeHtml(words.colLastUsed)}</th><th scope="col">${escapeHtml(words.colState)}</th><th scope="col">${escapeHtml(words.colActions)}</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>`
}
</section>`;
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
    header: `<div class="who"><span>${escapeHtml(words.signedInAs)} ${escapeHtml(args.email)}</span>
<form method="post" action="/account/sign-out"><input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}"><button type="submit">${escapeHtml(words.signOut)}</button></form></div>
`,
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
