/**
 * The ceiling for webhook ingest: a bare node:http server that reads the body, checks the
 * signature and parses the JSON as chatlog does, then answers 200 without storing anything.
 * Runs in its own process; prints its port.
 */
import http from 'node:http';
import { isValidLineSignature } from '../src/modules/ingest/line.signature.js';
import { listenAsBaseline } from './processes.js';

const secret = process.argv[2] ?? '';
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const signature = req.headers['x-line-signature'];
    if (!isValidLineSignature(secret, raw, typeof signature === 'string' ? signature : undefined)) {
      res.writeHead(401).end();
      return;
    }
    JSON.parse(raw.toString('utf8'));
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{}');
  });
});
listenAsBaseline(server);
