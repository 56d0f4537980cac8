/**
 * LINE's content endpoints (CONTRACT §11; LINE Messaging API "Get content" and "Verify the
 * preparation status of a video or audio for getting"), on `LINE_API_DATA_BASE_URL`:
 *
 *   GET /v2/bot/message/{messageId}/content              the bytes, with their Content-Type
 *   GET /v2/bot/message/{messageId}/content/transcoding  {"status": "processing"|"succeeded"|"failed"}
 *
 * One call each, never throwing: what LINE answered, as the download worker needs to decide. The
 * access token goes only in the Authorization header, never into an outcome or a log line.
 */
import { Readable } from 'node:stream';

/** What a call came to. */
export type LineAnswer<T> =
  | { kind: 'ok'; value: T }
  /** LINE no longer has the content (or never had it). */
  | { kind: 'gone' }
  /** Worth trying again later: 429, 5xx, a network error, a timeout. */
  | { kind: 'retry'; reason: string; retryAfterMs?: number | undefined }
  /** LINE refused the token (401, 403) or the request: tried again later too, told to the operator. */
  | { kind: 'refused'; reason: string };

export type Transcoding = 'processing' | 'succeeded' | 'failed';

export interface LineContent {
  mediaType: string;
  body: Readable;
}

const CALL_TIMEOUT_MS = 30_000;

function contentUrl(base: string, lineMessageId: string): string {
  return `${base.replace(/\/+$/, '')}/v2/bot/message/${encodeURIComponent(lineMessageId)}/content`;
}

function refusal(status: number, retryAfter: string | null): LineAnswer<never> {
  if (status === 404) return { kind: 'gone' };
  if (status === 429 || status >= 500) {
    const seconds = retryAfter !== null && /^\d{1,6}$/.test(retryAfter) ? Number(retryAfter) : undefined;
    return {
      kind: 'retry',
      reason: `LINE answered ${status}`,
      retryAfterMs: seconds === undefined ? undefined : seconds * 1000,
    };
  }
  return { kind: 'refused', reason: `LINE answered ${status}` };
}

function failure(error: unknown): LineAnswer<never> {
  const name = (error as Error).name;
  const reason =
    name === 'TimeoutError' || name === 'AbortError'
      ? 'LINE did not answer in time'
      : `could not reach LINE (${(error as { cause?: { code?: string } }).cause?.code ?? name})`;
  return { kind: 'retry', reason };
}

/** Whether LINE has finished preparing a video or audio message's content. */
export async function transcodingOf(
  base: string,
  token: string,
  lineMessageId: string,
): Promise<LineAnswer<Transcoding>> {
  try {
    const response = await fetch(`${contentUrl(base, lineMessageId)}/transcoding`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return refusal(response.status, response.headers.get('retry-after'));
    }
    const body = (await response.json()) as { status?: unknown };
    if (body.status === 'processing' || body.status === 'succeeded' || body.status === 'failed') {
      return { kind: 'ok', value: body.status };
    }
    return { kind: 'retry', reason: 'LINE answered an unknown transcoding status' };
  } catch (error) {
    return failure(error);
  }
}

/**
 * The content's bytes as a stream (read it to the end, or destroy it). `signal` ends the whole
 * download, body included: the caller aborts it when the download takes too long.
 */
export async function contentOf(
  base: string,
  token: string,
  lineMessageId: string,
  signal: AbortSignal,
): Promise<LineAnswer<LineContent>> {
  try {
    const response = await fetch(contentUrl(base, lineMessageId), {
      headers: { Authorization: `Bearer ${token}` },
      signal,
    });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      return refusal(response.status, response.headers.get('retry-after'));
    }
    return {
      kind: 'ok',
      value: {
        mediaType: response.headers.get('content-type') ?? 'application/octet-stream',
        body: Readable.fromWeb(response.body as import('node:stream/web').ReadableStream),
      },
    };
  } catch (error) {
    return failure(error);
  }
}
