/**
 * LINE's push API (CONTRACT §16; Messaging API "Send push message"), on `LINE_API_BASE_URL`:
 *
 *   POST /v2/bot/message/push  {"to", "messages"}  Authorization: Bearer <channel access token>
 *                              X-Line-Retry-Key: <a UUID, the same for every attempt of one send>
 *
 * One call, never throwing: what LINE answered, as the send worker needs it. LINE answers 200 with
 * `sentMessages`, and 409 with the same for a retry key it already accepted (the first attempt went
 * through: a crash, a timeout, a lost answer). The token goes only in the Authorization header,
 * never into an outcome or a log line.
 */
import http from 'node:http';
import https from 'node:https';
import type { OutgoingMessage } from '../../store/store.js';

export type PushAnswer =
  /** LINE took it (now, or at an earlier attempt with the same retry key): its message ids. */
  | { kind: 'sent'; messageIds: string[] }
  /** Worth trying again later: 429 (not the monthly limit), 5xx, a network error, a timeout. */
  | { kind: 'retry'; reason: string; retryAfterMs?: number | undefined }
  /** LINE refused it for good (another 4xx, the monthly limit): its words. */
  | { kind: 'refused'; reason: string };

const CALL_TIMEOUT_MS = 30_000;

/** LINE's words from an error body (`message`, and `details[].message` with their properties). */
function lineWords(status: number, body: unknown): string {
  const record = (body ?? {}) as { message?: unknown; details?: unknown };
  const parts: string[] = [];
  if (typeof record.message === 'string') parts.push(record.message);
  if (Array.isArray(record.details)) {
    for (const detail of record.details.slice(0, 5)) {
      const { message, property } = (detail ?? {}) as { message?: unknown; property?: unknown };
      if (typeof message === 'string')
        parts.push(typeof property === 'string' ? `${property}: ${message}` : message);
    }
  }
  const words = parts.join('; ').slice(0, 500);
  return `LINE answered ${status}${words ? `: ${words}` : ''}`;
}

function sentIds(body: unknown): string[] | undefined {
  const sent = (body as { sentMessages?: unknown } | null)?.sentMessages;
  if (!Array.isArray(sent)) return undefined;
  const ids = sent.map((m) => (m as { id?: unknown } | null)?.id);
  return ids.every((id): id is string => typeof id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id))
    ? ids
    : undefined;
}

/**
 * Connections kept open to LINE between pushes (one TLS handshake, not one a push). One idle for
 * 4 s is closed here first: a server's own idle limit (Node's is 5 s) could close it just as a push
 * starts on it.
 */
const KEEP_IDLE_MS = 4_000;
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: KEEP_IDLE_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: KEEP_IDLE_MS }),
};

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
}

/**
 * One POST with node:http(s) on a kept-alive connection: a push took 0.66 ms of the main thread
 * through fetch (bench sends' profile), most of it in fetch's own machinery.
 */
async function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<Answer> {
  try {
    return await postOnce(url, headers, body, timeoutMs);
  } catch (error) {
    // A kept-alive connection the other side closed as this push began (Node's documented race):
    // once more on a new one. The retry key makes a second attempt safe.
    if ((error as { reusedSocket?: boolean }).reusedSocket) return postOnce(url, headers, body, timeoutMs);
    throw error;
  }
}

function postOnce(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const request = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        agent: agents[secure ? 'https:' : 'http:'],
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      reject(
        request.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')
          ? Object.assign(error, { reusedSocket: true })
          : error,
      );
    });
    request.end(body);
  });
}

export async function pushMessages(
  base: string,
  token: string,
  push: {
    to: string;
    messages: readonly OutgoingMessage[];
    retryKey: string;
    timeoutMs?: number | undefined;
  },
): Promise<PushAnswer> {
  let res: Answer;
  try {
    res = await post(
      new URL(`${base.replace(/\/+$/, '')}/v2/bot/message/push`),
      {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-line-retry-key': push.retryKey,
      },
      JSON.stringify({ to: push.to, messages: push.messages }),
      push.timeoutMs ?? CALL_TIMEOUT_MS,
    );
  } catch (error) {
    const timedOut = (error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError';
    return { kind: 'retry', reason: timedOut ? 'LINE did not answer in time' : 'LINE could not be reached' };
  }
  const { text } = res;
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (res.status === 200 || res.status === 409) {
    const ids = sentIds(body);
    if (ids && ids.length === push.messages.length) return { kind: 'sent', messageIds: ids };
    if (res.status === 200)
      return { kind: 'retry', reason: 'LINE answered 200 without the ids of the messages sent' };
    return { kind: 'refused', reason: lineWords(409, body) };
  }
  if (res.status === 429) {
    const words = lineWords(429, body);
    // The free plans' monthly quota: waiting a few seconds will not help.
    if (/monthly limit/i.test(words)) return { kind: 'refused', reason: words };
    const { retryAfter } = res;
    const seconds = retryAfter !== null && /^\d{1,6}$/.test(retryAfter) ? Number(retryAfter) : undefined;
    return { kind: 'retry', reason: words, retryAfterMs: seconds === undefined ? undefined : seconds * 1000 };
  }
  if (res.status >= 500) return { kind: 'retry', reason: lineWords(res.status, body) };
  return { kind: 'refused', reason: lineWords(res.status, body) };
}
