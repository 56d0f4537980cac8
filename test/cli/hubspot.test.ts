/**
 * `./bin/chatlog hubspot channel register` (CONTRACT §18), against a fake HubSpot that checks the
 * request against HubSpot's documented shape (the developer key and app id in the query, the
 * channel's capabilities): the channel is registered once and its id kept; run again, the same
 * channel is updated; without its settings the command says which are missing; the developer key is
 * never printed. `./bin/chatlog hubspot backfill` publishes a connected hub's earlier messages from
 * a day of its zone, with progress.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { createSecretBox } from '../../src/lib/secrets.js';
import { CHANNEL_ID, CLIENT, type FakeHubspot, startFakeHubspot } from '../fixtures/fake-hubspot.js';
import { BIN } from '../fixtures/serve.js';
import {
  createTestStore,
  message,
  storeMessages,
  TEST_SECRET,
  type TestStore,
  withoutSettings,
} from '../helpers.js';

let t: TestStore;
let hubspot: FakeHubspot;

before(async () => {
  t = await createTestStore();
  hubspot = await startFakeHubspot();
});

after(async () => {
  await hubspot?.close();
  await t?.close();
});

function chatlog(env: Record<string, string>, ...args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { ...withoutSettings(), ...t.env, HUBSPOT_API_BASE_URL: hubspot.base, ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('chatlog hubspot channel register: registered once with its webhook, then updated, never another', async () => {
  const env = {
    CHATLOG_HUBSPOT_APP_ID: hubspot.developer.appId,
    CHATLOG_HUBSPOT_DEVELOPER_API_KEY: hubspot.developer.apiKey,
    CHATLOG_PUBLIC_URL: 'https://chatlog.example.com',
  };
  const missing = await chatlog({}, 'hubspot', 'channel', 'register');
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /^chatlog: error: set CHATLOG_HUBSPOT_APP_ID, CHATLOG_HUBSPOT_DEVELOPER_API_KEY, CHATLOG_PUBLIC_URL/,
  );
  const first = await chatlog(env, 'hubspot', 'channel', 'register');
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(JSON.parse(first.stdout), {
    channelId: CHANNEL_ID,
    webhookUrl: 'https://chatlog.example.com/webhooks/hubspot/channel',
    updated: false,
  });
  assert.equal(await t.store.hubspot.channelId(), CHANNEL_ID, 'its id kept');
  const moved = await chatlog(
    { ...env, CHATLOG_PUBLIC_URL: 'https://line.example.com' },
    'hubspot',
    'channel',
    'register',
  );
  assert.equal(moved.code, 0, moved.stderr);
  assert.equal((JSON.parse(moved.stdout) as { updated: boolean }).updated, true);
  assert.deepEqual(
    hubspot.channelCalls.map((c) => [c.method, c.body.webhookUrl]),
    [
      ['POST', 'https://chatlog.example.com/webhooks/hubspot/channel'],
      ['PATCH', 'https://line.example.com/webhooks/hubspot/channel'],
    ],
  );
  const capabilities = hubspot.channelCalls[0]?.body.capabilities as Record<string, unknown>;
  assert.equal(capabilities.threadingModel, 'INTEGRATION_THREAD_ID');
  assert.equal(capabilities.allowOutgoingMessages, true);
  const refused = await chatlog(
    { ...env, CHATLOG_HUBSPOT_DEVELOPER_API_KEY: 'a-wrong-developer-key' },
    'hubspot',
    'channel',
    'register',
  );
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /HubSpot did not register the channel: HubSpot answered 401/);
  for (const run of [missing, first, moved, refused]) {
    assert.ok(
      !`${run.stdout}${run.stderr}`.includes('developer-key') &&
        !`${run.stdout}${run.stderr}`.includes(hubspot.developer.apiKey),
    );
  }
  assert.deepEqual(hubspot.violations, []);
});

test("chatlog hubspot backfill: the messages from a day of the hub's zone, published with progress; refusals", async () => {
  const HUB = '4802';
  await t.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await storeMessages(t.store, HUB, [
    // 2026-11-09 23:30 and 2026-11-10 00:30 in Tokyo.
    message({ lineId: 'Ualice', msg: 'the day before', createdAt: Date.parse('2026-11-09T14:30:00Z') }),
    ...Array.from({ length: 30 }, (_, i) =>
      message({
        lineId: 'Ualice',
        msg: `from the 10th #${i}`,
        createdAt: Date.parse('2026-11-09T15:30:00Z') + i,
      }),
    ),
  ]);
  const env = {
    CHATLOG_HUBSPOT_CLIENT_ID: CLIENT.clientId,
    CHATLOG_HUBSPOT_CLIENT_SECRET: CLIENT.clientSecret,
  };
  const notConnected = await chatlog(env, 'hubspot', 'backfill', HUB, '--from', '2026-11-10');
  assert.equal(notConnected.code, 1);
  assert.match(notConnected.stderr, /hub 4802 is not connected to a HubSpot inbox/);
  const tokens = hubspot.issueTokens('94802');
  hubspot.channelAccounts.add('ca-4802');
  const secrets = createSecretBox(TEST_SECRET);
  await t.store.hubspot.setChannelId(CHANNEL_ID);
  await t.store.hubspot.connect({
    hubId: HUB,
    portalId: '94802',
    accessTokenEncrypted: secrets.encrypt(tokens.accessToken),
    refreshTokenEncrypted: secrets.encrypt(tokens.refreshToken),
    tokenExpiresAt: Date.now() + tokens.expiresIn * 1000,
    inboxId: '1001',
    inboxName: 'LINE',
    channelAccountId: 'ca-4802',
    connectedAt: Date.now(),
  });
  const badDay = await chatlog(env, 'hubspot', 'backfill', HUB, '--from', '2026-11-31');
  assert.equal(badDay.code, 1);
  assert.match(badDay.stderr, /--from must be a day as YYYY-MM-DD/);
  const done = await chatlog(env, 'hubspot', 'backfill', HUB, '--from', '2026-11-10');
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout), {
    hubId: HUB,
    from: '2026-11-09T15:00:00.000Z',
    published: 30,
    total: 30,
    done: true,
  });
  assert.match(done.stderr, /hub 4802 to HubSpot: publishing 30 messages/);
  assert.match(done.stderr, /100% \(30 of 30 messages\)/);
  const texts = hubspot.published.filter((p) => p.channelAccountId === 'ca-4802').map((p) => p.text);
  assert.equal(texts.length, 30);
  assert.ok(!texts.includes('the day before'));
  assert.deepEqual(hubspot.violations, []);
  assert.ok(!`${done.stdout}${done.stderr}`.includes(tokens.accessToken), 'no token printed');
});
