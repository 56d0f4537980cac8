/**
 * Messages as CSV (CONTRACT §14's `Download CSV`): UTF-8 with a byte order mark, so that Excel in
 * Japan opens it without mojibake; CRLF line ends and RFC 4180 quoting; one row per message with
 * the columns below. A text cell that would start a formula in a spreadsheet (`=`, `+`, `-`, `@`,
 * a tab or a carriage return first) gets a leading `'`, as OWASP advises for CSV meant for Excel:
 * a customer's message must not run as a formula on the business's computer. Streamed in chunks.
 */
import { formatTimestamp, wallClockIn } from '../../lib/calendar.js';
import type { MessageRow } from '../../store/store.js';

export const CSV_COLUMNS = [
  'createdAt (hub time zone)',
  'createdAt (UTC)',
  'lineId',
  'vid',
  'name',
  'sender',
  'contentType',
  'msg',
] as const;

const BOM = '\uFEFF';
const CHUNK_CHARS = 64 * 1024;
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One text cell: guarded against formulas, quoted when it holds a quote, comma or line break. */
export function csvCell(text: string): string {
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export async function* serializeCsv(
  batches: AsyncIterable<MessageRow[]>,
  timeZone: string,
): AsyncGenerator<Buffer> {
  const wallClock = wallClockIn(timeZone);
  let out = `${BOM}${CSV_COLUMNS.join(',')}\r\n`;
  for await (const batch of batches) {
    for (const row of batch) {
      out += `${wallClock(row.createdAt)},${formatTimestamp(row.createdAt)},${csvCell(row.lineId)},${csvCell(row.vid)},${csvCell(row.name)},${csvCell(row.sender)},${csvCell(row.contentType)},${csvCell(row.msg)}\r\n`;
    }
    if (out.length >= CHUNK_CHARS) {
      yield Buffer.from(out, 'utf8');
      out = '';
    }
  }
  yield Buffer.from(out, 'utf8');
}
