/**
 * PostgreSQL's binary COPY format (`COPY … TO STDOUT (FORMAT binary)`), taken apart once for every
 * reader of this folder: the read API's answers (postgres.answers.ts), the change feed's pages
 * (postgres.feed.ts) and the media chunks (content/content-store.postgres.ts). A header (signature,
 * flags, extension), then tuples (a field count, then each field's length, -1 for NULL, and bytes),
 * then the trailer (a field count of -1). Fields are found, never copied: a reader is told where each
 * starts in its buffer and how long it is.
 */

/** What a binary COPY's output starts with, before its flags and header extension. */
export const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, the flags and the extension's length: what the header's own length is read from. */
export const COPY_HEADER_BYTES = COPY_SIGNATURE.length + 8;

/** The trailer was read (readTuple). */
export const TRAILER = -1;

/**
 * Where the first tuple starts; undefined while `data` does not hold the whole header yet. Throws
 * `malformed()` when `data` is not a binary COPY.
 */
export function copyHeaderEnd(data: Buffer, malformed: () => Error): number | undefined {
  if (data.length < COPY_HEADER_BYTES) return undefined;
  if (!data.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE)) throw malformed();
  const end = COPY_HEADER_BYTES + data.readUInt32BE(COPY_SIGNATURE.length + 4);
  return end <= data.length ? end : undefined;
}

/**
 * The tuple at `at`, of `columns` fields: each field's start and length (-1: NULL) into `starts`
 * and `lengths`. Returns where the next tuple starts, TRAILER after the trailer (which must end
 * `data`), or undefined when `data` ends inside the tuple. Throws `malformed()` on a tuple of another
 * width or a negative length.
 */
export function readTuple(
  data: Buffer,
  at: number,
  columns: number,
  starts: Int32Array,
  lengths: Int32Array,
  malformed: () => Error,
): number | undefined {
  if (at + 2 > data.length) return undefined;
  const fields = data.readInt16BE(at);
  at += 2;
  if (fields === -1) {
    if (at !== data.length) throw malformed();
    return TRAILER;
  }
  if (fields !== columns) throw malformed();
  for (let c = 0; c < columns; c++) {
    if (at + 4 > data.length) return undefined;
    const length = data.readInt32BE(at);
    if (length < -1) throw malformed();
    at += 4;
    starts[c] = at;
    lengths[c] = length;
    if (length > 0) at += length;
    if (at > data.length) return undefined;
  }
  return at;
}

/** A BIGINT (8 bytes) or INTEGER (4) field; every value chatlog stores is below 2^53. */
export function copyInteger(data: Buffer, start: number, length: number, malformed: () => Error): number {
  if (length === 8) return data.readInt32BE(start) * 2 ** 32 + data.readUInt32BE(start + 4);
  if (length === 4) return data.readInt32BE(start);
  throw malformed();
}
