/**
 * `chatlog mcp` (CONTRACT §15) as an assistant starts it: bin/chatlog (built) over a test store,
 * CHATLOG_API_KEY in its environment. The official SDK's client lists and calls the tools over
 * stdio; a session written by hand reads every line of stdout and finds JSON-RPC only; a missing or
 * wrong key is one line on stderr and exit 1.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, runChatlog } from '../fixtures/serve.js';
import { createTestStore, message, storeMessages, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '5301';
let t: TestStore;
let read = '';
let ingest = '';

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  read = (await t.keys.issue(HUB, 'read', 'desktop')).key;
  ingest = (await t.keys.issue(HUB, 'ingest', '')).key;
  await storeMessages(t.store, HUB, [
    message({
      lineId: 'Ustdio',
      name: '山田',
      msg: '明日の予約をお願いします',
      createdAt: Date.parse('2026-11-20T01:00:00Z'),
    }),
    message({ lineId: 'Ustdio', msg: 'ありがとうございます', createdAt: Date.parse('2026-11-20T02:00:00Z') }),
  ]);
});
after(() => t?.close());

const env = (key: string | undefined): Record<string, string> => {
  const all: NodeJS.ProcessEnv = { ...withoutSettings(), ...t.env, LOG_LEVEL: 'info' };
  if (key) all.CHATLOG_API_KEY = key;
  else delete all.CHATLOG_API_KEY;
  return Object.fromEntries(
    Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
};

test('the official client lists and calls the tools over stdio', async () => {
  const client = new Client({ name: 'chatlog-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: env(read),
    stderr: 'pipe',
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 5);
    const hub = await client.callTool({ name: 'get_hub', arguments: {} });
    assert.deepEqual(hub.structuredContent, {
      hubId: HUB,
      timeZone: 'Asia/Tokyo',
      contacts: 1,
      messages: 2,
      firstMessageAt: '2026-11-20T01:00:00.000Z',
      lastMessageAt: '2026-11-20T02:00:00.000Z',
    });
    const found = await client.callTool({ name: 'search_messages', arguments: { query: '予約' } });
    const results = (found.structuredContent as { results: Array<{ message: { msg: string } }> }).results;
    assert.deepEqual(
      results.map((r) => r.message.msg),
      ['明日の予約をお願いします'],
    );
  } finally {
    await client.close();
  }
});

test('stdout carries JSON-RPC and nothing else, logs included', async () => {
  const child = spawn(process.execPath, [BIN, 'mcp'], { env: env(read), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'by-hand', version: '1' },
    },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  send({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'get_conversation', arguments: { lineId: 'Ustdio' } },
  });
  send({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'get_conversation', arguments: { lineId: 'Unobody' } },
  });
  send({ jsonrpc: '2.0', id: 5, method: 'no/such/method' });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && stdout.split('\n').filter(Boolean).length < 5) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) =>
    child.once('exit', (exitCode) => resolve(exitCode)),
  );
  assert.equal(code, 0, stderr);
  const lines = stdout.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 5, stdout);
  // Answers may come in any order (JSON-RPC matches them by id).
  const answers = lines.map(
    (line) =>
      JSON.parse(line) as { jsonrpc: string; id: number; result?: { isError?: boolean }; error?: unknown },
  );
  answers.sort((a, b) => a.id - b.id);
  for (const answer of answers) assert.equal(answer.jsonrpc, '2.0');
  assert.deepEqual(
    answers.map((a) => a.id),
    [1, 2, 3, 4, 5],
  );
  assert.equal(answers[3]?.result?.isError, true, 'an unknown lineId is a tool error');
  assert.ok(answers[4]?.error, 'an unknown method is a JSON-RPC error');
  assert.ok(!stdout.includes(read) && !stderr.includes(read), 'the key is never printed');
});

test('without a key, with a bad one or one of another scope: one line on stderr, exit 1, nothing on stdout', () => {
  for (const [key, said] of [
    [undefined, /CHATLOG_API_KEY is not set/],
    ['chl_0000000000000000000000000000', /not a valid key/],
    [ingest, /scope ingest; the MCP server needs one of scope read/],
  ] as const) {
    const run = runChatlog(env(key), ['mcp']);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, said);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  }
});

test('a key revoked while chatlog mcp runs stops at its next call', async () => {
  const other = await t.keys.issue(HUB, 'read', 'to revoke');
  const client = new Client({ name: 'chatlog-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: env(other.key),
      stderr: 'pipe',
    }),
  );
  try {
    assert.ok(!(await client.callTool({ name: 'get_hub', arguments: {} })).isError);
    await t.keys.revoke(other.summary.id);
    const after = await client.callTool({ name: 'get_hub', arguments: {} });
    assert.equal(after.isError, true);
    assert.match(JSON.stringify(after.content), /no longer holds/);
  } finally {
    await client.close();
  }
});
