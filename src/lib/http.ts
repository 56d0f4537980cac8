/** Small HTTP helpers: content negotiation, ETags, query strings, URL redaction. */
import { createHash } from 'node:crypto';
import {
  type BrotliCompress,
  createBrotliCompress,
  createGzip,
  type Gzip,
  constants as zlibConstants,
} from 'node:zlib';

/** The Content-Type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';
/** Every answer of the API: no shared or browser cache keeps it (CONTRACT §3). */
export const NO_STORE = 'private, no-store';

export type ContentEncoding = 'br' | 'gzip' | 'identity';

/**
 * Picks the response encoding from Accept-Encoding: the highest q-value among br, gzip and
 * identity, br winning ties (smaller and, at the quality used, as fast as gzip).
 */
export function negotiateEncoding(acceptEncoding: string | undefined): ContentEncoding {
  if (!acceptEncoding) return 'identity';
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.trim().split(';');
    const name = rawName?.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const [k, v] = param.trim().split('=');
      if (k?.trim().toLowerCase() === 'q') {
        const value = Number(v);
        q = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
      }
    }
    weights.set(name, q);
  }
  const weightOf = (name: string) => weights.get(name) ?? weights.get('*') ?? 0;
  const candidates: Array<[ContentEncoding, number]> = [
    ['br', weightOf('br')],
    ['gzip', weightOf('gzip')],
  ];
  const best = candidates.reduce((a, b) => (b[1] > a[1] ? b : a));
  const identity = weights.get('identity') ?? (weights.has('*') ? weightOf('*') : 1);
  if (best[1] > 0 && best[1] >= identity) return best[0];
  return 'identity';
}

/**
 * Levels picked by measurement on a month of answers (15.9 MB of JSON): gzip 3 runs at 128 MB/s to
 * 12.9% of the size (level 6: 68 MB/s, 10.9%); brotli 1 at 166 MB/s to 14.8% (quality 3: 99 MB/s,
 * 12.2%; 4: 78 MB/s, 11.7%). An answer shares the CPU with its query, so the cheap levels keep
 * compressed streams within 30% of plain ones (`npm run bench`, Q2).
 */
const GZIP_LEVEL = 3;
const BROTLI_QUALITY = 1;

export function createCompressor(encoding: 'br' | 'gzip'): Gzip | BrotliCompress {
  if (encoding === 'gzip') return createGzip({ level: GZIP_LEVEL });
  return createBrotliCompress({
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      // A 1 MiB window (instead of 4 MiB) bounds each stream's memory; the ratio barely moves.
      [zlibConstants.BROTLI_PARAM_LGWIN]: 20,
    },
  });
}

/**
 * The size of the slices a compressor is fed (compressorInput). Brotli at quality 1 compresses each
 * slice on its own terms: on 10 days of the bench's hub (5.8 MB), 64 KiB slices gave 851 KB, the
 * serializer's chunks (about 100 KiB) 813 KB, 256 KiB 780 KB, faster too; gzip 729 KB whatever.
 */
export const COMPRESSOR_SLICE_BYTES = 256 * 1024;

/**
 * A streamed answer as its compressor's input: slices of exactly COMPRESSOR_SLICE_BYTES (the last
 * one shorter), whatever chunks the answer came in, and `flush` after the first slice, so that the
 * client sees bytes at once, not after megabytes. Brotli's output at this quality depends on how
 * its input is cut; cut the same way, an answer made on an answer thread (SQLite's pieces) and by
 * the serializer (its batches) compress to the same bytes.
 */
export async function* compressorInput(
  chunks: AsyncIterable<Buffer>,
  flush: () => void,
): AsyncGenerator<Buffer> {
  let flushed = false;
  let rest: Buffer | undefined;
  for await (const chunk of chunks) {
    const data = rest ? Buffer.concat([rest, chunk]) : chunk;
    let offset = 0;
    for (; data.length - offset >= COMPRESSOR_SLICE_BYTES; offset += COMPRESSOR_SLICE_BYTES) {
      yield data.subarray(offset, offset + COMPRESSOR_SLICE_BYTES);
      if (!flushed) {
        flushed = true;
        flush();
      }
    }
    rest = offset < data.length ? data.subarray(offset) : undefined;
  }
  if (rest) yield rest;
}

/** A weak ETag for one answer: it changes whenever the hub's data or the question changes. */
export function weakEtag(parts: ReadonlyArray<string | number | undefined>): string {
  const digest = createHash('sha256')
    .update(parts.map((p) => (p === undefined ? '-' : String(p))).join('\u0000'))
    .digest('base64url');
  return `W/"${digest.slice(0, 27)}"`;
}

/** True when If-None-Match names this ETag (weak comparison) or is "*". */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/** The raw query string of a request target, without "?" and fragment. */
export function rawQueryOf(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const end = url.indexOf('#', start);
  return url.slice(start + 1, end < 0 ? undefined : end);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

const KEY_SHAPE = /chl_[0-9A-Za-z]{28}/g;

/** Query parameters a log line never shows: the key, and search words (a person's name, often). */
const HIDDEN_PARAMS = new Set(['apikey', 'q']);

/**
 * The URL with the value of every `apikey` parameter (and of `q`, search words: once a person is
 * erased, no log line may still hold their name) replaced by [REDACTED], read the way the checks
 * read it (URLSearchParams: a leading "?" is dropped, names are percent-decoded, any case), and,
 * as a backstop, anything shaped like a key replaced wherever it stands.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  const base = start < 0 ? url : url.slice(0, start);
  if (start < 0) return base.replace(KEY_SHAPE, '[REDACTED]');
  const query = url.slice(start + 1);
  const redacted = query
    .split('&')
    .map((pair, index) => {
      const eq = pair.indexOf('=');
      let name = eq < 0 ? pair : pair.slice(0, eq);
      if (index === 0) name = name.replace(/^\?/, '');
      return HIDDEN_PARAMS.has(safeDecode(name).trim().toLowerCase())
        ? `${eq < 0 ? pair : pair.slice(0, eq)}=[REDACTED]`
        : pair;
    })
    .join('&');
  return `${base}?${redacted}`.replace(KEY_SHAPE, '[REDACTED]');
}

/**
 * A query string as a person reads it (the audit keeps and shows it so): each name and value
 * decoded, `q=予約` rather than `q=%E4%BA%88%E7%B4%84`, with only what would change its meaning or
 * hide a character written as %XX: `%`, `&`, `=`, `+`, `#`, white space and control characters. Read
 * back with URLSearchParams, it gives the same names and values. Undecodable input stays as it was.
 */
export function readableQuery(query: string): string {
  const part = (text: string) => text.replace(/[%&=+#\s\p{Cc}]/gu, (c) => encodeURIComponent(c));
  return [...new URLSearchParams(query)].map(([name, value]) => `${part(name)}=${part(value)}`).join('&');
}
