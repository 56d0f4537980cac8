/**
 * `chatlog webhook add|list|remove|replay|deliveries` (CONTRACT §10, §7), run as a user runs them:
 * bin/chatlog in a child process (built: `npm run build`), next to a running `chatlog serve` whose
 * worker sends what the command line queued, to a receiver on this machine.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { encodeCursor } from '../../src/modules/changes/changes.cursor.js';
import { freePort, tempDir, waitForStderr } from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
const HUB = '4242';
let dataDir: string;
let port: number;
let server: ChildProcess | undefined;
let receiver: http.Server;
let receiverUrl: string;
/** What the receiver was sent: the webhook-id header, the body, and the headers to verify it with. */
const received: Array<{ id: string; body: string; headers: Record<string, string> }> = [];

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CHATLOG_DATA_DIR: dataDir,
    PORT: String(port),
    CHATLOG_SECRET: '',
    CHATLOG_WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

function chatlog(args: string[], extraEnv: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: env(extraEnv),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Exit 1 with exactly one line on stderr, `chatlog: error: ...`, nothing on stdout, no stack trace. */
function assertUserError(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^chatlog: error: \S[^\n]*\n$/, 'one line');
  assert.match(result.stderr, pattern);
}

async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  // Generous: the server's worker sweeps every couple of seconds; a slow machine gets 60 s.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

before(async () => {
  dataDir = tempDir('chatlog-webhook-cli-');
  port = await freePort();
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        id: String(request.headers['webhook-id']),
        body: Buffer.concat(chunks).toString('utf8'),
        headers: request.headers as Record<string, string>,
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  // A hub with messages of two contacts: changes in its feed before any endpoint exists.
  assert.equal(chatlog(['hub', 'add', HUB]).code, 0);
  const file = path.join(dataDir, 'messages.ndjson');
  const lines = Array.from({ length: 6 }, (_, i) =>
    JSON.stringify({
      lineId: `U${i % 2}`,
      vid: '',
      name: '',
      sender: 'You',
      msg: `hello ${i}`,
      contentType: 'text',
      createdAt: `2019-11-03T0${i}:00:00.000Z`,
    }),
  );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  const imported = chatlog(['import', HUB, file]);
  assert.equal(imported.code, 0, imported.stderr);
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  receiver.closeAllConnections();
  receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('chatlog --help lists webhook, and webhook --help each of its commands', () => {
  const help = chatlog(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /\n\s+webhook\s/);
  const webhookHelp = chatlog(['webhook', '--help']);
  assert.equal(webhookHelp.code, 0);
  for (const command of ['add', 'list', 'remove', 'replay', 'retry', 'deliveries']) {
    assert.match(webhookHelp.stdout, new RegExp(`\\n\\s+${command} `), command);
  }
  assert.match(chatlog(['webhook', 'remove', '--help']).stdout, /by its id alone/);
});

test('add prints the id and a secret shown once; list and list --json never show a secret', () => {
  const added = chatlog([
    'webhook',
    'add',
    HUB,
    'https://hooks.example.invalid/a',
    '--events',
    'message.created',
  ]);
  // The name does not resolve: refused (a URL is checked when added), one line.
  assertUserError(added, /url is refused/);

  const first = chatlog(['webhook', 'add', HUB, `${receiverUrl}?first`]);
  assert.equal(first.code, 0, first.stderr);
  const [id, secret, ...rest] = first.stdout.trimEnd().split('\t');
  assert.match(first.stdout, /^whe_\S+\twhsec_\S+\n$/);
  assert.deepEqual(rest, []);
  assert.match(secret ?? '', /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.ok(
    Buffer.from((secret ?? '').slice('whsec_'.length), 'base64').length >= 24,
    'at least 24 random bytes',
  );
  assert.match(first.stderr, /shown this once/);
  assert.doesNotMatch(first.stderr, /whsec_/, 'the secret only on stdout');

  const second = chatlog([
    'webhook',
    'add',
    HUB,
    receiverUrl,
    '--events',
    'message.created, contact.updated',
    '--json',
  ]);
  assert.equal(second.code, 0, second.stderr);
  const json = JSON.parse(second.stdout);
  assert.deepEqual(Object.keys(json).sort(), ['createdAt', 'disabledAt', 'events', 'id', 'secret', 'url']);
  assert.deepEqual(json.events, ['message.created', 'contact.updated']);
  assert.equal(json.disabledAt, null);
  assert.match(json.secret, /^whsec_/);
  assert.notEqual(json.secret, secret);

  const list = chatlog(['webhook', 'list', HUB]);
  assert.equal(list.code, 0, list.stderr);
  assert.doesNotMatch(list.stdout + list.stderr, /whsec_/);
  const rows = list.stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.split('\t'));
  assert.deepEqual(
    rows.map((row) => row.slice(0, 3).concat(row[4] ?? '')),
    [
      [
        id,
        `${receiverUrl}?first`,
        'message.created,message.deleted,contact.updated,contact.erased,retention.applied',
        '-',
      ],
      [json.id, receiverUrl, 'message.created,contact.updated', '-'],
    ],
  );
  assert.match(rows[0]?.[3] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const listJson = chatlog(['webhook', 'list', HUB, '--json']);
  assert.doesNotMatch(listJson.stdout, /whsec_|secret/);
  assert.deepEqual(
    JSON.parse(listJson.stdout).map((endpoint: Record<string, unknown>) => Object.keys(endpoint)),
    [
      ['id', 'url', 'events', 'createdAt', 'disabledAt'],
      ['id', 'url', 'events', 'createdAt', 'disabledAt'],
    ],
  );

  // Removed by id alone; gone from the list; removing it again is one clear line.
  const removed = chatlog(['webhook', 'remove', id ?? '']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stderr, new RegExp(`endpoint ${id} .* of hub ${HUB} removed`));
  assert.doesNotMatch(chatlog(['webhook', 'list', HUB]).stdout, new RegExp(id ?? ''));
  assertUserError(chatlog(['webhook', 'remove', id ?? '']), /no webhook endpoint has the id whe_/);
  assertUserError(chatlog(['webhook', 'remove', json.id, 'extra']), /too many arguments/);
  chatlog(['webhook', 'remove', json.id]);
  assert.equal(chatlog(['webhook', 'list', HUB]).stdout, '');
  assert.equal(chatlog(['webhook', 'list', HUB, '--json']).stdout, '[]\n');
});

test('refusals are one line, exit 1: unknown hub or endpoint, refused URLs, bad --events, a pasted secret', () => {
  assertUserError(chatlog(['webhook', 'add', '5150', receiverUrl]), /hub 5150 does not exist/);
  assertUserError(chatlog(['webhook', 'list', '5150']), /hub 5150 does not exist/);
  assertUserError(chatlog(['webhook', 'list', 'abc']), /hub id must be 1 to 20 digits/);
  assertUserError(chatlog(['webhook', 'remove', 'whe_nope']), /no webhook endpoint has the id whe_nope/);
  assertUserError(chatlog(['webhook', 'replay', 'whe_nope']), /no webhook endpoint has the id whe_nope/);
  assertUserError(chatlog(['webhook', 'deliveries', 'whe_nope']), /no webhook endpoint has the id whe_nope/);
  // Cloud metadata is never reached, private addresses allowed or not.
  assertUserError(chatlog(['webhook', 'add', HUB, 'http://169.254.169.254/']), /url is refused/);
  assertUserError(chatlog(['webhook', 'add', HUB, 'https://169.254.169.254/latest']), /url is refused/);
  // Loopback only when CHATLOG_WEBHOOK_ALLOW_PRIVATE=true.
  assertUserError(
    chatlog(['webhook', 'add', HUB, receiverUrl], { CHATLOG_WEBHOOK_ALLOW_PRIVATE: '' }),
    /url is refused/,
  );
  assertUserError(chatlog(['webhook', 'add', HUB, 'not a url']), /url is refused/);
  for (const events of ['message.sent', 'message.created,message.created', '', 'message.created,']) {
    assertUserError(
      chatlog(['webhook', 'add', HUB, receiverUrl, '--events', events]),
      /^chatlog: error: --events: /,
    );
  }
  assertUserError(chatlog(['webhook', 'add', HUB]), /missing required argument 'url'/);
  assertUserError(chatlog(['webhook', 'deliveries', 'whe_x', '--limit', '0']), /--limit/);
  // A secret pasted where the id goes is not printed back.
  const pasted = chatlog(['webhook', 'remove', 'whsec_c2VjcmV0IHNlY3JldCBzZWNyZXQgc2VjcmV0']);
  assertUserError(pasted, /not its id/);
  assert.doesNotMatch(pasted.stderr, /c2VjcmV0/);
  // Nothing was added by any of these.
  assert.equal(chatlog(['webhook', 'list', HUB]).stdout, '');
});

test('replay --cursor C: a running server sends every change after C again, signed with the secret add printed', async () => {
  server = spawn(process.execPath, [BIN, 'serve', '--workers', '1'], {
    env: env(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForStderr(server, 'listening on');

  const added = chatlog(['webhook', 'add', HUB, receiverUrl, '--events', 'message.created']);
  assert.equal(added.code, 0, added.stderr);
  const [id, secret] = added.stdout.trimEnd().split('\t') as [string, string];
  // An endpoint is sent the changes made from now on: none yet.
  assert.equal(chatlog(['webhook', 'deliveries', id]).stdout, '');

  // The hub's feed, read as a client reads it, and a cursor after its second change.
  const key = chatlog(['key', 'issue', HUB]).stdout.trim();
  const feed = async (query: string) => {
    const response = await fetch(`http://127.0.0.1:${port}/api/line/${HUB}/changes${query}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    assert.equal(response.status, 200);
    return (await response.json()) as { changes: Array<{ seq: string; type: string }>; cursor: string };
  };
  const all = (await feed('')).changes;
  const cursor = (await feed('?limit=2')).cursor;
  const expected = all
    .filter((change) => Number(change.seq) > Number(all[1]?.seq) && change.type === 'message.created')
    .map((change) => `${HUB}:${change.seq}`);
  assert.ok(expected.length >= 4, JSON.stringify(all));

  const replayed = chatlog(['webhook', 'replay', id, '--cursor', cursor]);
  assert.equal(replayed.code, 0, replayed.stderr);
  assert.match(
    replayed.stderr,
    new RegExp(`^chatlog: ${expected.length} deliveries queued again for endpoint ${id} of hub ${HUB}\n$`),
  );

  // The running server's worker sends them: each once, verified with the secret add printed.
  await eventually('the replayed deliveries', () => (received.length >= expected.length ? true : undefined));
  assert.deepEqual(received.map((delivery) => delivery.id).sort(), [...expected].sort());
  for (const delivery of received) {
    const payload = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string };
    assert.equal(payload.type, 'message.created');
  }
  // ...and `deliveries` shows them delivered, with the receiver's status.
  const lines = await eventually('the deliveries marked delivered', () => {
    const shown = chatlog(['webhook', 'deliveries', id]).stdout.trimEnd().split('\n');
    return shown.length === expected.length && shown.every((line) => line.split('\t')[3] === 'delivered')
      ? shown
      : undefined;
  });
  for (const line of lines) {
    const [time, seq, type, state, attempts, status, next] = line.split('\t');
    assert.match(time ?? '', /^\d{4}-\d\d-\d\dT/);
    assert.ok(expected.includes(`${HUB}:${seq}`));
    assert.deepEqual(
      [type, state, attempts, status, next],
      ['message.created', 'delivered', '1', '204', '-'],
    );
  }
  const json = JSON.parse(chatlog(['webhook', 'deliveries', id, '--json', '--limit', '1']).stdout);
  assert.equal(json.length, 1);
  assert.equal(json[0].state, 'delivered');

  // A cursor at the feed's end: nothing to send again; no cursor: the whole feed, from before
  // the endpoint was added too.
  const end = encodeCursor(HUB, Number(all.at(-1)?.seq));
  assert.match(
    chatlog(['webhook', 'replay', id, '--cursor', end]).stderr,
    /^chatlog: 0 deliveries queued again/,
  );
  const everything = all.filter((change) => change.type === 'message.created').length;
  assert.match(
    chatlog(['webhook', 'replay', id]).stderr,
    new RegExp(`^chatlog: ${everything} deliveries queued again`),
  );
  // A cursor of another hub, or not a cursor: one line.
  assertUserError(chatlog(['webhook', 'replay', id, '--cursor', encodeCursor('4243', 1)]), /cursor/);
  assertUserError(chatlog(['webhook', 'replay', id, '--cursor', 'nope']), /cursor/);
  assertUserError(chatlog(['webhook', 'replay', id, '--cursor']), /--cursor/);
});
