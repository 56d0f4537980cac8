/**
 * `npm run demo`, run as the README says, then everything it prints tried as a newcomer would:
 * the curl line, the account screen with the printed login, /docs, and the signed webhook line.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, rawRequest, tempDir, waitForStderr, withoutSettings } from '../helpers.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = path.join(ROOT, 'bin', 'chatlog');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The environment of a newcomer's shell: no chatlog settings but the data directory given. */
function cleanEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(withoutSettings())) {
    if (!name.startsWith('npm_')) env[name] = value;
  }
  return { ...env, CHATLOG_DATA_DIR: dataDir, ...extra };
}

interface Demo {
  child: ChildProcess;
  stdout: string;
  stop(): Promise<number | null>;
}

/** Starts a command in its own process group and waits until it has printed its webhook line. */
async function startDemo(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Demo> {
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (!/X-Line-Signature.*\n/.test(stdout)) {
    const early = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 50, 'waiting'))]);
    if (early !== 'waiting')
      assert.fail(`the demo exited (${early}) before printing its lines:\n${stdout}${stderr}`);
    if (Date.now() > deadline) assert.fail(`no demo lines within 60 s:\n${stdout}${stderr}`);
  }
  return {
    child,
    stdout,
    stop: async () => {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
      return exited;
    },
  };
}

/** A browser of one: keeps cookies between requests. */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly baseUrl: string) {}
  async send(method: string, pathname: string, form?: Record<string, string>) {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await rawRequest(this.baseUrl, method, pathname, headers, body);
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return { ...res, text: res.body.toString('utf8') };
  }
}

/** Everything the demo printed, tried; the port is the one asked for. */
async function tryEverything(stdout: string, port: number, dataDir: string): Promise<void> {
  const readUrl = /^ {2}curl '([^']+)'$/m.exec(stdout)?.[1];
  assert.ok(readUrl, stdout);
  const base = `http://127.0.0.1:${port}`;
  assert.ok(readUrl.startsWith(`${base}/api/line/6662225/messages?apikey=chl_`), readUrl);
  const first = await fetch(readUrl);
  assert.equal(first.status, 200);
  const before = (await first.json()) as Array<{ messages: unknown[] }>;
  assert.ok(before.length > 0);

  // The account screen with the login printed.
  assert.ok(stdout.includes(`  ${base}/account\n`), stdout);
  const login = /email (\S+), password (\S+)/.exec(stdout);
  assert.ok(login, stdout);
  const [, email = '', password = ''] = login;
  const browser = new Browser(base);
  const signInPage = await browser.send('GET', '/account');
  const csrf = /name="csrf" value="([^"]+)"/.exec(signInPage.text)?.[1] ?? '';
  const signedIn = await browser.send('POST', '/account/sign-in', { csrf, email, password });
  assert.equal(signedIn.status, 303, signedIn.text);
  // Two more keys, so the order means something: the screen and `key list` agree on it.
  for (const label of ['second', 'third']) {
    const issued = spawnSync(process.execPath, [BIN, 'key', 'issue', '6662225', '--label', label], {
      env: cleanEnv(dataDir),
      encoding: 'utf8',
    });
    assert.equal(issued.status, 0, issued.stderr);
  }
  const screen = await browser.send('GET', '/account');
  assert.equal(screen.status, 200);
  const onScreen = [...screen.text.matchAll(/id="key-(key_\w+)"/g)].map((m) => m[1]);
  const listed = spawnSync(process.execPath, [BIN, 'key', 'list', '6662225'], {
    env: cleanEnv(dataDir),
    encoding: 'utf8',
  });
  const rows = listed.stdout.trim().split('\n');
  assert.deepEqual(
    rows.map((row) => row.split('\t')[0]),
    onScreen,
  );
  // Each key's first characters, as the screen shows them.
  for (const row of rows) assert.ok(screen.text.includes(row.split('\t')[1] ?? '?'), row);

  assert.ok(stdout.includes(`The API reference: ${base}/docs\n`), stdout);
  assert.equal((await fetch(`${base}/docs`)).status, 200);
  assert.equal((await fetch(`${base}/`)).status, 200);

  // The signed webhook line, run by a shell as printed: accepted, and its message is then read.
  const webhookLine = /^ {2}(body=.*)$/m.exec(stdout)?.[1];
  assert.ok(webhookLine, stdout);
  const sent = spawnSync('sh', ['-c', `${webhookLine} --silent --show-error --write-out ' %{http_code}'`], {
    encoding: 'utf8',
  });
  assert.equal(sent.stdout.trim().split(' ').at(-1), '200', sent.stdout + sent.stderr);
  const afterWebhook = await (await fetch(readUrl)).text();
  assert.match(
    afterWebhook,
    /"msg":"Sent through the signed webhook","contentType":"text","createdAt":"2019-11-04T05:30:00.000Z"/,
  );
  // A second run changes nothing: LINE's redeliveries are stored once.
  spawnSync('sh', ['-c', webhookLine], { encoding: 'utf8' });
  assert.equal(await (await fetch(readUrl)).text(), afterWebhook);
}

test("package.json's demo script fills the hub and serves: npm run demo -- --port N", async () => {
  const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
  assert.equal(
    scripts.demo,
    'node bin/chatlog demo --serve',
    'so that npm run demo -- --port N reaches the demo',
  );
  const dataDir = tempDir('chatlog-demo-');
  dirs.push(dataDir);
  const port = await freePort();
  const demo = await startDemo('npm', ['run', 'demo', '--', '--port', String(port)], cleanEnv(dataDir));
  try {
    await tryEverything(demo.stdout, port, dataDir);
  } finally {
    await demo.stop();
  }
});

test('PORT is honoured as well, and a second demo run gives a new password and keeps the rest', async () => {
  const dataDir = tempDir('chatlog-demo-');
  dirs.push(dataDir);
  const port = await freePort();
  const env = cleanEnv(dataDir, { PORT: String(port) });
  const first = spawnSync(process.execPath, [BIN, 'demo'], { env, encoding: 'utf8' });
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, new RegExp(`curl 'http://127\\.0\\.0\\.1:${port}/api/line/6662225/messages\\?`));
  const demo = await startDemo(process.execPath, [BIN, 'demo', '--serve'], env);
  try {
    const password = (text: string) => /password (\S+)/.exec(text)?.[1];
    assert.notEqual(password(demo.stdout), password(first.stdout));
    const readUrl = (text: string) => /curl '([^']+)'/.exec(text)?.[1];
    assert.equal(readUrl(demo.stdout), readUrl(first.stdout), 'the demo key is kept');
    await tryEverything(demo.stdout, port, dataDir);
  } finally {
    assert.equal(await demo.stop(), 0, 'Ctrl-C (SIGTERM) ends the demo server cleanly');
  }
});

test('the demo refuses a PostgreSQL store: its printed login belongs in a data directory of its own', () => {
  const dataDir = tempDir('chatlog-demo-');
  dirs.push(dataDir);
  const refused = spawnSync(process.execPath, [BIN, 'demo'], {
    env: cleanEnv(dataDir, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }),
    encoding: 'utf8',
  });
  assert.equal(refused.status, 1);
  assert.equal(
    refused.stderr,
    'chatlog: error: the demo fills the embedded SQLite store only (a data directory of its own); unset DATABASE_URL\n',
  );
  assert.equal(refused.stdout, '');
});

test('a demo that cannot listen (its port taken) changes nothing: the last password still signs in; the error names --port', async () => {
  const dataDir = tempDir('chatlog-demo-');
  dirs.push(dataDir);
  const first = spawnSync(process.execPath, [BIN, 'demo'], { env: cleanEnv(dataDir), encoding: 'utf8' });
  assert.equal(first.status, 0, first.stderr);
  const password = /password (\S+)/.exec(first.stdout)?.[1] ?? '';
  assert.ok(password, first.stdout);

  const net = await import('node:net');
  const taken = await freePort();
  const blocker = net.createServer().listen(taken, '127.0.0.1');
  await new Promise((resolve) => blocker.once('listening', resolve));
  try {
    const failed = spawnSync(process.execPath, [BIN, 'demo', '--serve', '--port', String(taken)], {
      env: cleanEnv(dataDir),
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(failed.status, 1, failed.stderr);
    assert.equal(failed.stdout, '', 'no login printed for a demo that does not run');
    assert.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
    assert.match(failed.stderr, /^chatlog: error: the address is already in use .*port \d+ .*--port/);
  } finally {
    blocker.close();
  }

  // The login of the last demo that ran is still the one that works.
  const port = await freePort();
  const server = spawn(process.execPath, [BIN, 'serve', '--workers', '1', '--port', String(port)], {
    env: cleanEnv(dataDir),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await waitForStderr(server, 'listening on');
    const browser = new Browser(`http://127.0.0.1:${port}`);
    const signInPage = await browser.send('GET', '/account');
    const csrf = /name="csrf" value="([^"]+)"/.exec(signInPage.text)?.[1] ?? '';
    const signedIn = await browser.send('POST', '/account/sign-in', {
      csrf,
      email: 'demo@example.com',
      password,
    });
    assert.equal(signedIn.status, 303, signedIn.text);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
});
