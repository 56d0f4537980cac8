/**
 * Who waits for an answer now (CONTRACT §17's waits, on the conversation list): the friends whose
 * last message is their own, the longest wait first, each a link to its conversation, with how long
 * and since when (in the hub's zone).
 */
import { escapeHtml } from '../../lib/html.js';
import type { WaitingContact } from '../../store/store.js';
import type { HubPage } from './account.conversations.pages.js';
import { timeIn } from './account.pages.js';

export interface Waiting {
  contacts: WaitingContact[];
  total: number;
  /** The time the waits are measured to. */
  now: number;
}

export function waitingList(
  common: HubPage,
  waiting: Waiting,
  link: (contact: WaitingContact) => string,
): string {
  const { cw, timeZone } = common;
  const items = waiting.contacts
    .map(
      (w) =>
        `<li>${link(w)} <span class="wait">${escapeHtml(cw.waitingFor(cw.waitDuration(waiting.now - w.since)))}</span> <span class="muted">(${escapeHtml(cw.since)} ${timeIn(w.since, timeZone)})</span></li>`,
    )
    .join('\n');
  return `<section class="waiting" aria-labelledby="waiting-title">
<h2 id="waiting-title">${escapeHtml(cw.waitingNow)}</h2>
${
  waiting.total === 0
    ? `<p>${escapeHtml(cw.nobodyWaiting)}</p>`
    : `<p class="hint">${escapeHtml(cw.waitingCount(waiting.contacts.length, waiting.total))}</p>
<ol class="waiting">
${items}
</ol>`
}
</section>`;
}
