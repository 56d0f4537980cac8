/**
 * Load generator for webhook benchmarks, run as its own process: N concurrent senders POST
 * signed LINE webhook bodies (unique message ids) for a fixed time and report what was answered.
 *
 *   node --import tsx bench/webhook-load.ts <url> <channelSecret> <concurrency> <seconds> <eventsPerRequest> <idPrefix>
 */
import http from 'node:http';
import { postSignedWebhook } from './line-post.js';

const [url = '', secret = '', concurrencyText = '32', secondsText = '5', perRequestText = '1', prefix = 'b'] =
  process.argv.slice(2);
const target = new URL(url);
const concurrency = Number(concurrencyText);
const perRequest = Number(perRequestText);
const deadline = Date.now() + Number(secondsText) * 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

let next = 0;
let acknowledgedEvents = 0;
let failed = 0;
const latencies: number[] = [];

function bodyFor(n: number): string {
  const events = [];
  for (let i = 0; i < perRequest; i++) {
    events.push({
      type: 'message',
      mode: 'active',
      timestamp: 1_700_000_000_000 + n,
      source: { type: 'user', userId: `U${String(n % 997).padStart(32, '0')}` },
      webhookEventId: `${prefix}-${n}-${i}`,
      deliveryContext: { isRedelivery: false },
      message: {
        id: `${prefix}-${n}-${i}`,
        type: 'text',
        quoteToken: 'q',
        text: `こんにちは、ご予約の件です ${n}/${i} 😀`,
      },
    });
  }
  return JSON.stringify({ destination: 'U00000000000000000000000000000000', events });
}

const send = (raw: string) => postSignedWebhook(target, agent, secret, raw);

async function sender(): Promise<void> {
  while (Date.now() < deadline) {
    const raw = bodyFor(next++);
    const started = performance.now();
    const status = await send(raw);
    latencies.push(performance.now() - started);
    if (status === 200) acknowledgedEvents += perRequest;
    else failed += 1;
  }
}

const started = performance.now();
const cpuStarted = process.cpuUsage();
await Promise.all(Array.from({ length: concurrency }, sender));
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStarted);
/** This generator's own CPU while it sent (its start-up not counted). */
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
agent.destroy();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
process.stdout.write(
  `${JSON.stringify({ seconds, requests: latencies.length, acknowledgedEvents, failed, eventsPerSecond: acknowledgedEvents / seconds, p50ms: at(0.5), p99ms: at(0.99), cpuSeconds })}\n`,
);
