/**
 * The account screen's `Reports` page of a hub (CONTRACT §17): the range's totals, then three charts
 * (messages per day, median response time per day, the weekday × hour grid), each an SVG drawn here
 * on the server (no script, no library, nothing from a CDN: the page works on a network without the
 * internet and under the screen's strict CSP) with a title and a description for screen readers,
 * and its numbers a click away (`Show table`, a <details>). `Download CSV` gives the days.
 */
import { escapeHtml } from '../../lib/html.js';
import type { Report, ReportFigures } from '../reports/reports.compute.js';
import type { HubPage } from './account.conversations.pages.js';
import { conversationsPath } from './account.conversations.pages.js';
import { breakableName, cellLabel, page, signedInHeader } from './account.pages.js';
import type { ReportWords } from './account.reports.i18n.js';

export const reportsPath = (hubId: string) => `/account/hubs/${encodeURIComponent(hubId)}/reports`;

export interface ReportsPageArgs extends HubPage {
  rw: ReportWords;
  /** The days asked, as typed (the form shows them again). */
  from: string;
  to: string;
  report: Report | undefined;
  /** Why the days cannot be read, when they cannot. */
  problem?: string | undefined;
}

// The plot spans the width; the scale's top is written above its line, at the left (a column of
// labels beside the plot clipped long ones: "277.8 h", "277.8 時間"). Room for text of 22 units,
// the size a phone's narrow screen gets (account.css).
const WIDTH = 720;
const HEIGHT = 230;
const LEFT = 8;
const BOTTOM = 34;
const TOP = 30;

const number = (value: number, language: string) => value.toLocaleString(language);

/** A rounded-up scale maximum: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function svgText(x: number, y: number, text: string, anchor: 'start' | 'middle' | 'end' = 'start'): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" text-anchor="${anchor}">${escapeHtml(text)}</text>`;
}

/** Bars per day, one series or two side by side; null values leave a gap. */
function barChart(
  id: string,
  title: string,
  desc: string,
  days: string[],
  series: Array<{ className: string; values: Array<number | null> }>,
  label: (value: number) => string,
): string {
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values.map((v) => v ?? 0))));
  const plotWidth = WIDTH - LEFT - 8;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(0.5, (slot * 0.8) / series.length);
  const bars = series
    .flatMap((s, si) =>
      s.values.map((value, i) => {
        if (value === null || value <= 0) return '';
        const h = (value / max) * plotHeight;
        const x = LEFT + i * slot + slot * 0.1 + si * barWidth;
        return `<rect class="${s.className}" x="${x.toFixed(2)}" y="${(TOP + plotHeight - h).toFixed(2)}" width="${barWidth.toFixed(2)}" height="${h.toFixed(2)}"></rect>`;
      }),
    )
    .join('');
  const axis = `<line class="axis" x1="${LEFT}" y1="${TOP + plotHeight}" x2="${WIDTH - 8}" y2="${TOP + plotHeight}"></line>
<line class="grid" x1="${LEFT}" y1="${TOP}" x2="${WIDTH - 8}" y2="${TOP}"></line>
${svgText(LEFT, TOP - 8, label(max))}
${svgText(LEFT, HEIGHT - 8, days[0] ?? '')}${days.length > 1 ? svgText(WIDTH - 8, HEIGHT - 8, days.at(-1) ?? '', 'end') : ''}`;
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc">
<title id="${id}-title">${escapeHtml(title)}</title>
<desc id="${id}-desc">${escapeHtml(desc)}</desc>
${axis}
${bars}
</svg>`;
}

/** The weekday × hour grid: each cell's darkness is its share of the busiest cell. */
function hoursChart(id: string, rw: ReportWords, hours: number[][], desc: string): string {
  const cell = 26;
  const left = 52;
  const top = 30;
  const max = Math.max(1, ...hours.flat());
  const cells = hours
    .flatMap((row, w) =>
      row.map((count, h) => {
        const opacity = count === 0 ? 0 : 0.12 + 0.88 * (count / max);
        return `<rect class="heat" x="${left + h * cell}" y="${top + w * cell}" width="${cell - 2}" height="${cell - 2}" fill-opacity="${opacity.toFixed(3)}"></rect>`;
      }),
    )
    .join('');
  const rowLabels = rw.weekdays
    .map((name, w) => svgText(left - 6, top + w * cell + 17, name, 'end'))
    .join('');
  const hourLabels = [0, 6, 12, 18, 23]
    .map((h) => svgText(left + h * cell + 12, 22, String(h), 'middle'))
    .join('');
  const width = left + 24 * cell + 4;
  const height = top + 7 * cell + 4;
  return `<svg class="chart hours" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc">
<title id="${id}-title">${escapeHtml(rw.hoursChart)}</title>
<desc id="${id}-desc">${escapeHtml(desc)}</desc>
${hourLabels}${rowLabels}
<g class="cells">${cells}</g>
</svg>`;
}

function figuresList(rw: ReportWords, f: ReportFigures, language: string): string {
  const item = (name: string, value: string) =>
    `<div><dt>${escapeHtml(name)}</dt><dd>${escapeHtml(value)}</dd></div>`;
  return `<dl class="totals">
${item(rw.fromFriends, number(f.fromFriends, language))}
${item(rw.fromAccount, number(f.fromAccount, language))}
${item(rw.contacts, number(f.contacts, language))}
${item(rw.newContacts, number(f.newContacts, language))}
${item(rw.waits, number(f.waits, language))}
${item(rw.answered, number(f.answered, language))}
${item(rw.unanswered, number(f.unanswered, language))}
${item(rw.median, rw.duration(f.responseSeconds.median))}
${item(rw.p90, rw.duration(f.responseSeconds.p90))}
</dl>`;
}

/** A table of the days (columns chosen per chart), in a <details> behind `Show table`. */
function daysTable(
  caption: string,
  rw: ReportWords,
  report: Report,
  columns: Array<[string, (d: ReportFigures) => string]>,
): string {
  const header = [rw.day, ...columns.map(([name]) => name)]
    .map((name) => `<th role="columnheader" scope="col">${escapeHtml(name)}</th>`)
    .join('');
  const rows = report.days
    .map(
      (d) =>
        `<tr role="row"><th role="rowheader" scope="row">${escapeHtml(d.day)}</th>${columns
          .map(
            ([name, cell]) =>
              `<td role="cell" class="count">${cellLabel(escapeHtml(name))}<span>${escapeHtml(cell(d))}</span></td>`,
          )
          .join('')}</tr>`,
    )
    .join('\n');
  return `<details class="numbers">
<summary>${escapeHtml(rw.showTable)}</summary>
<div class="table-wrap">
<table class="keys report-days" role="table">
<caption>${escapeHtml(caption)}</caption>
<thead role="rowgroup"><tr role="row">${header}</tr></thead>
<tbody role="rowgroup">
${rows}
</tbody>
</table>
</div>
</details>`;
}

function hoursTable(rw: ReportWords, hours: number[][]): string {
  const header = [rw.weekday, ...Array.from({ length: 24 }, (_, h) => String(h))]
    .map((name) => `<th scope="col">${escapeHtml(name)}</th>`)
    .join('');
  const rows = hours
    .map(
      (row, w) =>
        `<tr><th scope="row">${escapeHtml(rw.weekdays[w] ?? '')}</th>${row.map((count) => `<td class="count">${count}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<details class="numbers">
<summary>${escapeHtml(rw.showTable)}</summary>
<div class="table-wrap">
<table class="report-hours">
<caption>${escapeHtml(rw.hoursChart)}</caption>
<thead><tr>${header}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>
</details>`;
}

function rangeForm(args: ReportsPageArgs): string {
  const { rw, hubId } = args;
  const invalid = args.problem !== undefined;
  const field = (name: 'from' | 'to') =>
    `<div class="field"><label for="${name}">${escapeHtml(rw[name])}</label><input id="${name}" name="${name}" type="date" min="0001-01-01" max="9999-12-31" value="${escapeHtml(args[name])}" required aria-describedby="${invalid ? 'range-error ' : ''}range-hint"${invalid ? ' aria-invalid="true"' : ''}></div>`;
  const csv = `${reportsPath(hubId)}.csv?${escapeHtml(new URLSearchParams({ from: args.from, to: args.to }).toString())}`;
  return `<form method="get" action="${reportsPath(hubId)}" class="report-range">
<div class="days">
${field('from')}
${field('to')}
</div>
${invalid ? `<p class="error" id="range-error" role="alert">${escapeHtml(args.problem ?? '')}</p>\n` : ''}<p class="hint" id="range-hint">${escapeHtml(rw.rangeHint)} <code class="zone">${breakableName(args.timeZone)}</code></p>
<div class="download-buttons">
<button type="submit" class="primary">${escapeHtml(rw.show)}</button>
${args.report ? `<a class="button" href="${csv}" download>${escapeHtml(rw.downloadCsv)}</a>` : ''}
</div>
</form>`;
}

export function reportsPage(args: ReportsPageArgs): string {
  const { words, rw, hubId, report, language } = args;
  let body = '';
  if (report) {
    const days = report.days.map((d) => d.day);
    const busiest = report.days.reduce<(typeof report.days)[number] | undefined>(
      (best, d) =>
        best === undefined || d.fromFriends + d.fromAccount > best.fromFriends + best.fromAccount ? d : best,
      undefined,
    );
    const slowest = report.days.reduce<(typeof report.days)[number] | undefined>(
      (worst, d) =>
        d.responseSeconds.median !== null &&
        (worst === undefined || d.responseSeconds.median > (worst.responseSeconds.median ?? 0))
          ? d
          : worst,
      undefined,
    );
    let peak: string | undefined;
    let peakCount = 0;
    for (const [w, row] of report.hours.entries()) {
      for (const [h, count] of row.entries()) {
        if (count > peakCount) {
          peakCount = count;
          peak = `${rw.weekdays[w]} ${h}:00 (${number(count, language)})`;
        }
      }
    }
    const t = report.totals;
    body = `<section aria-labelledby="totals-title" class="report-totals">
<h2 id="totals-title">${escapeHtml(rw.totals)}</h2>
${figuresList(rw, t, language)}
<p class="hint">${escapeHtml(rw.waitsExplained)}</p>
</section>
<section aria-labelledby="messages-title" class="report-chart">
<h2 id="messages-title">${escapeHtml(rw.messagesChart)}</h2>
<p class="legend"><span class="key-friends"></span>${escapeHtml(rw.fromFriends)} <span class="key-account"></span>${escapeHtml(rw.fromAccount)}</p>
${barChart(
  'messages',
  rw.messagesChart,
  rw.messagesChartDesc(
    t.fromFriends,
    t.fromAccount,
    busiest && busiest.fromFriends + busiest.fromAccount > 0 ? busiest.day : undefined,
  ),
  days,
  [
    { className: 'bar-friends', values: report.days.map((d) => d.fromFriends) },
    { className: 'bar-account', values: report.days.map((d) => d.fromAccount) },
  ],
  (v) => number(v, language),
)}
${daysTable(rw.messagesChart, rw, report, [
  [rw.fromFriends, (d) => number(d.fromFriends, language)],
  [rw.fromAccount, (d) => number(d.fromAccount, language)],
  [rw.contacts, (d) => number(d.contacts, language)],
  [rw.newContacts, (d) => number(d.newContacts, language)],
])}
</section>
<section aria-labelledby="response-title" class="report-chart">
<h2 id="response-title">${escapeHtml(rw.responseChart)}</h2>
${
  t.answered === 0
    ? `<p>${escapeHtml(rw.noAnswers)}</p>`
    : barChart(
        'response',
        rw.responseChart,
        rw.responseChartDesc(
          rw.duration(t.responseSeconds.median),
          slowest ? `${slowest.day} (${rw.duration(slowest.responseSeconds.median)})` : undefined,
        ),
        days,
        [{ className: 'bar-response', values: report.days.map((d) => d.responseSeconds.median) }],
        (v) => rw.duration(v),
      )
}
${daysTable(rw.responseChart, rw, report, [
  [rw.waits, (d) => number(d.waits, language)],
  [rw.answered, (d) => number(d.answered, language)],
  [rw.unanswered, (d) => number(d.unanswered, language)],
  [rw.median, (d) => rw.duration(d.responseSeconds.median)],
  [rw.p90, (d) => rw.duration(d.responseSeconds.p90)],
])}
</section>
<section aria-labelledby="hours-title" class="report-chart">
<h2 id="hours-title">${escapeHtml(rw.hoursChart)}</h2>
${hoursChart('hours', rw, report.hours, rw.hoursChartDesc(peak))}
${hoursTable(rw, report.hours)}
</section>`;
  }
  return page({
    language,
    words,
    title: rw.title(hubId),
    csrfToken: args.csrfToken,
    path: reportsPath(hubId),
    header: signedInHeader(words, args.email, args.csrfToken),
    body: `<p><a href="/account">${escapeHtml(rw.backToKeys)}</a> · <a href="${conversationsPath(hubId)}">${escapeHtml(rw.conversations)}</a></p>
<h1>${escapeHtml(rw.heading(hubId))}</h1>
<p>${escapeHtml(rw.intro)}</p>
${rangeForm(args)}
${body}`,
  });
}
