/**
 * The load process of the benchmarks (never the server's process): prints one JSON line.
 *
 *   rps <url> <connections> <seconds> [accept-encoding]   autocannon: requests/s, latency, bytes/s
 *   download <url> [accept-encoding]                      one GET read to the end: TTFB, bytes, seconds
 */
import http from 'node:http';
import autocannon from 'autocannon';

const [mode, url = '', ...rest] = process.argv.slice(2);

async function rps(): Promise<void> {
  const [connections = '32', seconds = '10', encoding] = rest;
  const result = await autocannon({
    url,
    connections: Number(connections),
    duration: Number(seconds),
    headers: encoding ? { 'accept-encoding': encoding } : {},
  });
  process.stdout.write(
    `${JSON.stringify({
      requestsPerSecond: result.requests.average,
      requests: result.requests.total,
      p50ms: result.latency.p50,
      p99ms: result.latency.p99,
      bytesPerSecond: result.throughput.average,
      errors: result.errors + result.timeouts,
      non2xx: result.non2xx,
      seconds: result.duration,
    })}\n`,
  );
}

function download(): Promise<void> {
  const [encoding] = rest;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = 0;
    let bytes = 0;
    http
      .get(url, { headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
        res.on('data', (chunk: Buffer) => {
          if (firstByte === 0) firstByte = performance.now() - started;
          bytes += chunk.length;
        });
        res.on('end', () => {
          process.stdout.write(
            `${JSON.stringify({ status: res.statusCode, bytes, ttfbMs: firstByte, seconds: (performance.now() - started) / 1000 })}\n`,
          );
          resolve();
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

if (mode === 'rps') await rps();
else if (mode === 'download') await download();
else throw new Error(`unknown mode ${mode}`);
