/**
 * The load process of the benchmarks (never the server's process): prints one JSON line.
 *
 *   rps <url> <connections> <seconds> [accept-encoding]   autocannon: requests/s, latency, bytes/s
 *   http <connections> <seconds> <url>...                 the same from a plain node:http client, each
 *                                                          connection asking the URLs in turn (its own
 *                                                          ceiling is far above autocannon's on large
 *                                                          bodies, which autocannon parses in JS)
 *   download <url> [accept-encoding]                      one GET read to the end: TTFB, bytes, seconds
 *   first-byte <url> <times>                             sequential GETs, each dropped at its first
 *                                                          byte: the median time to it
 *   stream <url> <connections> <seconds> [accept-encoding]  GETs back to back on each connection:
 *                                                          bytes/s received, answers cut off at the
 *                                                          end counted for what arrived
 */
import http from 'node:http';
import autocannon from 'autocannon';

/** What `rps` and `http` print. */
export interface RpsResult {
  requestsPerSecond: number;
  requests: number;
  p50ms: number;
  p99ms: number;
  bytesPerSecond: number;
  errors: number;
  non2xx: number;
  seconds: number;
}

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

async function httpRps(): Promise<void> {
  const [connectionsText = '32', secondsText = '10', ...urls] = [url, ...rest];
  const connections = Number(connectionsText);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const started = performance.now();
  const deadline = started + Number(secondsText) * 1000;
  const latencies: number[] = [];
  let bytes = 0;
  let errors = 0;
  let non2xx = 0;
  let next = 0;
  const one = (target: string) =>
    new Promise<void>((resolve) => {
      const asked = performance.now();
      const request = http.get(target, { agent }, (res) => {
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => {
          latencies.push(performance.now() - asked);
          if ((res.statusCode ?? 0) >= 300) non2xx += 1;
          resolve();
        });
        res.on('error', () => {
          errors += 1;
          resolve();
        });
      });
      request.on('error', () => {
        errors += 1;
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) await one(urls[next++ % urls.length] ?? '');
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  process.stdout.write(
    `${JSON.stringify({
      requestsPerSecond: latencies.length / seconds,
      requests: latencies.length,
      p50ms: at(0.5),
      p99ms: at(0.99),
      bytesPerSecond: bytes / seconds,
      errors,
      non2xx,
      seconds,
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

async function stream(): Promise<void> {
  const [connections = '4', seconds = '10', encoding] = rest;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(connections) });
  const started = performance.now();
  const deadline = started + Number(seconds) * 1000;
  let bytes = 0;
  let answers = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.get(
        url,
        { agent, headers: encoding ? { 'accept-encoding': encoding } : {} },
        (res) => {
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (performance.now() >= deadline) request.destroy();
          });
          res.on('end', () => {
            answers += 1;
            resolve();
          });
          res.on('close', resolve);
          res.on('error', () => resolve());
        },
      );
      request.on('error', (error) => (performance.now() >= deadline ? resolve() : reject(error)));
    });
  await Promise.all(
    Array.from({ length: Number(connections) }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ bytesPerSecond: bytes / elapsed, answers, seconds: elapsed })}\n`);
}

async function firstByte(): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < Number(rest[0] ?? 5); i++) {
    times.push(
      await new Promise<number>((resolve, reject) => {
        const started = performance.now();
        const request = http.get(url, (res) => {
          res.once('data', () => {
            resolve(performance.now() - started);
            request.destroy();
          });
        });
        request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  times.sort((a, b) => a - b);
  process.stdout.write(`${JSON.stringify({ medianMs: times[Math.floor(times.length / 2)], times })}\n`);
}

if (mode === 'rps') await rps();
else if (mode === 'http') await httpRps();
else if (mode === 'first-byte') await firstByte();
else if (mode === 'stream') await stream();
else if (mode === 'download') await download();
else throw new Error(`unknown mode ${mode}`);
