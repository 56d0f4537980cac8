/**
 * Baseline for Q1 and Q2: a bare node:http server, in its own process, answering the very bytes
 * chatlog answered, from memory. Usage: memory-server.ts <path=file>... ; prints its port.
 */
import fs from 'node:fs';
import http from 'node:http';
import { listenAsBaseline } from './processes.js';

const bodies = new Map<string, Buffer>();
for (const arg of process.argv.slice(2)) {
  const [route = '', file = ''] = arg.split('=');
  bodies.set(route, fs.readFileSync(file));
}
const server = http.createServer((req, res) => {
  const body = bodies.get((req.url ?? '').split('?')[0] ?? '');
  if (!body) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 72_000;
listenAsBaseline(server);
