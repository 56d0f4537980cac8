/**
 * A report's days as CSV (the Reports page's `Download CSV` and `chatlog report --csv`): UTF-8 with
 * a byte order mark, so that Excel in Japan opens it; one row a day, the API's field names as the
 * header, response times in seconds (empty when none was answered).
 */
import type { Report } from './reports.compute.js';

const BOM = '\uFEFF';
export const REPORT_CSV_COLUMNS = [
  'day',
  'fromFriends',
  'fromAccount',
  'contacts',
  'newContacts',
  'waits',
  'answered',
  'unanswered',
  'medianResponseSeconds',
  'p90ResponseSeconds',
] as const;

const seconds = (value: number | null) => (value === null ? '' : String(value));

export function reportCsv(report: Report): string {
  let out = `${BOM}${REPORT_CSV_COLUMNS.join(',')}\r\n`;
  for (const d of report.days) {
    out += `${[
      d.day,
      d.fromFriends,
      d.fromAccount,
      d.contacts,
      d.newContacts,
      d.waits,
      d.answered,
      d.unanswered,
      seconds(d.responseSeconds.median),
      seconds(d.responseSeconds.p90),
    ].join(',')}\r\n`;
  }
  return out;
}
