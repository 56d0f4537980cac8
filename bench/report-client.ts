/**
 * The report reader of `npm run bench -- reports`, in its own process: GET each URL in turn, one at
 * a time, for `seconds`; one JSON line at the end with the answers' latencies (from the request to
 * the last byte) and the bytes.
 *
 *   node --import tsx bench/report-client.ts SECONDS URL...
 */
const [secondsText, ...urls] = process.argv.slice(2);
const seconds = Number(secondsText);
if (!Number.isFinite(seconds) || urls.length === 0) {
  throw new Error('usage: node --import tsx bench/report-client.ts SECONDS URL...');
}

const latencies: number[] = [];
let failed = 0;
let bytes = 0;
const until = performance.now() + seconds * 1000;
for (let i = 0; performance.now() < until || latencies.length + failed < 3; i++) {
  const started = performance.now();
  const res = await fetch(urls[i % urls.length] as string);
  const body = await res.arrayBuffer();
  if (res.status !== 200) failed += 1;
  else {
    latencies.push(performance.now() - started);
    bytes = body.byteLength;
  }
}
latencies.sort((a, b) => a - b);
const rank = (p: number) => latencies[Math.max(0, Math.ceil(p * latencies.length) - 1)] ?? Number.NaN;
console.log(
  JSON.stringify({ requests: latencies.length, failed, p50Ms: rank(0.5), p99Ms: rank(0.99), bytes }),
);
