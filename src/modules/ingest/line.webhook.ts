/**
 * LINE Messaging API webhooks (shared/line/webhook.yml): the translation of a request body into
 * store operations (the signature is checked first, in line.signature.ts). Unknown fields and event types are normal and ignored;
 * a message type chatlog does not know yet is kept with its type name, never dropped.
 */
import { isStorableInstant } from '../../lib/calendar.js';
import type { ContentKind, ContentRequest, IngestOperation, SourceKind } from '../../store/store.js';

export class InvalidWebhookBody extends Error {}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function capitalized(type: string): string {
  return type.charAt(0).toUpperCase() + type.slice(1);
}

const CONTENT_KINDS: ReadonlySet<string> = new Set<ContentKind>(['image', 'video', 'audio', 'file']);

/**
 * The content LINE holds for a message, which chatlog downloads and keeps (CONTRACT §11): images,
 * videos, audio and files, unless `contentProvider.type` says it is elsewhere (`external`).
 */
export function heldContent(message: Json): ContentRequest | undefined {
  if (typeof message.id !== 'string' || typeof message.type !== 'string' || !CONTENT_KINDS.has(message.type))
    return undefined;
  const provider = message.contentProvider;
  if (isObject(provider) && provider.type !== undefined && provider.type !== 'line') return undefined;
  return {
    lineMessageId: message.id,
    kind: message.type as ContentKind,
    fileName: message.type === 'file' ? (optionalString(message.fileName) ?? null) : null,
  };
}

/** `msg` of a LINE message as CONTRACT §3 renders it; absent values leave their line out. */
export function renderLineMessage(message: Json): { contentType: string; msg: string } {
  const type = String(message.type);
  const id = optionalString(message.id);
  const lines = (label: string, ...rest: Array<string | undefined>) =>
    [`[${label}]`, id === undefined ? undefined : `ID: ${id}`, ...rest]
      .filter((l) => l !== undefined)
      .join('\n');
  switch (type) {
    case 'text':
      return { contentType: type, msg: optionalString(message.text) ?? '' };
    case 'sticker': {
      const stickerId =
        optionalString(message.stickerId) ??
        (typeof message.stickerId === 'number' ? String(message.stickerId) : undefined);
      return {
        contentType: type,
        msg: ['[Sticker]', stickerId === undefined ? undefined : `ID: ${stickerId}`]
          .filter((l) => l !== undefined)
          .join('\n'),
      };
    }
    case 'file': {
      const fileName = optionalString(message.fileName);
      return {
        contentType: type,
        msg: lines('File', fileName === undefined ? undefined : `Name: ${fileName}`),
      };
    }
    case 'location': {
      const { latitude, longitude } = message;
      const position =
        typeof latitude === 'number' && typeof longitude === 'number'
          ? `${String(latitude)},${String(longitude)}`
          : undefined;
      return {
        contentType: type,
        msg: lines('Location', optionalString(message.title), optionalString(message.address), position),
      };
    }
    default:
      // image, video, audio, and any type LINE adds later.
      return { contentType: type, msg: lines(capitalized(type)) };
  }
}

interface Source {
  lineId: string | undefined;
  kind: SourceKind | null;
  chatId: string | null;
}

function readSource(value: unknown): Source {
  if (!isObject(value)) return { lineId: undefined, kind: null, chatId: null };
  const type = value.type;
  const userId = optionalString(value.userId);
  const groupId = optionalString(value.groupId);
  const roomId = optionalString(value.roomId);
  const kind: SourceKind | null = type === 'user' || type === 'group' || type === 'room' ? type : null;
  const chatId = kind === 'group' ? groupId || null : kind === 'room' ? roomId || null : null;
  // An empty id is no id: the next one, or none.
  return { lineId: userId || groupId || roomId || undefined, kind, chatId };
}

export interface WebhookTranslation {
  operations: IngestOperation[];
  /**
   * Message events stored with less than LINE should have sent, for the operator's log: without a
   * timestamp createdAt can show (stored at their arrival), without the id of who sent them (stored
   * under a contact whose lineId is empty).
   */
  untimed: number;
  unidentified: number;
  /** Users to look up on LINE's profile endpoint, when the hub has an access token. */
  profileCandidates: Array<{ lineId: string; kind: SourceKind | null; chatId: string | null }>;
}

/**
 * The store operations of a webhook body: message events become messages (the friend's,
 * createdAt = the event's timestamp), follow/unfollow mark the contact, unsend removes.
 * Throws InvalidWebhookBody for a body that is not LINE's shape.
 */
export function translateWebhook(body: unknown, now: number): WebhookTranslation {
  if (!isObject(body)) throw new InvalidWebhookBody('the body must be a JSON object with an events array');
  const events = body.events;
  if (!Array.isArray(events)) throw new InvalidWebhookBody('events must be an array');
  const operations: IngestOperation[] = [];
  const profileCandidates: WebhookTranslation['profileCandidates'] = [];
  let untimed = 0;
  let unidentified = 0;
  for (const [index, event] of events.entries()) {
    if (!isObject(event)) throw new InvalidWebhookBody(`events[${index}] must be an object`);
    if (typeof event.type !== 'string')
      throw new InvalidWebhookBody(`events[${index}].type must be a string`);
    // A timestamp outside what createdAt can show (years 0000-9999) is replaced by the arrival time.
    const at = isStorableInstant(event.timestamp) ? event.timestamp : now;
    const source = readSource(event.source);
    switch (event.type) {
      case 'message': {
        const message = event.message;
        if (
          !isObject(message) ||
          typeof message.id !== 'string' ||
          message.id === '' ||
          typeof message.type !== 'string'
        ) {
          throw new InvalidWebhookBody(`events[${index}].message must have a string id and type`);
        }
        const { contentType, msg } = renderLineMessage(message);
        const content = heldContent(message);
        if (at !== event.timestamp) untimed += 1;
        if (!source.lineId) unidentified += 1;
        operations.push({
          kind: 'message',
          lineId: source.lineId ?? '',
          sender: null,
          msg,
          contentType,
          createdAt: at,
          sourceId: `line:${message.id}`,
          id: message.id,
          // Kept as LINE sent them, for the change feed (CONTRACT §9).
          line: JSON.stringify({ source: event.source, message }),
          ...(content ? { content } : {}),
          sourceKind: source.kind,
          sourceChatId: source.chatId,
        });
        if (source.lineId?.startsWith('U'))
          profileCandidates.push({ lineId: source.lineId, kind: source.kind, chatId: source.chatId });
        break;
      }
      case 'follow':
      case 'unfollow':
        if (source.lineId !== undefined) {
          operations.push({ kind: event.type, lineId: source.lineId, at });
          if (event.type === 'follow')
            profileCandidates.push({ lineId: source.lineId, kind: source.kind, chatId: source.chatId });
        }
        break;
      case 'unsend': {
        const messageId = isObject(event.unsend) ? event.unsend.messageId : undefined;
        if (typeof messageId !== 'string' || messageId === '') {
          throw new InvalidWebhookBody(`events[${index}].unsend.messageId must be a string`);
        }
        operations.push({ kind: 'unsend', sourceId: `line:${messageId}`, at });
        break;
      }
      default:
        // join, leave, postback, beacon, ... and types LINE adds later: nothing to keep.
        break;
    }
  }
  return { operations, profileCandidates, untimed, unidentified };
}
