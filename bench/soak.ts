/**
 * `npm run soak [-- --minutes 3]`: steady reads, whole-hub exports and signed webhooks together
 * against `chatlog serve` (SQLite, its own process), for minutes. Every 10 s it samples the
 * server's RSS and open file descriptors; at the end it says whether they stayed flat (after the
 * first sample, which includes warm-up) and whether every acknowledged webhook event was stored.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createSecretBox } from '../src/lib/secrets.js';
import { HubService } from '../src/modules/hubs/hubs.usecases.js';
import { lineSignature } from '../src/modules/ingest/line.signature.js';
import { KeyService } from '../src/modules/keys/keys.usecases.js';
import { SqliteStore } from '../src/store/sqlite/sqlite.store.js';
import { readArgs } from './args.js';
import { openFds, rssMiB } from './proc.js';
import { startChatlog, stop } from './processes.js';

const SECRET = 'chatlog-soak-secret-0123456789abcdef';
const CHANNEL_SECRET = 'soak-channel-secret';
const HUB = '700001';
const minutes = readArgs('npm run soak [-- --minutes 3]', { values: ['minutes'] }).number('minutes', 3, {
  min: 0,
});

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatlog-soak-'));
const setup = new SqliteStore({ dataDir });
await setup.migrate();
await new HubService(setup, createSecretBox(SECRET)).add(HUB, {
  timeZone: 'Asia/Tokyo',
  lineChannelSecret: CHANNEL_SECRET,
});
const key = (await new KeyService(setup, createSecretBox(SECRET)).issue(HUB, 'read', 'soak')).key;
const start = Date.UTC(2025, 0, 1);
async function* history() {
  for (let batch = 0; batch < 50; batch++) {
    yield Array.from({ length: 1000 }, (_, i) => {
      const n = batch * 1000 + i;
      return {
        lineId: `U${String(n % 500).padStart(32, '0')}`,
        vid: '',
        name: `friend ${n % 500}`,
        sender: n % 3 === 0 ? 'You' : `friend ${n % 500}`,
        msg: `message ${n} こんにちは 😀`,
        contentType: 'text',
        createdAt: start + n * 60_000,
        sourceId: `import-${n}`,
      };
    });
  }
}
await setup.messages.importAll(HUB, history(), Date.now());
await setup.close();

const {
  child: server,
  pid,
  base,
} = await startChatlog({
  CHATLOG_DATA_DIR: dataDir,
  CHATLOG_SECRET: SECRET,
  LOG_LEVEL: 'warn',
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(method: string, url: string, headers: Record<string, string> = {}, payload?: string) {
  return new Promise<number>((resolve) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

const counts = { reads: 0, exports: 0, webhooks: 0, acknowledged: 0, failures: 0 };
const deadline = Date.now() + minutes * 60_000;
let sequence = 0;
const readLoop = async () => {
  while (Date.now() < deadline) {
    const day = new Date(start + Math.floor(Math.random() * 34) * 86_400_000).toISOString().slice(0, 10);
    const status = await request(
      'GET',
      `${base}/api/line/${HUB}/messages?apikey=${key}&from=${day}&to=${day}`,
    );
    counts.reads += 1;
    if (status !== 200) counts.failures += 1;
  }
};
const exportLoop = async () => {
  while (Date.now() < deadline) {
    const status = await request('GET', `${base}/api/line/${HUB}/messages?apikey=${key}`, {
      'accept-encoding': sequence % 2 === 0 ? 'gzip' : 'identity',
    });
    counts.exports += 1;
    if (status !== 200) counts.failures += 1;
  }
};
const webhookLoop = async () => {
  while (Date.now() < deadline) {
    sequence += 1;
    const body = JSON.stringify({
      destination: 'U0',
      events: [
        {
          type: 'message',
          mode: 'active',
          timestamp: Date.now(),
          source: { type: 'user', userId: `U${String(sequence % 300).padStart(32, '0')}` },
          webhookEventId: `soak-${sequence}`,
          deliveryContext: { isRedelivery: false },
          message: { id: `soak-${sequence}`, type: 'text', quoteToken: 'q', text: `live ${sequence}` },
        },
      ],
    });
    const status = await request(
      'POST',
      `${base}/webhooks/line/${HUB}`,
      { 'content-type': 'application/json', 'x-line-signature': lineSignature(CHANNEL_SECRET, body) },
      body,
    );
    counts.webhooks += 1;
    if (status === 200) counts.acknowledged += 1;
    else counts.failures += 1;
  }
};

interface Sample {
  second: number;
  rssMiB: number;
  fds: number;
}
const samples: Sample[] = [];
const began = Date.now();
const sample = () => {
  samples.push({
    second: Math.round((Date.now() - began) / 1000),
    rssMiB: rssMiB(pid),
    fds: openFds(pid),
  });
  const last = samples[samples.length - 1];
  if (last) {
    console.log(
      `${String(last.second).padStart(5)} s  RSS ${last.rssMiB.toFixed(1).padStart(6)} MiB  fds ${String(last.fds).padStart(4)}  reads ${counts.reads}  exports ${counts.exports}  webhooks ${counts.acknowledged}`,
    );
  }
};
const sampler = setInterval(sample, 10_000);
console.log(`soak: ${minutes} min of reads (8), exports (2) and webhooks (8) against ${base}`);
await Promise.all([
  ...Array.from({ length: 8 }, readLoop),
  ...Array.from({ length: 2 }, exportLoop),
  ...Array.from({ length: 8 }, webhookLoop),
]);
clearInterval(sampler);
sample();
agent.destroy();
await stop(server);

const check = new SqliteStore({ dataDir });
let stored = 0;
for await (const batch of check.messages.stream({ hubId: HUB })) {
  for (const row of batch) if (row.msg.startsWith('live ')) stored += 1;
}
await check.close();
fs.rmSync(dataDir, { recursive: true, force: true });

const steady = samples.slice(1);
const first = steady[0] ?? samples[0];
const last = samples[samples.length - 1];
const peak = Math.max(...steady.map((s) => s.rssMiB));
const rssGrowth = first && last ? last.rssMiB / first.rssMiB : 1;
const fdGrowth = first && last ? last.fds - first.fds : 0;
console.log(
  `\nreads ${counts.reads}, exports ${counts.exports}, webhooks acknowledged ${counts.acknowledged} (stored ${stored}), failures ${counts.failures}`,
);
console.log(
  `RSS ${first?.rssMiB.toFixed(1)} → ${last?.rssMiB.toFixed(1)} MiB (×${rssGrowth.toFixed(2)}, peak ${peak.toFixed(1)}); open fds ${first?.fds} → ${last?.fds}`,
);
const flat = rssGrowth < 1.3 && fdGrowth < 20 && stored >= counts.acknowledged && counts.failures === 0;
console.log(flat ? 'soak: flat, nothing lost' : 'soak: NOT flat or something was lost');
if (!flat) process.exitCode = 1;
