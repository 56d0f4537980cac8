/** How kept bytes are answered (CONTRACT §11), for the content API and the account screen alike. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { etagMatches } from '../../lib/http.js';
import type { ContentStore } from '../../store/content/content-store.js';
import { contentErrors } from './content.errors.js';
import { attachment, rangeOf } from './content.range.js';
import type { ServableContent } from './content.usecases.js';

/**
 * The answer of kept bytes (CONTRACT §11) to a caller allowed to read them: ETag and 304, byte
 * ranges (206, 416, If-Range), the file name of a file, and headers that keep the sender's bytes
 * from ever running as a page of chatlog's origin. The API and the account screen both send it.
 */
export async function sendContent(
  request: FastifyRequest,
  reply: FastifyReply,
  blobs: ContentStore,
  { item, size, headers }: ServableContent,
): Promise<FastifyReply> {
  const etag = `"${item.sha256}"`;
  reply.headers(headers).headers({
    ETag: etag,
    'Accept-Ranges': 'bytes',
    // The bytes are the sender's: never run as a page of chatlog's origin.
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  });
  if (item.kind === 'file') reply.header('Content-Disposition', attachment(item.fileName ?? 'file'));
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  // If-Range: a range only of the same bytes (a strong ETag; chatlog sends no Last-Modified).
  const ifRange = request.headers['if-range'];
  const range =
    ifRange === undefined || String(ifRange).trim() === etag
      ? rangeOf(request.headers.range, size)
      : { kind: 'whole' as const };
  if (range.kind === 'unsatisfiable') throw contentErrors.rangeNotSatisfiable(size).withHeaders(headers);
  const part = range.kind === 'part' ? { start: range.start, end: range.end } : undefined;
  const body = await blobs.read(item.hubId, item.sha256, part);
  if (!body) throw contentErrors.notFound('the content was deleted a moment ago').withHeaders(headers);
  reply.type(item.mediaType);
  if (part) {
    reply
      .code(206)
      .header('Content-Range', `bytes ${part.start}-${part.end}/${size}`)
      .header('Content-Length', String(part.end - part.start + 1));
  } else reply.header('Content-Length', String(size));
  return reply.send(body);
}
