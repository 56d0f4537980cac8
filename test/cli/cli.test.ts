/**
 * The command line (CONTRACT §7), run as a user runs it: bin/chatlog in a child process.
 *
 * Over 400 lines because it is §7's table whole, one command after another on one data directory.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, tempDir, waitForStderr } from '../helpers.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'chatlog');
let dataDir: string;
let port: number;

function chatlog(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: {
      ...process.env,
      CHATLOG_DATA_DIR: dataDir,
      PORT: String(port),
      CHATLOG_SECRET: '',
      LOG_LEVEL: 'warn',
    },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Exit 1, one error line that starts like every other (`chatlog: error: `), no stack trace. */
function assertUserError(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  // Progress lines may come first (import); the error is the first line of its own.
  assert.match(result.stderr, /(^|\n)chatlog: error: \S/);
  assert.match(result.stderr, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

before(async () => {
  dataDir = tempDir('chatlog-cli-');
  port = await freePort();
});
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('hub add creates, then updates only what is given; bad input is one clear line', () => {
  const created = chatlog(['hub', 'add', '6662225', '--time-zone', 'Asia/Tokyo']);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /hub 6662225 created \(time zone Asia\/Tokyo/);
  const updated = chatlog(['hub', 'add', '6662225', '--line-channel-secret', 'abcdef0123456789']);
  assert.match(
    updated.stderr,
    /updated \(time zone Asia\/Tokyo, LINE channel secret set, access token not set, every message kept\)/,
  );
  assert.doesNotMatch(updated.stderr + updated.stdout, /abcdef0123456789/);
  const fromStdin = chatlog(
    ['hub', 'add', '6662225', '--line-channel-access-token', '-'],
    'token-from-stdin-123\n',
  );
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.match(fromStdin.stderr, /access token set/);
  assertUserError(chatlog(['hub', 'add', 'abc']), /^chatlog: error: hub id must be 1 to 20 digits/);
  for (const zone of ['Mars/Base', 'JST', 'CST']) {
    assertUserError(
      chatlog(['hub', 'add', '1', '--time-zone', zone]),
      /time zone must be a time zone name of the IANA tz database, such as Asia\/Tokyo or America\/Chicago \(abbreviations such as JST or CST are not zone names\)/,
    );
  }
  assertUserError(chatlog(['hub', 'nope']), /^chatlog: error: unknown command 'nope'/);
});

test('account add: password from stdin, hubs that exist, clear refusals; the password is never printed', () => {
  chatlog(['hub', 'add', '8001']);
  chatlog(['hub', 'add', '8002']);
  const created = chatlog(
    ['account', 'add', 'Owner@Example.com', '--hub', '8001', '--hub', '8002', '--password-stdin'],
    'a long enough password\n',
  );
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /account owner@example\.com created \(hubs 8001, 8002\)/);
  assert.doesNotMatch(created.stderr + created.stdout, /a long enough password/);
  const updated = chatlog(
    ['account', 'add', 'owner@example.com', '--hub', '8001', '--password-stdin'],
    'another password 2\n',
  );
  assert.match(updated.stderr, /account owner@example\.com updated/);
  assertUserError(
    chatlog(['account', 'add', 'x@example.com', '--hub', '8001', '--password-stdin'], 'short\n'),
    /password must be at least 10 characters/,
  );
  assertUserError(
    chatlog(['account', 'add', 'x@example.com', '--hub', '9999', '--password-stdin'], 'long enough pw\n'),
    /hub 9999 does not exist/,
  );
  assertUserError(
    chatlog(['account', 'add', 'not-an-email', '--hub', '8001', '--password-stdin'], 'long enough pw\n'),
    /is not an email address/,
  );
  assertUserError(
    chatlog(['account', 'add', 'x@example.com', '--hub', '8001']),
    /no terminal to ask for the password/,
  );
  assertUserError(
    chatlog(['account', 'add', 'x@example.com', '--password-stdin'], 'long enough pw\n'),
    /--hub/,
  );
});

test('the generated server secret is kept with mode 0600', () => {
  const mode = fs.statSync(path.join(dataDir, 'secret')).mode & 0o777;
  assert.equal(mode, 0o600);
});

test('key issue prints the key alone; list shows its first characters, newest first, never the key', () => {
  assertUserError(chatlog(['key', 'list', '5150']), /^chatlog: error: hub 5150 does not exist/);
  const issued = chatlog(['key', 'issue', '6662225', '--label', 'reporting']);
  assert.equal(issued.code, 0, issued.stderr);
  assert.match(issued.stdout, /^chl_[0-9A-Za-z]{28}\n$/);
  const key = issued.stdout.trim();
  const ingest = chatlog(['key', 'issue', '6662225', '--scope', 'ingest']);
  assert.equal(ingest.code, 0);

  const listed = chatlog(['key', 'list', '6662225']);
  assert.equal(listed.code, 0);
  const lines = listed.stdout.trim().split('\n');
  assert.equal(lines.length, 2);
  // Newest first (the account screen's order): the ingest key, then the read key.
  assert.match(lines[0] ?? '', /^key_\w+\tchl_\w{4}•{12}\tingest\t-\t\d{4}-\d\d-\d\dT[\d:.]+Z\t-\t-$/);
  assert.match(lines[1] ?? '', /^key_\w+\tchl_\w{4}•{12}\tread\treporting\t\d{4}-\d\d-\d\dT[\d:.]+Z\t-\t-$/);
  assert.equal(lines[1]?.split('\t')[1], `${key.slice(0, 8)}${'•'.repeat(12)}`);
  assert.ok(!listed.stdout.includes(key));

  const json = chatlog(['key', 'list', '6662225', '--json']);
  const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(Object.keys(rows[0] ?? {}), [
    'id',
    'keyStart',
    'scope',
    'label',
    'createdAt',
    'lastUsedAt',
    'revokedAt',
  ]);
  assert.equal(rows[0]?.scope, 'ingest');
  assert.equal(rows[1]?.keyStart, key.slice(0, 8));
  assert.ok(!json.stdout.includes(key));

  const id = String(rows[0]?.id);
  assert.equal(chatlog(['key', 'limit', id, '--requests', '5', '--per-seconds', '60']).code, 0);
  assert.equal(chatlog(['key', 'limit', id, '--none']).code, 0);
  assertUserError(chatlog(['key', 'limit', id, '--requests', '5']), /go together/);
  assertUserError(chatlog(['key', 'limit', id]), /either --requests/);
  assert.equal(chatlog(['key', 'revoke', id]).code, 0);
  const after = JSON.parse(chatlog(['key', 'list', '6662225', '--json']).stdout) as Array<
    Record<string, unknown>
  >;
  assert.match(String(after[0]?.revokedAt), /Z$/);
  assertUserError(chatlog(['key', 'revoke', id]), /already revoked/);
  assertUserError(chatlog(['key', 'revoke', 'key_unknown']), /no key has the id key_unknown/);
  assertUserError(chatlog(['key', 'issue', '6662225', '--scope', 'owner']), /scope/);
  // admin (CONTRACT part two): webhooks and erasure, not messages.
  assert.match(chatlog(['key', 'issue', '6662225', '--scope', 'admin']).stdout, /^chl_/);
});

test('key revoke given the key itself revokes it, and never prints the key back', () => {
  const key = chatlog(['key', 'issue', '6662225', '--label', 'pasted']).stdout.trim();
  const listed = JSON.parse(chatlog(['key', 'list', '6662225', '--json']).stdout) as Array<{ id: string }>;
  const id = listed[0]?.id;
  const limited = chatlog(['key', 'limit', key, '--requests', '10', '--per-seconds', '1']);
  assert.equal(limited.code, 0, limited.stderr);
  assert.match(limited.stderr, new RegExp(`key ${id} limited to 10 requests`));
  const revoked = chatlog(['key', 'revoke', key]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(revoked.stderr, `chatlog: key ${id} (${key.slice(0, 8)}${'•'.repeat(12)}) revoked\n`);
  assertUserError(chatlog(['key', 'revoke', key]), new RegExp(`key ${id} is already revoked`));

  // A key of another store, a mistyped key, or anything else: what to pass, and nothing echoed.
  const foreign = 'chl_Qz8mV2nR4tY6uI0oP3aS5dF7g1h9J2k';
  const mistyped = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  for (const given of [foreign, mistyped, 'secret-pasted-in-the-wrong-place', '']) {
    const refused = chatlog(['key', 'revoke', given]);
    assertUserError(
      refused,
      /pass the key's id \(key_\.\.\., the first column of \.\/bin\/chatlog key list <hubId>\)/,
    );
    if (given !== '') assert.ok(!(refused.stderr + refused.stdout).includes(given), given);
  }
});

test('import: progress totals are the file itself, and a bad file is named by line and column', () => {
  const file = path.join(dataDir, 'in.ndjson');
  const lines = Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({
      lineId: `U${i % 3}`,
      vid: '',
      name: '',
      sender: 'You',
      msg: `hello ${i}\n😀`,
      contentType: 'text',
      createdAt: `2019-11-03T0${i % 10}:00:00.000Z`,
    }),
  );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  const size = fs.statSync(file).size;
  const imported = chatlog(['import', '777', file]);
  assert.equal(imported.code, 0, imported.stderr);
  const kib = `${(size / 1024).toFixed(1)} KiB`;
  assert.match(imported.stderr, new RegExp(`^import: checking ${kib}\n`));
  assert.match(imported.stderr, new RegExp(`\nimport: checking 100% \\(${kib} of ${kib}\\)\n`));
  assert.match(imported.stderr, new RegExp(`\nimport: storing ${kib}\n`));
  assert.match(imported.stderr, new RegExp(`\nimport: storing 100% \\(${kib} of ${kib}\\)\n`));
  assert.match(imported.stderr, /imported 30 new messages \(0 already stored, 3 new contacts\)/);
  assert.match(chatlog(['import', '777', file]).stderr, /imported 0 new messages \(30 already stored/);

  // The answer's shape: totals in messages, 30 of them, not 60.
  const exported = path.join(dataDir, 'exported.json');
  fs.writeFileSync(exported, chatlog(['export', '777']).stdout);
  const again = chatlog(['import', '778', exported]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /^import: checking 30 messages\n/);
  assert.match(again.stderr, /\nimport: checking 100% \(30 of 30 messages\)\n/);
  assert.match(again.stderr, /\nimport: storing 100% \(30 of 30 messages\)\n/);
  assert.doesNotMatch(again.stderr, /of 60|60 messages/);

  const bad = path.join(dataDir, 'bad.ndjson');
  fs.writeFileSync(bad, `${lines[0]}\n{"lineId":"U1","msg":"x","createdAt":"2019-13-01T00:00:00Z"}\n`);
  const before = chatlog(['export', '777']).stdout;
  assertUserError(
    chatlog(['import', '777', bad]),
    /\n {2}line 2: createdAt: 2019-13-01 is not a real date\n/,
  );
  assert.equal(chatlog(['export', '777']).stdout, before);
  assertUserError(chatlog(['import', '777', path.join(dataDir, 'none.json')]), /cannot read/);

  const broken = path.join(dataDir, 'broken.ndjson');
  fs.writeFileSync(broken, `${lines[0]}\n{"lineId":"U1","msg":"x" "createdAt":"2019-11-03T00:00:00Z"}\n`);
  assertUserError(
    chatlog(['import', '777', broken]),
    /\n {2}line 2, column 26: not valid JSON: expected ',' or '}' after a property value, found '"'\n/,
  );
  const brokenArray = path.join(dataDir, 'broken.json');
  fs.writeFileSync(
    brokenArray,
    '[\n  {"lineId": "U1", "messages": [\n    {"msg": "x", "createdAt": 2019-11-03}\n  ]}\n]\n',
  );
  const refused = chatlog(['import', '777', brokenArray]);
  assertUserError(
    refused,
    /is not valid JSON: line 3, column 35: expected ',' or '}' after a property value, found '-'\n$/,
  );
  assert.equal(refused.stderr.split('\n').length, 2, 'one line');
});

test('import on a terminal: one bar per pass, its total the messages of the file', (t) => {
  if (!fs.existsSync('/usr/bin/script')) return t.skip('util-linux script(1) is not installed');
  const file = path.join(dataDir, 'tty.ndjson');
  const lines = Array.from({ length: 7 }, (_, i) =>
    JSON.stringify({ lineId: 'U1', msg: `tty ${i}`, createdAt: '2019-11-03T00:00:00.000Z' }),
  );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  const exported = path.join(dataDir, 'tty.json');
  assert.equal(chatlog(['import', '779', file]).code, 0);
  fs.writeFileSync(exported, chatlog(['export', '779']).stdout);
  // script(1) gives the command a terminal, as a person at a shell has.
  const run = spawnSync(
    'script',
    ['-qec', `"${process.execPath}" "${BIN}" import 780 "${exported}"`, '/dev/null'],
    { env: { ...process.env, CHATLOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stdout);
  // Without the terminal's escape sequences (ESC [ ... letter, ESC 7, ESC 8).
  const esc = String.fromCharCode(27);
  const screen = run.stdout.split(new RegExp(`${esc}\\[[0-9;?]*[A-Za-z]|${esc}[78]`)).join('');
  assert.match(screen, /import \(checking\) \[[^\]]+\] 100% \| 7\/7 messages/);
  assert.match(screen, /import \(storing\) \[[^\]]+\] 100% \| 7\/7 messages/);
  assert.doesNotMatch(screen, /\/14 messages/);
  // The checking bar is finished before the next line is written.
  assert.match(screen, /100% \| 7\/7 messages \| ETA 0s\s*chatlog: hub 780 created/);
});

test('a refused import does not create its hub; export into a closed pipe is not an error', () => {
  const bad = path.join(dataDir, 'bad-new.ndjson');
  fs.writeFileSync(bad, '{"lineId":"U1","msg":"x"}\n');
  assertUserError(chatlog(['import', '4444', bad]), /line 1: createdAt: is required/);
  assertUserError(chatlog(['export', '4444']), /hub 4444 does not exist/);
  const piped = spawnSync(
    'bash',
    ['-o', 'pipefail', '-c', `"${process.execPath}" "${BIN}" export 777 | head -c 5`],
    {
      env: { ...process.env, CHATLOG_DATA_DIR: dataDir },
      encoding: 'utf8',
    },
  );
  assert.equal(piped.stdout, '[{"li');
  assert.equal(piped.status, 0, piped.stderr);
});

test('serve on a port already in use exits 1 with one line, workers or not', async () => {
  const net = await import('node:net');
  const blocker = net.createServer().listen(port, '127.0.0.1');
  await new Promise((resolve) => blocker.once('listening', resolve));
  try {
    for (const workers of ['1', '2']) {
      const result = spawnSync(process.execPath, [BIN, 'serve', '--workers', workers], {
        env: { ...process.env, CHATLOG_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(result.status, 1, `--workers ${workers}: ${result.stderr}`);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(result.stderr, /^chatlog: error: the address is already in use/);
    }
  } finally {
    blocker.close();
  }
});

test('export refuses an unknown hub and bad dates; an impossible day is "not a real date"', () => {
  assertUserError(chatlog(['export', '999999']), /hub 999999 does not exist/);
  assertUserError(
    chatlog(['export', '777', '--from', '2023-02-29']),
    /^chatlog: error: --from: 2023-02-29 is not a real date\n$/,
  );
  assertUserError(
    chatlog(['export', '777', '--to', '2024-13-01']),
    /^chatlog: error: --to: 2024-13-01 is not a real date\n$/,
  );
  assertUserError(
    chatlog(['export', '777', '--from', '2024-2-3']),
    /^chatlog: error: --from must be a date in the form YYYY-MM-DD\n$/,
  );
  assertUserError(chatlog(['export', '777', '--from', '2019-11-04', '--to', '2019-11-03']), /not be later/);
});

test("every error line starts 'chatlog: error: ', commander's own included; --version", () => {
  const version = chatlog(['--version']);
  assert.equal(version.code, 0);
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(version.stdout, `${pkg.version}\n`);
  assert.equal(chatlog(['-V']).stdout, version.stdout);
  for (const args of [
    ['nope'],
    ['key', 'list'],
    ['key', 'list', '1', 'extra'],
    ['export', '777', '--bogus'],
    ['export', '777', '--from'],
    ['serve', '--workers', 'many'],
    ['key', 'issue', '1', '--scope', 'owner'],
    ['hub', 'add', '1', '--time-zone', 'JST'],
    ['import', '777', path.join(dataDir, 'missing.json')],
  ]) {
    const result = chatlog(args);
    assertUserError(result, /./);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('chatlog:'));
    assert.equal(lines.length, 1, args.join(' '));
  }
});

test('errors show a stack trace only with --debug', () => {
  fs.writeFileSync(path.join(dataDir, 'not-a-dir'), '');
  const plain = chatlog(['--data-dir', path.join(dataDir, 'not-a-dir'), 'migrate']);
  assert.equal(plain.code, 1);
  assert.doesNotMatch(plain.stderr, /\n\s+at /);
  const debug = chatlog(['--debug', '--data-dir', path.join(dataDir, 'not-a-dir'), 'migrate']);
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /\n\s+at /);
});

test('demo, serve and export: the printed curl works, and export is byte-identical to the API', async () => {
  const demo = chatlog(['demo']);
  assert.equal(demo.code, 0, demo.stderr);
  const url = /curl '([^']+)'/.exec(demo.stdout)?.[1];
  assert.ok(url, demo.stdout);
  assert.equal(
    /curl '([^']+)'/.exec(chatlog(['demo']).stdout)?.[1],
    url,
    'demo is repeatable and keeps its key',
  );

  const server: ChildProcess = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env,
      CHATLOG_DATA_DIR: dataDir,
      PORT: String(port),
      CHATLOG_SECRET: '',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await waitForStderr(server, 'listening on');
    const response = await fetch(url);
    assert.equal(response.status, 200);
    const body = Buffer.from(await response.arrayBuffer());
    assert.ok(JSON.parse(body.toString()).length > 0);
    const exported = spawnSync(
      process.execPath,
      [BIN, 'export', '6662225', '--from', '2019-11-03', '--to', '2019-11-04'],
      {
        env: { ...process.env, CHATLOG_DATA_DIR: dataDir },
      },
    );
    assert.equal(exported.status, 0);
    assert.deepEqual(exported.stdout, body);
    const health = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(health.status, 200);

    // A backup taken while the server runs, restored into a new data directory with the same
    // secret: the same answer, byte for byte.
    const backupFile = path.join(dataDir, 'backup.db');
    const backup = chatlog(['backup', backupFile]);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stderr, /backup of [\d.]+ MiB written to/);
    assert.equal(fs.statSync(backupFile).mode & 0o777, 0o600);
    assertUserError(chatlog(['backup', backupFile]), /already exists/);
    const restored = tempDir('chatlog-restore-');
    try {
      fs.copyFileSync(backupFile, path.join(restored, 'chatlog.db'));
      fs.copyFileSync(path.join(dataDir, 'secret'), path.join(restored, 'secret'));
      const fromBackup = spawnSync(
        process.execPath,
        [BIN, 'export', '6662225', '--from', '2019-11-03', '--to', '2019-11-04'],
        { env: { ...process.env, CHATLOG_DATA_DIR: restored, CHATLOG_SECRET: '' } },
      );
      assert.equal(fromBackup.status, 0, fromBackup.stderr.toString());
      assert.deepEqual(fromBackup.stdout, body);
      // The key still works against the restored store (same secret, same hash).
      const keyCheck = spawnSync(process.execPath, [BIN, 'key', 'list', '6662225'], {
        env: { ...process.env, CHATLOG_DATA_DIR: restored, CHATLOG_SECRET: '' },
        encoding: 'utf8',
      });
      assert.match(keyCheck.stdout, /\tread\tdemo\t/);
    } finally {
      fs.rmSync(restored, { recursive: true, force: true });
    }
  } finally {
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    assert.equal(await exited, 0, 'serve exits 0 on SIGTERM');
  }
});
