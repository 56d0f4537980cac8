/**
 * `chatlog report <hubId> --from D --to D [--tz Z] [--json|--csv]` (CONTRACT §17): the figures of
 * GET /api/line/:hubId/reports from the store itself: a summary and a table of the days, the API's
 * JSON, or the Reports page's CSV.
 */
import type { Command } from 'commander';
import { UserError } from '../lib/errors.js';
import { ReportColumns } from '../modules/reports/reports.columns.js';
import type { Report, ReportFigures } from '../modules/reports/reports.compute.js';
import { reportCsv } from '../modules/reports/reports.csv.js';
import { buildReport, readReportDays } from '../modules/reports/reports.usecases.js';
import { type GlobalOptions, withRuntime } from './runtime.js';

const seconds = (value: number | null) => {
  if (value === null) return '-';
  if (value < 60) return `${value.toFixed(0)} s`;
  if (value < 3600) return `${(value / 60).toFixed(1)} min`;
  return `${(value / 3600).toFixed(1)} h`;
};

const COLUMNS: Array<[string, (f: ReportFigures) => string]> = [
  ['friends', (f) => String(f.fromFriends)],
  ['account', (f) => String(f.fromAccount)],
  ['contacts', (f) => String(f.contacts)],
  ['new', (f) => String(f.newContacts)],
  ['waits', (f) => String(f.waits)],
  ['answered', (f) => String(f.answered)],
  ['unanswered', (f) => String(f.unanswered)],
  ['median', (f) => seconds(f.responseSeconds.median)],
  ['p90', (f) => seconds(f.responseSeconds.p90)],
];

/** The summary and the days as aligned text, for a terminal. */
export function reportText(report: Report): string {
  const rows = [
    ['day', ...COLUMNS.map(([name]) => name)],
    ...report.days.map((d) => [d.day, ...COLUMNS.map(([, cell]) => cell(d))]),
    ['total', ...COLUMNS.map(([, cell]) => cell(report.totals))],
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  const line = (row: string[]) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const t = report.totals;
  return [
    `hub ${report.hubId}, ${report.from} to ${report.to} (${report.timeZone})`,
    `${t.fromFriends} messages from friends, ${t.fromAccount} from the account; ${t.contacts} contacts (${t.newContacts} new)`,
    `${t.waits} waits: ${t.answered} answered (median ${seconds(t.responseSeconds.median)}, p90 ${seconds(t.responseSeconds.p90)}), ${t.unanswered} not answered by the end of ${report.to}`,
    '',
    ...rows.map(line),
    '',
  ].join('\n');
}

export function registerReportCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command('report <hubId>')
    .description(
      "how well the account answered from --from to --to (the hub's days, or --tz's): messages, contacts, waits and response times per day, as GET /api/line/:hubId/reports gives them",
    )
    .requiredOption('--from <day>', 'the first day, YYYY-MM-DD')
    .requiredOption('--to <day>', 'the last day, YYYY-MM-DD (at most 366 days in all)')
    .option('--tz <zone>', "an IANA time zone to read the days in, instead of the hub's")
    .option('--json', "print the API's JSON")
    .option('--csv', 'print the days as CSV (UTF-8 with a byte order mark, as the Reports page downloads it)')
    .action(
      async (
        hubId: string,
        options: { from: string; to: string; tz?: string; json?: boolean; csv?: boolean },
      ) => {
        if (options.json && options.csv) throw new UserError('--json and --csv: choose one');
        await withRuntime(globals(), async (runtime) => {
          const hub = await runtime.hubs.require(hubId);
          const params = new URLSearchParams({ from: options.from, to: options.to });
          if (options.tz !== undefined) params.set('tz', options.tz);
          const days = await readReportDays(params, hub.timeZone, undefined, {
            from: '--from',
            to: '--to',
            tz: '--tz',
          });
          const report = await buildReport(new ReportColumns(runtime.store), { hubId, ...days });
          if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
          else if (options.csv) process.stdout.write(reportCsv(report));
          else process.stdout.write(reportText(report));
        });
      },
    );
}
