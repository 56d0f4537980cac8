/** One signed LINE webhook POST, as the benchmarks' senders make it: resolves to the status (0: no answer). */
import type http from 'node:http';
import { request } from 'node:http';
import { lineSignature } from '../src/modules/ingest/line.signature.js';

export function postSignedWebhook(
  target: URL,
  agent: http.Agent,
  secret: string,
  raw: string,
): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(raw),
          'x-line-signature': lineSignature(secret, raw),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(raw);
  });
}
