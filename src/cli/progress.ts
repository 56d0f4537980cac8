/**
 * Progress on stderr: a bar on a terminal, a plain line every 10% otherwise. A command that goes
 * over its input more than once (import: checking, then storing) starts each pass anew, with the
 * same total, so the totals shown are the input's own.
 */
import cliProgress from 'cli-progress';
import type { ImportProgress } from '../modules/ingest/import.usecases.js';

function human(n: number, unit: 'bytes' | 'records'): string {
  if (unit === 'records') return `${n.toLocaleString('en-US')} message${n === 1 ? '' : 's'}`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): ImportProgress {
  if (stream.isTTY) {
    let bar: cliProgress.SingleBar | undefined;
    let unit = '';
    const stop = () => {
      bar?.stop();
      bar = undefined;
    };
    return {
      start: (total, u, pass) => {
        stop();
        unit = u === 'bytes' ? 'bytes' : 'messages';
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: `${label}${pass ? ` (${pass})` : ''} [{bar}] {percentage}% | {value}/{total} {unit} | ETA {eta_formatted}`,
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(Math.max(total, 1), 0, { unit });
      },
      update: (done) => bar?.update(done, { unit }),
      stop,
    };
  }
  let total = 0;
  let unit: 'bytes' | 'records' = 'records';
  let nextTenth = 1;
  let prefix = label;
  // "30 of 1,200 messages", "1.0 MiB of 2.4 MiB".
  const part = (n: number) => (unit === 'records' ? n.toLocaleString('en-US') : human(n, unit));
  return {
    start: (t, u, pass) => {
      total = t;
      unit = u;
      nextTenth = 1;
      prefix = pass ? `${label}: ${pass}` : label;
      stream.write(`${label}: ${pass ?? 'reading'} ${human(t, u)}\n`);
    },
    update: (done) => {
      if (total <= 0) return;
      // One line per tenth reached; a jump over several (a small file) is one line, not one each.
      const tenth = Math.min(10, Math.floor((done * 10) / total));
      if (tenth < nextTenth) return;
      stream.write(`${prefix} ${tenth * 10}% (${part(Math.min(done, total))} of ${human(total, unit)})\n`);
      nextTenth = tenth + 1;
    },
    stop: () => undefined,
  };
}
