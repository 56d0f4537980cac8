/** What the benchmarks read of a process from /proc: its memory, open files and CPU time (Linux). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export interface ProcStatus {
  /** Resident memory now, KiB. */
  rssKb: number;
  /** Resident memory's high-water mark since the process started, KiB. */
  hwmKb: number;
  /**
   * The private part of the resident memory (heap, stacks, buffers), KiB: without the pages of
   * files the process maps, which the kernel shares and can drop (SQLite's mmap of its database).
   */
  anonKb: number;
}

export function readStatus(pid: number): ProcStatus {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
    if (!match) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(match[1]);
  };
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM'), anonKb: field('RssAnon') };
}

/** Resident memory in MiB, or 0 when the process is gone. */
export function rssMiB(pid: number | undefined): number {
  try {
    return pid === undefined ? 0 : readStatus(pid).rssKb / 1024;
  } catch {
    return 0;
  }
}

export function openFds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (CLK_TCK), the unit of /proc's CPU times; read once. */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm)": state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}

/** Samples a process's VmRSS every `everyMs` until stop(): the peak and a timeline. */
export class RssSampler {
  /** [ms since the sampler started, VmRSS KiB]. */
  readonly timeline: Array<[number, number]> = [];
  peakKb: number;
  /** The peak of the private part (ProcStatus.anonKb). */
  peakAnonKb = 0;
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs: number,
    startKb = 0,
  ) {
    this.peakKb = startKb;
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  sample(): void {
    try {
      const { rssKb, anonKb } = readStatus(this.pid);
      this.peakKb = Math.max(this.peakKb, rssKb);
      this.peakAnonKb = Math.max(this.peakAnonKb, anonKb);
      this.timeline.push([Math.round(performance.now() - this.started), rssKb]);
    } catch {
      // The process is gone; whatever was measuring it will fail on its own.
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** The whole machine's CPU seconds so far from /proc/stat: busy (all but idle and iowait), iowait. */
export function machineCpu(): { busy: number; iowait: number } {
  const fields = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const [user = 0, nice = 0, system = 0, , iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const ticks = clockTicks();
  return { busy: (user + nice + system + irq + softirq + steal) / ticks, iowait: iowait / ticks };
}

/** The process and every process below it (a cluster's workers), as pids; those gone are skipped. */
function withDescendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const all: number[] = [];
  const walk = (p: number) => {
    all.push(p);
    for (const child of children.get(p) ?? []) walk(child);
  };
  walk(pid);
  return all;
}

const cpuOrZero = (pid: number) => {
  try {
    return cpuSeconds(pid);
  } catch {
    return 0;
  }
};

/** CPU seconds of a process and its descendants so far (a server and its cluster's workers). */
export function treeCpuSeconds(pid: number): number {
  return withDescendants(pid).reduce((sum, p) => sum + cpuOrZero(p), 0);
}

/**
 * CPU seconds of every PostgreSQL process of this machine so far (its backends, WAL writer,
 * autovacuum): what a local database spends for a bench. 0 where none runs here.
 */
export function postgresCpuSeconds(): number {
  let sum = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').startsWith('postgres'))
        sum += cpuSeconds(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return sum;
}

/**
 * CPU seconds so far of each thread of `pid` and its descendants, by thread id, with the thread's
 * name (its `comm`) and `main` for a process's main thread, else its id.
 */
export function threadCpuSeconds(pid: number): Map<string, { name: string; seconds: number }> {
  const threads = new Map<string, { name: string; seconds: number }>();
  for (const process of withDescendants(pid)) {
    let tids: string[];
    try {
      tids = fs.readdirSync(`/proc/${process}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = fs.readFileSync(`/proc/${process}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        // Node names no thread: the main one is told by its id, the others by rank of CPU used.
        threads.set(`${process}/${tid}`, {
          name: tid === String(process) ? `${name} main` : `${name} ${tid}`,
          seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks(),
        });
      } catch {
        // Ended meanwhile.
      }
    }
  }
  return threads;
}

/** What each thread spent between two threadCpuSeconds readings, seconds, the busiest first. */
export function threadCpuSince(
  before: Map<string, { name: string; seconds: number }>,
  after: Map<string, { name: string; seconds: number }>,
): Map<string, number> {
  const byName = new Map<string, number>();
  for (const [tid, now] of after) {
    const spent = now.seconds - (before.get(tid)?.seconds ?? 0);
    if (spent > 0) byName.set(now.name, (byName.get(now.name) ?? 0) + spent);
  }
  return new Map([...byName.entries()].sort((a, b) => b[1] - a[1]));
}
