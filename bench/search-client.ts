/**
 * The load of `npm run bench -- search`, in its own process: N searchers, each asking the first
 * page of one query again and again for a while (keep-alive, Bearer key), every answer read to its
 * end and parsed. Prints one JSON line: requests, failures, p50/p99 latency, requests/s, results.
 *
 *   node --import tsx bench/search-client.ts <base> <hubId> <key> <concurrency> <seconds> <q>
 */
import http from 'node:http';
import { percentile } from './feed-common.js';

const [base = '', hubId = '', key = '', concurrencyText = '8', secondsText = '10', q = ''] =
  process.argv.slice(2);
const concurrency = Number(concurrencyText);
const url = new URL(`/api/line/${hubId}/search?q=${encodeURIComponent(q)}&limit=20`, base);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const latencies: number[] = [];
let failed = 0;
let results = -1;

function once(): Promise<void> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.get(url, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        if (response.statusCode === 200) {
          latencies.push(performance.now() - started);
          results = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { results: unknown[] }).results
            .length;
        } else failed += 1;
        resolve();
      });
    });
    request.on('error', () => {
      failed += 1;
      resolve();
    });
  });
}

// A few answers first, not counted: the server's first reads of the index.
for (let i = 0; i < 3; i++) await once();
latencies.length = 0;
const started = performance.now();
const deadline = started + Number(secondsText) * 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) await once();
  }),
);
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({
    requests: latencies.length,
    failed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    perSecond: latencies.length / seconds,
    results,
  })}\n`,
);
agent.destroy();
