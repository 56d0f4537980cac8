/** Progress on stderr: a bar on a terminal, a plain line every 10% otherwise. */
import cliProgress from 'cli-progress';
import type { ImportProgress } from '../modules/ingest/import.usecases.js';

function human(n: number, unit: 'bytes' | 'records'): string {
  if (unit === 'records') return `${n.toLocaleString('en-US')} messages`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): ImportProgress {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${label} [{bar}] {percentage}% | {value}/{total} {unit} | ETA {eta_formatted}`,
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    let unit = '';
    return {
      start: (total, u) => {
        unit = u === 'bytes' ? 'bytes' : 'messages';
        bar.start(Math.max(total, 1), 0, { unit });
      },
      update: (done) => bar.update(done, { unit }),
      stop: () => bar.stop(),
    };
  }
  let total = 0;
  let unit: 'bytes' | 'records' = 'records';
  let nextTenth = 1;
  return {
    start: (t, u) => {
      total = t;
      unit = u;
      stream.write(`${label}: reading ${human(t, u)}\n`);
    },
    update: (done) => {
      if (total <= 0) return;
      while (done >= (total * nextTenth) / 10 && nextTenth <= 10) {
        stream.write(
          `${label}: ${nextTenth * 10}% (${human(Math.min(done, total), unit)} of ${human(total, unit)})\n`,
        );
        nextTenth += 1;
      }
    },
    stop: () => undefined,
  };
}
