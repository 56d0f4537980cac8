/**
 * The webhook receiver of bench/feed.ts, in its own process: answers every delivery 204 at once,
 * then verifies it with the `standardwebhooks` library and the endpoint's secret (as an integrator
 * would) and notes when it arrived, by the LINE message id it carries (or its webhook-id).
 * Prints its port; the bench reads what arrived over HTTP.
 *
 *   node --import tsx bench/feed-receiver.ts
 *
 *   POST /hooks     a delivery
 *   PUT /secret     the endpoint's secret (the body), once the endpoint is added
 *   GET /stats      {received, verified, failed, firstAt, lastAt}; with ?times=1 also
 *                   {times: {<LINE message id>: <arrival, epoch ms>}}
 *   POST /reset     forgets what arrived
 *
 * Times are `performance.timeOrigin + performance.now()`: epoch milliseconds with a fraction, the
 * same clock as the bench's other processes on this machine.
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { listenAsBaseline } from './processes.js';

const now = () => performance.timeOrigin + performance.now();

let webhook: Webhook | undefined;
let received = 0;
let verified = 0;
let failed = 0;
let firstAt = 0;
let lastAt = 0;
let times: Record<string, number> = {};

function read(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const server = http.createServer((request, response) => {
  void read(request).then((body) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (request.method === 'POST' && url.pathname === '/hooks') {
      const at = now();
      response.writeHead(204).end();
      received += 1;
      if (firstAt === 0) firstAt = at;
      lastAt = at;
      try {
        if (!webhook) throw new Error('no secret yet');
        const payload = webhook.verify(body, request.headers as Record<string, string>) as {
          data: { line?: { message?: { id?: string } } };
        };
        verified += 1;
        times[payload.data.line?.message?.id ?? String(request.headers['webhook-id'])] = at;
      } catch {
        failed += 1;
      }
    } else if (request.method === 'PUT' && url.pathname === '/secret') {
      webhook = new Webhook(body.trim());
      response.writeHead(204).end();
    } else if (request.method === 'POST' && url.pathname === '/reset') {
      received = verified = failed = firstAt = lastAt = 0;
      times = {};
      response.writeHead(204).end();
    } else if (request.method === 'GET' && url.pathname === '/stats') {
      const stats = { received, verified, failed, firstAt, lastAt };
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(url.searchParams.has('times') ? { ...stats, times } : stats));
    } else {
      response.writeHead(404).end();
    }
  });
});
listenAsBaseline(server);
