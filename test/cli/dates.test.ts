/**
 * An impossible day is called the same everywhere: the read API, `chatlog export --from/--to`,
 * `chatlog import` and the ingest API all say "<what>: <day> is not a real date".
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rawRequest, startTestServer, type TestServer, tempDir } from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
const IMPOSSIBLE = ['2024-02-30', '2024-13-01', '2023-02-29', '2024-04-31', '2024-00-10', '2024-01-00'];
let server: TestServer;
let key: string;
let ingestKey: string;
let dataDir: string;

before(async () => {
  server = await startTestServer();
  await server.hubs.add('4242', {});
  key = (await server.keys.issue('4242', 'read', 'dates')).key;
  ingestKey = (await server.keys.issue('4242', 'ingest', 'dates')).key;
  dataDir = tempDir('chatlog-dates-');
});
after(async () => {
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function chatlog(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, CHATLOG_DATA_DIR: dataDir, CHATLOG_SECRET: '', LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
}

test('the read API, export, import and the ingest API name an impossible day in the same words', async () => {
  assert.equal(chatlog(['hub', 'add', '4242']).status, 0);
  for (const day of IMPOSSIBLE) {
    const said: string[] = [];
    for (const name of ['from', 'to']) {
      const res = await rawRequest(server.url, 'GET', `/api/line/4242/messages?apikey=${key}&${name}=${day}`);
      assert.equal(res.status, 400);
      const { error } = JSON.parse(res.body.toString('utf8'));
      assert.equal(error.code, 'invalid_date');
      assert.equal(error.message, `${name}: ${day} is not a real date`);
      said.push(error.message.slice(name.length));

      const exported = chatlog(['export', '4242', `--${name}`, day]);
      assert.equal(exported.status, 1);
      assert.equal(exported.stderr, `chatlog: error: --${name}: ${day} is not a real date\n`);
      said.push(exported.stderr.trim().slice(`chatlog: error: --${name}`.length));
    }
    const file = path.join(dataDir, 'day.ndjson');
    fs.writeFileSync(file, `${JSON.stringify({ lineId: 'U1', msg: 'x', createdAt: `${day}T10:00:00Z` })}\n`);
    const imported = chatlog(['import', '4242', file]);
    assert.equal(imported.status, 1);
    const line = /\n {2}line 1: (createdAt: .*)\n/.exec(imported.stderr)?.[1] ?? imported.stderr;
    assert.equal(line, `createdAt: ${day} is not a real date`);
    said.push(line.slice('createdAt'.length));

    const ingested = await rawRequest(
      server.url,
      'POST',
      '/ingest/line/4242/messages',
      { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
      JSON.stringify([{ lineId: 'U1', msg: 'x', createdAt: `${day}T10:00:00Z` }]),
    );
    assert.equal(ingested.status, 400);
    const refusal = JSON.parse(ingested.body.toString('utf8')).error.message;
    assert.equal(refusal, `body[0].createdAt: ${day} is not a real date`);
    said.push(refusal.slice('body[0].createdAt'.length));
    assert.deepEqual(new Set(said), new Set([`: ${day} is not a real date`]));
  }
});

test('a day in another form is told the form, not "not a real date"', async () => {
  for (const text of ['2024-2-3', '20240203', '2024-02-03T00:00:00Z', 'tomorrow']) {
    const res = await rawRequest(
      server.url,
      'GET',
      `/api/line/4242/messages?apikey=${key}&from=${encodeURIComponent(text)}`,
    );
    assert.equal(
      JSON.parse(res.body.toString('utf8')).error.message,
      'from must be a date in the form YYYY-MM-DD',
    );
    assert.equal(
      chatlog(['export', '4242', '--from', text]).stderr,
      'chatlog: error: --from must be a date in the form YYYY-MM-DD\n',
    );
  }
});
