/**
 * The MCP project's own conformance suite (@modelcontextprotocol/conformance, the server scenarios)
 * against chatlog's /mcp, on a listening server. The suite sends no credentials: it reaches /mcp
 * through a small proxy here that adds the Bearer header of a read key, and changes nothing else.
 * Every scenario that applies passes; those that do not, and why, are listed in
 * mcp-conformance.expected.yaml (the suite fails when one of them passes, or any other fails).
 *
 * The suite needs Node 22 or later: on an older Node this file says so and runs nothing; .ci/run
 * runs it on the newest Node 22.
 */
// sqlite-only: the MCP project's suite checks the protocol, not the store; test/contract/mcp.test.ts and
// mcp-property.test.ts run the tools' answers on both stores
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';
import { REPO_ROOT } from './document.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
let server: TestServer;
let proxy: http.Server;
let proxyUrl = '';

before(async () => {
  server = await startTestServer();
  await server.hubs.add('1600', { timeZone: 'Asia/Tokyo' });
  const key = (await server.keys.issue('1600', 'read', 'conformance')).key;
  await storeMessages(server.store, '1600', [
    message({ lineId: 'U1', msg: 'こんにちは', createdAt: Date.now() - 60_000 }),
  ]);
  const target = new URL(server.url);
  proxy = http.createServer((request, response) => {
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, authorization: `Bearer ${key}` },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp`;
});
after(async () => {
  proxy?.close();
  await server?.close();
});

test('the MCP conformance suite: every server scenario that applies passes', {
  skip:
    NODE_MAJOR < 22 &&
    `the suite needs Node 22 or later (this is ${process.version}); .ci/run runs it on Node 22`,
}, async () => {
  const bin = path.join(
    REPO_ROOT,
    'node_modules',
    '@modelcontextprotocol',
    'conformance',
    'dist',
    'index.js',
  );
  const child = spawn(
    process.execPath,
    [
      bin,
      'server',
      '--url',
      proxyUrl,
      '--expected-failures',
      path.join(HERE, 'mcp-conformance.expected.yaml'),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve) =>
    child.once('exit', (exitCode) => resolve(exitCode)),
  );
  assert.equal(code, 0, output.slice(-4000));
  assert.match(output, /Baseline check passed/);
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
    assert.match(output, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), scenario);
});
