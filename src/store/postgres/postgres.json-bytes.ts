/**
 * JSON written as bytes from PostgreSQL's binary COPY: text values arrive as their UTF-8 bytes and
 * go into the JSON as they are, escaped where JSON needs it, never decoded into JavaScript strings
 * and encoded again (the change feed's pages, postgres.feed.ts; the read API's answers,
 * postgres.answers.ts).
 */

const DAY_MS = 86_400_000;
/** The first instant of year 0 and the last of year 9999: toISOString's four-digit years. */
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;
/** `YYYY-MM-DDT` of days met lately (an answer's messages come a few days at a time). */
const dayPrefixes = new Map<number, Buffer>();
const DAY_PREFIXES_KEPT = 4096;

/** The two characters JSON.stringify writes for these control characters. */
const SHORT_ESCAPES: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 };
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * The page's bytes, appended into one growing buffer: ASCII text, and values of `data` as they are
 * or as JSON strings. Short ASCII is copied a character at a time: a native call per key cost more.
 */
export class JsonBytes {
  private buffer: Buffer;
  private used = 0;

  constructor(expected: number) {
    this.buffer = Buffer.allocUnsafe(expected);
  }

  get length(): number {
    return this.used;
  }

  byte(value: number): void {
    this.room(1);
    this.buffer[this.used++] = value;
  }

  /** Bytes made once (a key, say): `ascii`'s work without reading a string. */
  constant(bytes: Uint8Array): void {
    this.room(bytes.length);
    const out = this.buffer;
    let at = this.used;
    for (let i = 0; i < bytes.length; i++) out[at++] = bytes[i] as number;
    this.used = at;
  }

  ascii(text: string): void {
    this.room(text.length);
    const out = this.buffer;
    let at = this.used;
    for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
    this.used = at;
  }

  /** `length` bytes of `data` from `start`, as they are. */
  raw(data: Buffer, start: number, length: number): void {
    this.room(length);
    this.used += data.copy(this.buffer, this.used, start, start + length);
  }

  /**
   * `ms` (epoch milliseconds) as toISOString writes it, `YYYY-MM-DDTHH:MM:SS.mmmZ`, without quotes:
   * the day's part made once per day, the rest digit by digit.
   */
  time(ms: number): void {
    if (!(ms >= FIRST_MS && ms <= LAST_MS && Number.isInteger(ms))) {
      this.ascii(new Date(ms).toISOString());
      return;
    }
    const day = Math.floor(ms / DAY_MS);
    let prefix = dayPrefixes.get(day);
    if (prefix === undefined) {
      if (dayPrefixes.size >= DAY_PREFIXES_KEPT) dayPrefixes.clear();
      prefix = Buffer.from(new Date(day * DAY_MS).toISOString().slice(0, 11), 'latin1');
      dayPrefixes.set(day, prefix);
    }
    this.constant(prefix);
    let rest = ms - day * DAY_MS;
    const millis = rest % 1000;
    rest = (rest - millis) / 1000;
    const seconds = rest % 60;
    rest = (rest - seconds) / 60;
    const minutes = rest % 60;
    const hours = (rest - minutes) / 60;
    this.room(13);
    const out = this.buffer;
    let at = this.used;
    out[at++] = 0x30 + Math.floor(hours / 10);
    out[at++] = 0x30 + (hours % 10);
    out[at++] = 0x3a;
    out[at++] = 0x30 + Math.floor(minutes / 10);
    out[at++] = 0x30 + (minutes % 10);
    out[at++] = 0x3a;
    out[at++] = 0x30 + Math.floor(seconds / 10);
    out[at++] = 0x30 + (seconds % 10);
    out[at++] = 0x2e;
    out[at++] = 0x30 + Math.floor(millis / 100);
    out[at++] = 0x30 + (Math.floor(millis / 10) % 10);
    out[at++] = 0x30 + (millis % 10);
    out[at++] = 0x5a;
    this.used = at;
  }

  /**
   * A text value's UTF-8 bytes (`length` of `data` from `start`; -1: NULL) as a JSON string,
   * escaped as JSON.stringify escapes it: `"`, `\` and control characters; everything else, UTF-8
   * of any script included, as it is. NULL is "".
   */
  quoted(data: Buffer, start: number, length: number): void {
    const end = start + Math.max(0, length);
    // At most six bytes per byte (\u00XX), and the quotes.
    this.room((end - start) * 6 + 2);
    const out = this.buffer;
    let at = this.used;
    out[at++] = 0x22;
    // Byte by byte: most values are short, and a native copy per value cost more than the loop.
    for (let i = start; i < end; i++) {
      const byte = data[i] as number;
      if (byte >= 0x20 && byte !== 0x22 && byte !== 0x5c) {
        out[at++] = byte;
        continue;
      }
      out[at++] = 0x5c;
      const short = byte === 0x22 || byte === 0x5c ? byte : SHORT_ESCAPES[byte];
      if (short !== undefined) out[at++] = short;
      else {
        out[at++] = 0x75;
        out[at++] = 0x30;
        out[at++] = 0x30;
        out[at++] = HEX[byte >> 4] as number;
        out[at++] = HEX[byte & 15] as number;
      }
    }
    out[at++] = 0x22;
    this.used = at;
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** What was written, and a new buffer of `expected` bytes to go on in. */
  take(expected: number): Buffer {
    const written = this.bytes();
    this.buffer = Buffer.allocUnsafe(expected);
    this.used = 0;
    return written;
  }

  private room(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.used + bytes, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.used);
    this.buffer = grown;
  }
}
