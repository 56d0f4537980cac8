/**
 * bench/sends.ts's LINE: `POST /v2/bot/message/push` answered 200 with `sentMessages` after
 * `--delay-ms` (LINE's own time), 409 with the same ids for a retry key it already took; nothing is
 * checked (test/fixtures/fake-line-push.ts checks requests against LINE's definition in the tests).
 *
 *   node --import tsx bench/line-push-server.ts [--delay-ms 50]
 */
import http from 'node:http';
import { readArgs } from './args.js';
import { listenAsBaseline } from './processes.js';

const args = readArgs('node --import tsx bench/line-push-server.ts [--delay-ms 50]', {
  values: ['delay-ms'],
});
const delayMs = args.number('delay-ms', 50, { min: 0 });
const accepted = new Map<string, string[]>();
let nextId = 700_000_000_000_000_000n;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const key = String(req.headers['x-line-retry-key'] ?? '');
    const earlier = accepted.get(key);
    let ids = earlier;
    if (!ids) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { messages?: unknown[] };
      ids = (body.messages ?? []).map(() => String(nextId++));
      accepted.set(key, ids);
    }
    const answer = JSON.stringify({ sentMessages: ids.map((id) => ({ id, quoteToken: `q${id}` })) });
    setTimeout(() => {
      res.writeHead(earlier ? 409 : 200, { 'content-type': 'application/json' });
      res.end(answer);
    }, delayMs);
  });
});
listenAsBaseline(server);
