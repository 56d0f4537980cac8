/**
 * Replying to a LINE friend (CONTRACT §16): a send is checked, kept in the store's queue, and
 * answered 202; the send worker (./sends.worker.ts) pushes it to LINE and keeps what was sent.
 */
import { randomUUID } from 'node:crypto';
import type { Hub, OutgoingMessage, Send, Store } from '../../store/store.js';
import { renderLineMessage } from '../ingest/line.webhook.js';
import { sendErrors } from './sends.errors.js';

/** LINE's limits (push message): 1 to 5 messages a request, a text of 1 to 5,000 characters. */
export const MAX_MESSAGES = 5;
export const MAX_TEXT_CHARS = 5_000;
const MAX_IDEMPOTENCY_KEY_CHARS = 200;
/** How long an idempotency key names its send. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/** A sticker's ids as LINE gives them: digits (strings in the push API). */
const STICKER_ID = /^[0-9]{1,20}$/;

export interface SendRequest {
  messages: OutgoingMessage[];
  idempotencyKey: string | null;
}

/** What a send is told to its client (CONTRACT §16). */
export interface SendView {
  id: string;
  status: Send['state'];
  attempts: number;
  error?: string;
  messageIds?: string[];
}

export function viewOf(send: Send): SendView {
  return {
    id: send.id,
    status: send.state,
    attempts: send.attempts,
    ...(send.state === 'failed' && send.lastError !== null && { error: send.lastError }),
    ...(send.messageIds !== null && { messageIds: send.messageIds }),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body as a send, or invalid_body naming the field. Characters are UTF-16 units, as LINE counts them. */
export function parseSendBody(body: unknown): SendRequest {
  if (!isRecord(body)) throw sendErrors.invalidBody('body', 'must be a JSON object with a messages array');
  for (const key of Object.keys(body)) {
    if (key !== 'messages' && key !== 'idempotencyKey')
      throw sendErrors.invalidBody(key, 'is not a field of a send (messages, idempotencyKey)');
  }
  const { messages, idempotencyKey } = body;
  if (!Array.isArray(messages)) throw sendErrors.invalidBody('messages', 'must be an array');
  if (messages.length < 1 || messages.length > MAX_MESSAGES)
    throw sendErrors.invalidBody(
      'messages',
      `must hold 1 to ${MAX_MESSAGES} messages (LINE's limit), not ${messages.length}`,
    );
  const parsed = messages.map((message, i): OutgoingMessage => {
    const at = `messages[${i}]`;
    if (!isRecord(message)) throw sendErrors.invalidBody(at, 'must be an object');
    if (message.type === 'text') {
      const { text } = message;
      if (typeof text !== 'string') throw sendErrors.invalidBody(`${at}.text`, 'must be a string');
      if (text.length < 1 || text.length > MAX_TEXT_CHARS)
        throw sendErrors.invalidBody(
          `${at}.text`,
          `must be 1 to ${MAX_TEXT_CHARS} characters (LINE's limit), not ${text.length}`,
        );
      if (Object.keys(message).some((key) => key !== 'type' && key !== 'text'))
        throw sendErrors.invalidBody(at, 'a text message has only type and text');
      return { type: 'text', text };
    }
    if (message.type === 'sticker') {
      for (const field of ['packageId', 'stickerId'] as const) {
        const value = message[field];
        if (typeof value !== 'string' || !STICKER_ID.test(value))
          throw sendErrors.invalidBody(`${at}.${field}`, "must be the sticker's id: digits, as a string");
      }
      if (Object.keys(message).some((key) => !['type', 'packageId', 'stickerId'].includes(key)))
        throw sendErrors.invalidBody(at, 'a sticker message has only type, packageId and stickerId');
      return {
        type: 'sticker',
        packageId: message.packageId as string,
        stickerId: message.stickerId as string,
      };
    }
    throw sendErrors.invalidBody(`${at}.type`, 'must be text or sticker');
  });
  if (idempotencyKey !== undefined && idempotencyKey !== null) {
    if (
      typeof idempotencyKey !== 'string' ||
      idempotencyKey.length < 1 ||
      idempotencyKey.length > MAX_IDEMPOTENCY_KEY_CHARS
    )
      throw sendErrors.invalidBody(
        'idempotencyKey',
        `must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters`,
      );
  }
  return { messages: parsed, idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : null };
}

/** How a message sent is stored (CONTRACT §3's rendering, as a webhook's of the same message). */
export function renderedOf(
  message: OutgoingMessage,
  lineMessageId: string,
): { msg: string; contentType: string } {
  return renderLineMessage({ ...message, id: lineMessageId });
}

export class SendService {
  constructor(
    private readonly deps: {
      store: Pick<Store, 'contacts' | 'sends'>;
      clock: () => number;
      /** Told of a send accepted here, so that it goes at once. */
      onAccepted?: () => void;
    },
  ) {}

  /**
   * Accepts a send to a contact of `hub` (CONTRACT §16's checks after the key's, in its order: the
   * contact, the access token, the body), kept before it resolves.
   */
  async accept(
    hub: Hub,
    lineId: string,
    body: unknown,
    /** The HubSpot message an agent wrote (§18): its status is set when the send ends. */
    from?: { hubspotMessageId: string },
  ): Promise<{ send: SendView; created: boolean }> {
    const contact = await this.deps.store.contacts.get(hub.id, lineId);
    if (!contact) throw sendErrors.contactNotFound(lineId);
    if (!hub.lineChannelAccessTokenEncrypted) throw sendErrors.noAccessToken();
    const request = parseSendBody(body);
    const { send, created } = await this.deps.store.sends.create(
      {
        id: randomUUID(),
        hubId: hub.id,
        lineId,
        messages: request.messages,
        retryKey: randomUUID(),
        idempotencyKey: request.idempotencyKey,
        hubspotMessageId: from?.hubspotMessageId ?? null,
        createdAt: this.deps.clock(),
      },
      IDEMPOTENCY_WINDOW_MS,
    );
    if (created) this.deps.onAccepted?.();
    return { send: viewOf(send), created };
  }

  /**
   * An agent's reply from HubSpot that accept() refused (§18): kept as a failed send with the
   * refusal's words, never pushed, so that the HubSpot publisher tells HubSpot it FAILED. The same
   * HubSpot message again is the same send.
   */
  async refused(
    hub: Hub,
    lineId: string,
    text: string,
    from: { hubspotMessageId: string },
    reason: string,
  ): Promise<SendView> {
    const { send } = await this.deps.store.sends.create(
      {
        id: randomUUID(),
        hubId: hub.id,
        lineId,
        messages: [{ type: 'text', text }],
        retryKey: randomUUID(),
        idempotencyKey: `hubspot:${from.hubspotMessageId}`,
        hubspotMessageId: from.hubspotMessageId,
        createdAt: this.deps.clock(),
        refusedWith: reason,
      },
      IDEMPOTENCY_WINDOW_MS,
    );
    return viewOf(send);
  }

  async status(hubId: string, id: string): Promise<SendView> {
    const send = await this.deps.store.sends.get(hubId, id);
    if (!send) throw sendErrors.notFound(id);
    return viewOf(send);
  }
}
