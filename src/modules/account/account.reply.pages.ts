/**
 * The conversation's reply box (CONTRACT §16): a field `Reply` and a button `Send`, shown to a
 * signed-in owner when the hub has a LINE channel access token; where the send just made is (on its
 * way, sent, or refused with LINE's reason), and a reply refused before it went, with what was typed.
 */
import { escapeHtml } from '../../lib/html.js';
import type { ConversationWords } from './account.conversations.i18n.js';

export interface ReplyBox {
  /** The send just made from this page, where it is now. */
  send?: { status: 'pending' | 'sent' | 'failed'; error?: string | undefined } | undefined;
  /** A reply refused before it was sent: what was typed, and why. */
  problem?: { text: string; message: string } | undefined;
}

export function replyForm(
  args: { cw: ConversationWords; csrfToken: string; reply: ReplyBox | undefined },
  path: string,
): string {
  const { cw } = args;
  const reply = args.reply;
  if (!reply) return '';
  const send = reply.send;
  const status =
    send?.status === 'failed'
      ? `<p class="error" role="alert">${escapeHtml(cw.replyFailed(send.error ?? ''))}</p>`
      : send?.status === 'pending'
        ? `<p class="notice" role="status">${escapeHtml(cw.replySending)}</p>`
        : send?.status === 'sent'
          ? `<p class="notice" role="status">${escapeHtml(cw.replySent)}</p>`
          : '';
  const problem = reply.problem
    ? `<p class="error" id="reply-problem" role="alert">${escapeHtml(reply.problem.message)}</p>`
    : '';
  return `<section class="reply" aria-labelledby="reply-title">
<h2 id="reply-title">${escapeHtml(cw.replyTitle)}</h2>
${status}<form method="post" action="${path}/reply">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrfToken)}">
<div class="field">
<label for="reply-text">${escapeHtml(cw.reply)}</label>
<textarea id="reply-text" name="text" rows="3" maxlength="5000" required${reply.problem ? ' aria-invalid="true" aria-describedby="reply-problem reply-hint"' : ' aria-describedby="reply-hint"'}>${escapeHtml(reply.problem?.text ?? '')}</textarea>
${problem}<p class="hint" id="reply-hint">${escapeHtml(cw.replyHint)}</p>
</div>
<button type="submit" class="primary">${escapeHtml(cw.send)}</button>
</form>
</section>`;
}
