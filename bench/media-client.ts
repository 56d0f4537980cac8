/**
 * The load of `npm run bench -- media`, in its own process; prints one JSON result line.
 *
 *   node --import tsx bench/media-client.ts get <url> <concurrency> <count>
 *       GETs the URL `count` times, `concurrency` at once (keep-alive), reading every byte:
 *       MB/s of the bytes answered 200.
 *   node --import tsx bench/media-client.ts fetch <lineBase> <token> <dir> <concurrency> <id,id,…>
 *       The download baseline: what a bare client does with LINE's content API at chatlog's
 *       concurrency — each id's content fetched, written to a temporary file in `dir`, fsynced and
 *       renamed under its SHA-256 (as the files content store keeps it).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [mode, ...rest] = process.argv.slice(2);

function get(agent: http.Agent, url: URL, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; bytes: number; res: http.IncomingMessage }>((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) =>
      resolve({ status: res.statusCode ?? 0, bytes: 0, res }),
    );
    req.on('error', reject);
  });
}

async function pool(concurrency: number, count: number, work: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

if (mode === 'get') {
  const [url = '', concurrencyText = '1', countText = '1'] = rest;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(concurrencyText) });
  let bytes = 0;
  let failed = 0;
  const started = performance.now();
  await pool(Number(concurrencyText), Number(countText), async () => {
    const { status, res } = await get(agent, new URL(url));
    let got = 0;
    for await (const chunk of res) got += (chunk as Buffer).length;
    if (status === 200 && got === Number(res.headers['content-length'])) bytes += got;
    else failed += 1;
  });
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ bytes, failed, seconds, mbPerSecond: bytes / 1e6 / seconds })}\n`);
} else if (mode === 'fetch') {
  const [base = '', token = '', dir = '', concurrencyText = '4', ids = ''] = rest;
  const list = ids.split(',');
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(concurrencyText) });
  let bytes = 0;
  let failed = 0;
  const started = performance.now();
  await pool(Number(concurrencyText), list.length, async (n) => {
    const id = list[n] ?? '';
    const { status, res } = await get(agent, new URL(`${base}/v2/bot/message/${id}/content`), {
      authorization: `Bearer ${token}`,
    });
    if (status !== 200) {
      res.resume();
      failed += 1;
      return;
    }
    const temp = path.join(dir, `.tmp-${n}`);
    const handle = await fs.promises.open(temp, 'w');
    const hash = createHash('sha256');
    for await (const chunk of res) {
      hash.update(chunk as Buffer);
      await handle.write(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    await handle.sync();
    await handle.close();
    await fs.promises.rename(temp, path.join(dir, hash.digest('hex')));
  });
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  process.stdout.write(
    `${JSON.stringify({ count: list.length, bytes, failed, seconds, perSecond: list.length / seconds, mbPerSecond: bytes / 1e6 / seconds })}\n`,
  );
} else {
  throw new Error(
    'usage: media-client.ts get <url> <concurrency> <count> | fetch <lineBase> <token> <dir> <concurrency> <ids>',
  );
}
