/**
 * The client and load processes of bench/feed.ts (never the server's process). Each mode prints
 * one JSON line, except `follow`, which listens (prints its port) and is read over HTTP.
 *
 *   catchup <changes URL with apikey>
 *       follows GET /changes?limit=1000 from no cursor to hasMore=false, one request after the
 *       other (the next cursor is in the answer): changes/s. The cursor and hasMore are read from
 *       the answer's tail and the changes counted by their `{"seq":"` (the serializer's fixed key
 *       order); the first page is parsed whole to check that reading.
 *   paced <webhook URL> <channel secret> <per second> <seconds> <id prefix>
 *       one signed LINE webhook of one message event every 1/rate s (open loop: a slow answer does
 *       not delay the next send): for each message id when its 200 arrived, and the round trips.
 *   ingest <ingest URL> <ingest key> <messages> <per request> <id prefix>
 *       POST /ingest/line/:hubId/messages, one batch after the other.
 *   follow <changes URL with apikey>
 *       long-polls GET /changes?wait=30 continuously from the feed's end; GET /stats?times=1 on its
 *       port: {answers, changes, times: {<LINE message id>: when the answer carrying it ended}}.
 *
 * Times are `performance.timeOrigin + performance.now()`, epoch ms, as bench/feed-receiver.ts.
 */
import http from 'node:http';
import { lineSignature } from '../src/modules/ingest/line.signature.js';
import { listenAsBaseline } from './processes.js';

const now = () => performance.timeOrigin + performance.now();
const [mode, url = '', ...rest] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Answer {
  status: number;
  body: Buffer;
  /** When the last byte arrived. */
  at: number;
}

function request(
  target: string,
  options: { method?: string; headers?: Record<string, string | number>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      target,
      { method: options.method ?? 'GET', agent, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), at: now() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const SEQ = Buffer.from('{"seq":"');
const CREATED = Buffer.from('","type":"message.created",');

function count(body: Buffer, what: Buffer): number {
  let found = 0;
  for (let at = body.indexOf(what); at !== -1; at = body.indexOf(what, at + what.length)) found += 1;
  return found;
}

/** The page's `"cursor":"…","hasMore":…}` from its tail. */
function tailOf(body: Buffer): { cursor: string; hasMore: boolean } {
  const tail = body.subarray(Math.max(0, body.length - 512)).toString('utf8');
  const match = /"cursor":("(?:[^"\\]|\\.)*"),"hasMore":(true|false)\}$/.exec(tail);
  if (!match) throw new Error(`no cursor at the end of the answer: …${tail.slice(-120)}`);
  return { cursor: JSON.parse(match[1] as string) as string, hasMore: match[2] === 'true' };
}

const withCursor = (base: string, cursor: string | undefined) =>
  cursor === undefined ? base : `${base}&cursor=${encodeURIComponent(cursor)}`;

async function catchup(): Promise<void> {
  const started = now();
  const cpu = process.cpuUsage();
  let cursor: string | undefined;
  let changes = 0;
  let created = 0;
  let pages = 0;
  let bytes = 0;
  for (let more = true; more; ) {
    const answer = await request(withCursor(`${url}&limit=1000`, cursor));
    if (answer.status !== 200) throw new Error(`GET /changes answered ${answer.status}: ${answer.body}`);
    const counted = count(answer.body, SEQ);
    const tail = tailOf(answer.body);
    if (pages === 0) {
      const page = JSON.parse(answer.body.toString('utf8')) as { changes: unknown[]; cursor: string };
      if (page.changes.length !== counted || page.cursor !== tail.cursor) {
        throw new Error(`the first page has ${page.changes.length} changes, ${counted} counted`);
      }
    }
    changes += counted;
    created += count(answer.body, CREATED);
    pages += 1;
    bytes += answer.body.length;
    cursor = tail.cursor;
    more = tail.hasMore;
  }
  const seconds = (now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  const cpuSeconds = (user + system) / 1e6;
  process.stdout.write(
    `${JSON.stringify({ changes, created, pages, bytes, seconds, changesPerSecond: changes / seconds, cpuSeconds })}\n`,
  );
}

function lineBody(id: string, n: number): string {
  return JSON.stringify({
    destination: 'U00000000000000000000000000000000',
    events: [
      {
        type: 'message',
        mode: 'active',
        timestamp: Date.now(),
        source: { type: 'user', userId: `U${String(n % 97).padStart(32, '0')}` },
        webhookEventId: id,
        deliveryContext: { isRedelivery: false },
        message: { id, type: 'text', quoteToken: 'q', text: `ご予約の件です ${n} 😀` },
      },
    ],
  });
}

async function paced(): Promise<void> {
  const [secret = '', rateText = '200', secondsText = '10', prefix = 'p'] = rest;
  const rate = Number(rateText);
  const total = Math.round(rate * Number(secondsText));
  const okAt: Record<string, number> = {};
  const roundTrips: number[] = [];
  let failed = 0;
  let late = 0;
  const started = now();
  const sends: Promise<void>[] = [];
  for (let n = 0; n < total; n++) {
    const due = started + (n * 1000) / rate;
    const wait = due - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else if (wait < -5) late += 1;
    const id = `${prefix}-${n}`;
    const raw = lineBody(id, n);
    const sentAt = now();
    sends.push(
      request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(raw),
          'x-line-signature': lineSignature(secret, raw),
        },
        body: raw,
      }).then(
        (answer) => {
          roundTrips.push(answer.at - sentAt);
          if (answer.status === 200) okAt[id] = answer.at;
          else failed += 1;
        },
        () => {
          failed += 1;
        },
      ),
    );
  }
  await Promise.all(sends);
  const seconds = (now() - started) / 1000;
  roundTrips.sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ sent: total, ok: Object.keys(okAt).length, failed, late, seconds, roundTrips, okAt })}\n`,
  );
}

async function ingest(): Promise<void> {
  const [key = '', countText = '20000', perRequestText = '1000', prefix = 'i'] = rest;
  const count = Number(countText);
  const perRequest = Number(perRequestText);
  const startedAt = now();
  let failed = 0;
  for (let first = 0; first < count; first += perRequest) {
    const batch = [];
    for (let n = first; n < Math.min(count, first + perRequest); n++) {
      batch.push({
        lineId: `U${String(n % 501).padStart(32, '0')}`,
        msg: `配送のご連絡です ${n}`,
        id: `${prefix}-${n}`,
      });
    }
    const raw = JSON.stringify(batch);
    const answer = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: raw,
    });
    if (answer.status !== 200 && answer.status !== 201) {
      failed += batch.length;
      process.stderr.write(
        `ingest answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}\n`,
      );
    }
  }
  const endedAt = now();
  process.stdout.write(
    `${JSON.stringify({ messages: count, failed, startedAt, endedAt, seconds: (endedAt - startedAt) / 1000 })}\n`,
  );
}

function follow(): void {
  let answers = 0;
  let changes = 0;
  let errors = 0;
  const times: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify(
          query.has('times') ? { answers, changes, errors, times } : { answers, changes, errors },
        ),
      );
  });
  listenAsBaseline(server);
  void (async () => {
    let cursor: string | undefined;
    for (;;) {
      try {
        const answer = await request(withCursor(`${url}&limit=1000&wait=30`, cursor));
        if (answer.status !== 200) throw new Error(`answered ${answer.status}`);
        const page = JSON.parse(answer.body.toString('utf8')) as {
          changes: Array<{ type: string; line?: { message?: { id?: string } } }>;
          cursor: string;
        };
        answers += 1;
        for (const change of page.changes) {
          changes += 1;
          const id = change.line?.message?.id;
          if (id !== undefined) times[id] = answer.at;
        }
        cursor = page.cursor;
      } catch (error) {
        errors += 1;
        process.stderr.write(`follower: ${(error as Error).message}\n`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  })();
}

if (mode === 'catchup') await catchup();
else if (mode === 'paced') await paced();
else if (mode === 'ingest') await ingest();
else if (mode === 'follow') follow();
else throw new Error(`unknown mode ${mode}`);
if (mode !== 'follow') agent.destroy();
