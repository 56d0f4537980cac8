/**
 * The settings are declared once (src/config.settings.ts): the README's table, the command line's help
 * and loadConfig all follow from that table, and loadConfig refuses a wrong value with the same
 * sentence as before the table existed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { README, settingsTable, withSettingsTable } from '../../scripts/settings-table.js';
import { buildProgram } from '../../src/cli/program.js';
import { loadConfig, settingsHelp } from '../../src/config.js';
import { SETTINGS, shownDefault } from '../../src/config.settings.js';
import { UserError } from '../../src/lib/errors.js';

test("README.md's table of settings is the one made from the declarations", () => {
  const readme = fs.readFileSync(README, 'utf8');
  assert.ok(
    withSettingsTable(readme) === readme,
    'README.md\'s settings table differs from src/config.settings.ts: run "node --import tsx scripts/settings-table.ts --write"',
  );
  for (const setting of Object.values(SETTINGS))
    assert.ok(settingsTable().includes(`| \`${setting.env}\` |`));
});

test('each variable is declared once, and every default is a value its check accepts', () => {
  const names = Object.values(SETTINGS).map((setting) => setting.env);
  assert.equal(new Set(names).size, names.length);
  const config = loadConfig({});
  assert.deepEqual(Object.keys(config), Object.keys(SETTINGS));
  for (const [key, setting] of Object.entries(SETTINGS)) {
    if (setting.default === undefined) {
      assert.equal(config[key as keyof typeof config], undefined, `${setting.env} is unset by default`);
    } else {
      assert.deepEqual(config[key as keyof typeof config], setting.parse(setting.default, setting.env));
    }
  }
  // An empty variable is an unset one.
  assert.deepEqual(loadConfig(Object.fromEntries(names.map((name) => [name, '']))), config);
});

test('the defaults', () => {
  const config = loadConfig({});
  assert.equal(config.port, 3000);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.logLevel, 'info');
  assert.equal(config.pgSchema, undefined, '`public` names no schema');
  assert.equal(config.answerCacheBytes, 64 * 1024 * 1024);
  assert.equal(config.secret, undefined);
  assert.equal(shownDefault(SETTINGS.secret), 'generated');
});

test('a wrong value is refused with the sentence that names it', () => {
  const refusals: [Record<string, string>, string][] = [
    [{ CHATLOG_SECRET: 'short' }, 'CHATLOG_SECRET must be at least 32 characters long'],
    [
      { LOG_LEVEL: 'loud' },
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ],
    [{ CHATLOG_PG_SCHEMA: 'Chat' }, 'CHATLOG_PG_SCHEMA must be a lower-case SQL identifier, got "Chat"'],
    [{ CHATLOG_PG_POOL_SIZE: '0' }, 'CHATLOG_PG_POOL_SIZE must be a whole number from 1 to 1000, got "0"'],
    [{ PORT: '65536' }, 'PORT must be a whole number from 0 to 65535, got "65536"'],
    [
      { CHATLOG_REQUEST_TIMEOUT_MS: 'soon' },
      'CHATLOG_REQUEST_TIMEOUT_MS must be a whole number from 500 to 86400000, got "soon"',
    ],
    [
      { CHATLOG_HEADERS_TIMEOUT_MS: '5000', CHATLOG_REQUEST_TIMEOUT_MS: '3000' },
      'CHATLOG_HEADERS_TIMEOUT_MS must not be longer than CHATLOG_REQUEST_TIMEOUT_MS',
    ],
    [{ LINE_API_BASE_URL: 'ftp://x' }, 'LINE_API_BASE_URL must be an http(s) URL, got "ftp://x"'],
    [{ LINE_API_BASE_URL: 'nope' }, 'LINE_API_BASE_URL must be an http(s) URL, got "nope"'],
    [{ CHATLOG_METRICS_TOKEN: 'short' }, 'CHATLOG_METRICS_TOKEN must be at least 16 characters long'],
    [
      { CHATLOG_ANSWER_CACHE_MB: '65537' },
      'CHATLOG_ANSWER_CACHE_MB must be a whole number from 0 to 65536, got "65537"',
    ],
  ];
  for (const [env, message] of refusals) {
    assert.throws(
      () => loadConfig(env),
      (error) => error instanceof UserError && error.message === message,
    );
  }
});

test('with several wrong values, the first in the table is named; the timeouts rule comes right after them', () => {
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
  assert.match(refused({ PORT: 'x', CHATLOG_SECRET: 'short', LOG_LEVEL: 'x' }), /^CHATLOG_SECRET /);
  assert.match(refused({ PORT: 'x', CHATLOG_PG_POOL_SIZE: '0' }), /^CHATLOG_PG_POOL_SIZE /);
  assert.match(
    refused({
      CHATLOG_SHUTDOWN_GRACE_MS: 'x',
      CHATLOG_HEADERS_TIMEOUT_MS: '5000',
      CHATLOG_REQUEST_TIMEOUT_MS: '3000',
    }),
    /must not be longer than/,
  );
});

test('a flag overrides its variable, even when empty', () => {
  const config = loadConfig({ PORT: '4000', HOST: '0.0.0.0' }, { port: '5000' });
  assert.deepEqual([config.port, config.host], [5000, '0.0.0.0']);
  assert.throws(() => loadConfig({ PORT: '4000' }, { port: '' }), /^UserError: PORT must be a whole number/);
  assert.equal(loadConfig({}, { dataDir: '/srv/chatlog' }).dataDir, '/srv/chatlog');
});

test('--help: the flags as before, and serve lists every variable with its default', () => {
  const program = buildProgram();
  const command = (name: string) => program.commands.find((c) => c.name() === name)!;
  const described = (c: ReturnType<typeof command>, flag: string) =>
    c.options.find((option) => option.long === flag)?.description;
  assert.equal(
    program.options.find((option) => option.long === '--data-dir')?.description,
    'data directory of the embedded store (env CHATLOG_DATA_DIR, default ./data)',
  );
  for (const name of ['serve', 'demo']) {
    assert.equal(described(command(name), '--port'), 'TCP port (env PORT, default 3000)');
    assert.equal(described(command(name), '--host'), 'address to bind (env HOST, default 127.0.0.1)');
  }
  let help = '';
  command('serve').configureOutput({ writeOut: (text) => (help += text) });
  command('serve').outputHelp();
  assert.ok(help.endsWith(`${settingsHelp()}\n`));
  for (const setting of Object.values(SETTINGS)) {
    const line = help.split('\n').find((text) => text.trimStart().startsWith(`${setting.env} `));
    assert.equal(line?.trim().split(/ +/).join(' '), `${setting.env} ${shownDefault(setting)}`);
  }
});
