/**
 * The webhook sender of the benchmarks, run as its own process: `rate` signed LINE webhooks a second,
 * one message event each, sent when due whatever the answers before (open loop, as LINE does: a
 * slow answer does not hold back the next event), for `seconds`; one JSON line at the end with the
 * reply latencies. `ordered`: one at a time instead, the next once the last is answered (fewer than
 * the rate when answers take longer than its interval).
 *
 *   node --import tsx bench/webhook-rate.ts --url URL --secret S [--rate 50] [--seconds 10]
 *                                           [--order concurrent|ordered] [--contacts N] [--prefix P]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readArgs } from './args.js';
import { FULL_SIZE } from './dataset.js';
import { postSignedWebhook } from './line-post.js';

export interface SenderResult {
  seconds: number;
  sent: number;
  acknowledged: number;
  failed: number;
  eventsPerSecond: number;
  p50ms: number;
  p99ms: number;
  /** The most requests waiting for an answer at once. */
  maxInFlight: number;
}

export interface SenderOptions {
  url: string;
  secret: string;
  rate: number;
  seconds: number;
  order?: 'concurrent' | 'ordered';
  contacts?: number;
  prefix: string;
}

/** The sender in its own process; its one JSON line is a SenderResult. */
export function spawnWebhookSender(options: SenderOptions): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--url',
      options.url,
      '--secret',
      options.secret,
      '--rate',
      String(options.rate),
      '--seconds',
      String(options.seconds),
      '--order',
      options.order ?? 'concurrent',
      '--contacts',
      String(options.contacts ?? FULL_SIZE.contacts),
      '--prefix',
      options.prefix,
    ],
    { cwd: path.dirname(fileURLToPath(import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] },
  );
}

async function send(): Promise<void> {
  const args = readArgs(
    'node --import tsx bench/webhook-rate.ts --url URL --secret S [--rate 50] [--seconds 10] [--order concurrent|ordered] [--contacts N] [--prefix P]',
    { values: ['url', 'secret', 'rate', 'seconds', 'order', 'contacts', 'prefix'] },
  );
  const target = new URL(args.string('url') ?? '');
  const secret = args.string('secret') ?? '';
  const rate = args.number('rate', 50, { min: 1 });
  const contacts = args.number('contacts', FULL_SIZE.contacts, { min: 1, whole: true });
  const prefix = args.string('prefix') ?? `rate-${Date.now()}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const latencies: number[] = [];
  let sent = 0;
  let acknowledged = 0;
  let failed = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const sendOne = (n: number) => {
    const now = Date.now();
    const messageId = `${prefix}-${n}`;
    // One of the large hub's own contacts (bench/dataset.ts names them U + 'a' + 30 hex digits).
    const userId = `Ua${(n % contacts).toString(16).padStart(30, '0')}`;
    const raw = JSON.stringify({
      destination: 'U00000000000000000000000000000000',
      events: [
        {
          type: 'message',
          mode: 'active',
          timestamp: now,
          source: { type: 'user', userId },
          webhookEventId: messageId,
          deliveryContext: { isRedelivery: false },
          message: { id: messageId, type: 'text', quoteToken: 'q', text: `いま届いたメッセージ ${n} 😀` },
        },
      ],
    });
    const started = performance.now();
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const done = (status: number) => {
      inFlight -= 1;
      latencies.push(performance.now() - started);
      if (status === 200) acknowledged += 1;
      else failed += 1;
    };
    void postSignedWebhook(target, agent, secret, raw).then(done);
  };
  const seconds = args.number('seconds', 10, { min: 0 });
  const ordered = args.choice('order', ['concurrent', 'ordered'], 'concurrent') === 'ordered';
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const due = Math.floor(Math.min(elapsed, seconds) * rate);
      if (ordered) {
        if (sent < due && inFlight === 0) sendOne(sent++);
      } else while (sent < due) sendOne(sent++);
      if (elapsed >= seconds) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const result: SenderResult = {
    seconds: elapsed,
    sent,
    acknowledged,
    failed,
    eventsPerSecond: acknowledged / elapsed,
    p50ms: at(0.5),
    p99ms: at(0.99),
    maxInFlight,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await send();
