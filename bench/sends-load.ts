/**
 * bench/sends.ts's load: `--rate` sends a second for `--seconds` to the hub's friends, each when due
 * (as clients do), timing each 202; and a follower of the hub's change feed (long polls) that sees
 * each sent message stored, timing each from its 202. Prints one JSON line.
 *
 *   node --import tsx bench/sends-load.ts --base URL --hub H --send-key K --read-key K
 *        --friends U1,U2,... [--rate 200] [--seconds 10] [--prefix P] [--path ingest|send]
 *
 * Each answer's time is also kept by the second it was asked in, so that a cold start (the first
 * requests of a path meet code not yet compiled) shows apart: `acceptP99WarmMs` is the p99 of the
 * requests asked after the first second.
 *
 * CHATLOG_BENCH_NO_FOLLOW=1 leaves the feed alone (to see what the follower's long polls cost the server).
 */
import http from 'node:http';
import { readArgs } from './args.js';

const args = readArgs(
  'node --import tsx bench/sends-load.ts --base URL --hub H --send-key K --read-key K --friends U1,U2 [--rate 200] [--seconds 10] [--prefix P] [--path send|ingest]',
  { values: ['base', 'hub', 'send-key', 'read-key', 'friends', 'rate', 'seconds', 'prefix', 'path'] },
);
const base = new URL(args.string('base') ?? '');
const hub = args.string('hub') ?? '';
const sendKey = args.string('send-key') ?? '';
const readKey = args.string('read-key') ?? '';
const friends = (args.string('friends') ?? '').split(',');
const rate = args.number('rate', 200, { min: 1 });
const seconds = args.number('seconds', 10, { min: 1 });
const prefix = args.string('prefix') ?? `sends-${Date.now()}`;
const viaIngest = args.choice('path', ['send', 'ingest'], 'send') === 'ingest';
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(path: string, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      new URL(path, base),
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(body);
  });
}

function get(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(path, base), { agent, headers: { authorization: `Bearer ${readKey}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      })
      .on('error', reject);
  });
}

const acceptedAt = new Map<string, number>();
const storedAfter: number[] = [];
const acceptLatencies: number[] = [];
const warmLatencies: number[] = [];
/** The slowest answer of each second of the load, by the second it was asked in. */
const slowestBySecond: number[] = [];
let refused = 0;

// The feed from its end now (read through once): every message.created of ours, timed from its 202.
let cursor: string | undefined;
for (;;) {
  const page = JSON.parse(
    await get(`/api/line/${hub}/changes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`),
  ) as {
    cursor: string;
    hasMore: boolean;
  };
  cursor = page.cursor;
  if (!page.hasMore) break;
}
let following = true;
let stopBy = Number.POSITIVE_INFINITY;
const follower = (async () => {
  if (process.env.CHATLOG_BENCH_NO_FOLLOW) return;
  while (following || storedAfter.length < acceptedAt.size) {
    const text = await get(`/api/line/${hub}/changes?limit=1000&wait=1${cursor ? `&cursor=${cursor}` : ''}`);
    const page = JSON.parse(text) as {
      changes?: Array<{ type: string; message?: { msg: string } }>;
      cursor: string;
    };
    if (!page.changes) throw new Error(`the change feed answered ${text.slice(0, 300)}`);
    const now = performance.now();
    for (const change of page.changes) {
      const at = change.type === 'message.created' ? acceptedAt.get(change.message?.msg ?? '') : undefined;
      if (at !== undefined) storedAfter.push(now - at);
    }
    cursor = page.cursor;
    if (!following && performance.now() > stopBy) break;
  }
})();

let sent = 0;
const inFlight = new Set<Promise<void>>();
const started = performance.now();
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000;
    const due = Math.floor(Math.min(elapsed, seconds) * rate);
    while (sent < due) {
      const n = sent++;
      const text = `${prefix} ${n}`;
      const friend = friends[n % friends.length] ?? '';
      const t0 = performance.now();
      const request = viaIngest
        ? post(`/ingest/line/${hub}/messages`, sendKey, JSON.stringify([{ lineId: friend, msg: text }]))
        : post(
            `/api/line/${hub}/contacts/${friend}/messages`,
            sendKey,
            JSON.stringify({ messages: [{ type: 'text', text }] }),
          );
      const done = request.then(({ status }) => {
        const took = performance.now() - t0;
        acceptLatencies.push(took);
        const second = Math.floor((t0 - started) / 1000);
        if (second >= 1) warmLatencies.push(took);
        slowestBySecond[second] = Math.max(slowestBySecond[second] ?? 0, took);
        if (status === 202 || status === 200) acceptedAt.set(text, t0 + took);
        else refused += 1;
      });
      inFlight.add(done);
      void done.then(() => inFlight.delete(done));
    }
    if (elapsed >= seconds) {
      clearInterval(timer);
      resolve();
    }
  }, 2);
});
await Promise.all(inFlight);
following = false;
stopBy = performance.now() + 30_000;
await follower;
agent.destroy();

const at = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
process.stdout.write(
  `${JSON.stringify({
    sent,
    accepted: acceptedAt.size,
    refused,
    stored: storedAfter.length,
    acceptP50ms: at(acceptLatencies, 0.5),
    acceptP99ms: at(acceptLatencies, 0.99),
    acceptP99WarmMs: at(warmLatencies, 0.99),
    slowestBySecondMs: slowestBySecond.map((ms) => Math.round(ms ?? 0)),
    storedP50ms: at(storedAfter, 0.5),
    storedP99ms: at(storedAfter, 0.99),
  })}\n`,
);
