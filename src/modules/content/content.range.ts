/**
 * HTTP byte ranges (RFC 9110 §14) for the content endpoint: one range is served as 206; a request
 * for several ranges is served whole (a server may ignore Range), as is a Range header that is not
 * a bytes range at all; a bytes range wholly past the end is 416.
 */

export type RangeAnswer =
  | { kind: 'whole' }
  | { kind: 'part'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const ONE_RANGE = /^bytes=(\d{0,15})-(\d{0,15})$/;

/** What to serve of `size` bytes for the Range header `header` (undefined: none). */
export function rangeOf(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return { kind: 'whole' };
  const match = ONE_RANGE.exec(header.trim().replace(/\s+/g, ''));
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // The last N bytes.
    const n = Number(last);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end };
}

/** RFC 6266 `Content-Disposition: attachment` with the file name in `filename*` (UTF-8) and an ASCII fallback. */
export function attachment(fileName: string): string {
  const cleaned =
    fileName
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
      .replace(/[/\\]/g, '_')
      .replace(/\p{Cc}/gu, '_') || 'file';
  const fallback = cleaned.replace(/[^\u0020-\u007e]/g, '_').replace(/["%;]/g, '_');
  const encoded = encodeURIComponent(cleaned).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
