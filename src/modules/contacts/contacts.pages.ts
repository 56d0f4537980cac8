/**
 * One contact's messages, oldest first, a page at a time by keyset (store.conversations): what the
 * person's ZIP and the account screen's conversation downloads both read.
 */
import type { Contact, ConversationMessage, Store } from '../../store/store.js';

const PAGE = 1000;

/** Each page of the contact's messages in the range (epoch ms; either open); the contact comes with each. */
export async function* contactMessagePages(
  store: Pick<Store, 'conversations'>,
  hubId: string,
  lineId: string,
  range: { fromMs?: number | undefined; toMsExclusive?: number | undefined } = {},
): AsyncGenerator<{ contact: Contact; messages: ConversationMessage[] }> {
  let at = { after: { createdAt: Number.MIN_SAFE_INTEGER, rowId: 0 } };
  for (;;) {
    const page = await store.conversations.messages({ hubId, lineId, ...range, at, limit: PAGE });
    if (!page || page.messages.length === 0) return;
    yield page;
    const last = page.messages.at(-1);
    if (!page.hasNewer || !last) return;
    at = { after: last };
  }
}
