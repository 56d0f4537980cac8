/**
 * Where a V8 CPU profile's time went (`CHATLOG_BENCH_CPU_PROF=<dir>` on a benchmark writes one per
 * thread of the server): the functions with the most time of their own, the files and packages
 * they are in, and, with --within NAME, the time under each function called by a function of that
 * name (inclusive), so one step of a request can be split into its parts; with --callers NAME, the
 * self time of the frames of that name by the function that called them (two levels up); with
 * --inclusive a,b,c, the time under the frames of each name (not counted twice when nested).
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 25] [--within handler] [--callers all]
 */
import fs from 'node:fs';
import { readArgs } from './args.js';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error(
    'usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 25] [--within NAME]',
  );
  process.exit(2);
}
const args = readArgs(
  'profile-summary <file> [--top 25] [--within NAME]',
  { values: ['top', 'within', 'callers', 'inclusive'] },
  process.argv.slice(3),
);
const top = args.number('top', 25, { min: 1, whole: true });
const within = args.string('within');
const callers = args.string('callers');
const inclusiveNames = args.string('inclusive')?.split(',');

const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

// Each sample's time (µs) to its node.
const self = new Map<number, number>();
profile.samples.forEach((id, index) => {
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()]
  .filter(([id]) =>
    ['(idle)', '(program)', '(garbage collector)'].includes(byId.get(id)?.callFrame.functionName ?? ''),
  )
  .map(([id, us]) => [byId.get(id)?.callFrame.functionName, us] as const);

const short = (url: string) => {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const src = url.indexOf('/dist/');
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '').replace(/^.*\/(src|bench)\//, '$1/') || '(native)';
};
const packageOf = (url: string) => {
  if (url === '') return '(native or V8)';
  if (url.startsWith('node:')) return url;
  const modules = url.lastIndexOf('node_modules/');
  if (modules < 0) return url.includes('/dist/') || url.includes('/src/') ? 'chatlog' : short(url);
  const rest = url.slice(modules + 'node_modules/'.length).split('/');
  return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
};

const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
/** Whether a frame is under another frame of function `name` (its time is counted there already). */
const nestedIn = (id: number, name: string) => {
  for (let at = parent.get(id); at !== undefined; at = parent.get(at)) {
    if (byId.get(at)?.callFrame.functionName === name) return true;
  }
  return false;
};
const functions = new Map<string, number>();
const packages = new Map<string, number>();
for (const [id, us] of self) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  add(functions, `${frame.functionName || '(anonymous)'} ${short(frame.url)}:${frame.lineNumber + 1}`, us);
  add(packages, packageOf(frame.url), us);
}

const ms = (us: number) => (us / 1000).toFixed(1).padStart(8);
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n## ${title}`);
  for (const [key, us] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${ms(us)} ms ${pct(us)}  ${key}`);
  }
};
console.log(
  `${file}: ${(total / 1000).toFixed(0)} ms sampled; ${idle.map(([name, us]) => `${name} ${ms(us).trim()} ms`).join(', ')}`,
);
print('self time by package', packages);
print('self time by function', functions);

if (within) {
  // Inclusive time of each child of every frame named `within`, over all such frames.
  const inclusive = new Map<number, number>();
  for (const [id, us] of self) {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      add(inclusive as never, at as never, us);
  }
  const children = new Map<string, number>();
  let under = 0;
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== within) continue;
    // Not counted twice when the frame is under another of the same name.
    if (nestedIn(node.id, within)) continue;
    under += inclusive.get(node.id) ?? 0;
    add(children, '(self)', self.get(node.id) ?? 0);
    for (const child of node.children ?? []) {
      const frame = byId.get(child)?.callFrame;
      if (!frame) continue;
      add(
        children,
        `${frame.functionName || '(anonymous)'} ${short(frame.url)}:${frame.lineNumber + 1}`,
        inclusive.get(child) ?? 0,
      );
    }
  }
  print(`inside ${within} (${(under / 1000).toFixed(1)} ms in all, ${pct(under).trim()})`, children);
}

if (callers) {
  const by = new Map<string, number>();
  const name = (id: number | undefined) => {
    const frame = id === undefined ? undefined : byId.get(id)?.callFrame;
    return frame
      ? `${frame.functionName || '(anonymous)'} ${short(frame.url)}:${frame.lineNumber + 1}`
      : '(root)';
  };
  let all = 0;
  for (const [id, us] of self) {
    if (byId.get(id)?.callFrame.functionName !== callers) continue;
    all += us;
    const up = parent.get(id);
    add(by, `${name(up)} < ${name(up === undefined ? undefined : parent.get(up))}`, us);
  }
  print(`callers of ${callers} (${(all / 1000).toFixed(1)} ms, ${pct(all).trim()})`, by);
}

if (inclusiveNames) {
  const under = new Map<number, number>();
  for (const [id, us] of self) {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      under.set(at, (under.get(at) ?? 0) + us);
  }
  const totals = new Map<string, number>();
  for (const name of inclusiveNames) {
    let sum = 0;
    for (const node of profile.nodes) {
      if (node.callFrame.functionName === name && !nestedIn(node.id, name)) sum += under.get(node.id) ?? 0;
    }
    totals.set(name, sum);
  }
  print('inclusive time', totals);
}
