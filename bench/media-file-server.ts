/**
 * The ceiling for serving media (`npm run bench -- media`): a bare node:http server in its own
 * process that answers every GET with the bytes of one file on disk through fs.createReadStream,
 * with Content-Length, as chatlog answers GET /api/line/:hubId/content/:messageId. Prints its port.
 *
 *   node --import tsx bench/media-file-server.ts <file>
 */
import fs from 'node:fs';
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { listenAsBaseline } from './processes.js';

const file = process.argv[2] ?? '';
const server = http.createServer((_req, res) => {
  const { size } = fs.statSync(file);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
  pipeline(fs.createReadStream(file), res).catch(() => res.destroy());
});
listenAsBaseline(server);
