/**
 * CONTRACT §18, answering from HubSpot: an agent's reply in a connected inbox reaches chatlog as
 * HubSpot's outgoing-message webhook (signed by HubSpot's own library), becomes one LINE push (a
 * fake LINE that checks each push against LINE's definition), one message from You in chatlog, and
 * one status update to HubSpot (SENT, or FAILED with LINE's words); it is never published back to
 * HubSpot, and a webhook delivered again sends nothing more. A request HubSpot did not sign is 401.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createSecretBox } from '../../src/lib/secrets.js';
import { CHANNEL_ID, CLIENT, type FakeHubspot, startFakeHubspot } from '../fixtures/fake-hubspot.js';
import { type FakeLinePush, startFakeLinePush } from '../fixtures/fake-line-push.js';
import { message, startTestServer, storeMessages, TEST_SECRET, type TestServer } from '../helpers.js';

const HUB = '1850';
const PORTAL = '91850';
const ACCOUNT = 'ca-1850';
const FRIEND = 'U1850aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
let server: TestServer;
let hubspot: FakeHubspot;
let line: FakeLinePush;
let url = '';

before(async () => {
  hubspot = await startFakeHubspot();
  line = await startFakeLinePush();
  server = await startTestServer({
    hubspotApiBaseUrl: hubspot.base,
    hubspotClientId: CLIENT.clientId,
    hubspotClientSecret: CLIENT.clientSecret,
    lineApiBaseUrl: line.base,
  });
  url = `${server.url}/webhooks/hubspot/channel`;
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo', lineChannelAccessToken: line.token });
  await storeMessages(server.store, HUB, [
    message({ lineId: FRIEND, name: '山田', msg: '予約できますか', createdAt: Date.now() - 60_000 }),
  ]);
  await server.store.hubspot.setChannelId(CHANNEL_ID);
  const tokens = hubspot.issueTokens(PORTAL);
  hubspot.channelAccounts.add(ACCOUNT);
  const secrets = createSecretBox(TEST_SECRET);
  await server.store.hubspot.connect({
    hubId: HUB,
    portalId: PORTAL,
    accessTokenEncrypted: secrets.encrypt(tokens.accessToken),
    refreshTokenEncrypted: secrets.encrypt(tokens.refreshToken),
    tokenExpiresAt: Date.now() + tokens.expiresIn * 1000,
    inboxId: '1001',
    inboxName: 'LINE',
    channelAccountId: ACCOUNT,
    connectedAt: Date.now(),
  });
});

after(async () => {
  await server?.close();
  await hubspot?.close();
  await line?.close();
});

beforeEach(() => {
  assert.deepEqual(hubspot.violations, [], 'every request chatlog made to HubSpot was as documented');
  assert.deepEqual(line.violations, [], 'every push was as LINE defines it');
});

const reply = (text: string, more: Partial<Parameters<FakeHubspot['agentReplies']>[0]> = {}) =>
  hubspot.agentReplies({ url, portalId: PORTAL, channelAccountId: ACCOUNT, lineId: FRIEND, text, ...more });

async function until(what: string, done: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function youMessages(): Promise<string[]> {
  const readKey = (await server.keys.issue(HUB, 'read', '')).key;
  const res = await server.request(`/api/line/${HUB}/messages?apikey=${readKey}`);
  const contacts = (await res.json()) as Array<{
    lineId: string;
    messages: Array<{ msg: string; sender: string }>;
  }>;
  return (contacts.find((c) => c.lineId === FRIEND)?.messages ?? [])
    .filter((m) => m.sender === 'You')
    .map((m) => m.msg);
}

test("an agent's reply is one push to LINE, one message from You, one SENT status, and is not published back", async () => {
  const text = 'ご予約ありがとうございます。\n明日10時にお待ちしています 🙂';
  const first = await reply(text);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const { sends } = first.body as { sends: string[]; ignored: number };
  assert.equal(sends.length, 1);
  await until('the SENT status', () => hubspot.statuses.some((s) => s.messageId === first.messageId));
  assert.deepEqual(
    hubspot.statuses.filter((s) => s.messageId === first.messageId),
    [{ messageId: first.messageId, statusType: 'SENT' }],
  );
  assert.equal(line.delivered.get(FRIEND)?.filter((m) => m.text === text).length, 1, 'pushed once');
  assert.deepEqual(
    (await youMessages()).filter((m) => m === text),
    [text],
    'stored once as You',
  );
  // HubSpot delivers the same webhook again: the same send, nothing more.
  const again = await reply(text, { messageId: first.messageId });
  assert.deepEqual((again.body as { sends: string[] }).sends, sends);
  // A friend's message after it is published; the reply never is.
  await storeMessages(server.store, HUB, [
    message({ lineId: FRIEND, msg: 'ありがとう', createdAt: Date.now() }),
  ]);
  await until('the friend’s message published', () => hubspot.published.some((p) => p.text === 'ありがとう'));
  assert.equal(hubspot.published.filter((p) => p.text === text).length, 0, 'not published back');
  assert.equal(line.delivered.get(FRIEND)?.filter((m) => m.text === text).length, 1, 'still pushed once');
  assert.equal(hubspot.statuses.filter((s) => s.messageId === first.messageId).length, 1, 'one status');
});

test("a push LINE refuses is a FAILED status with LINE's words", async () => {
  line.misbehave.push({ status: 400, message: 'The request body has 1 error(s)' });
  const refused = await reply('これは届かない');
  assert.equal(refused.status, 200);
  await until('the FAILED status', () => hubspot.statuses.some((s) => s.messageId === refused.messageId));
  const status = hubspot.statuses.find((s) => s.messageId === refused.messageId);
  assert.equal(status?.statusType, 'FAILED');
  assert.match(status?.errorMessage ?? '', /LINE answered 400: The request body has 1 error\(s\)/);
  assert.ok(!(await youMessages()).includes('これは届かない'), 'nothing stored');
});

test("a reply chatlog cannot send (no such friend, a text over LINE's limit) is a FAILED status with why, once", async () => {
  const pushes = line.pushes.length;
  const stranger = await reply('どなたですか', { lineId: 'U1850bbbbbbbbbbbbbbbbbbbbbbbbbbbb' });
  assert.equal(stranger.status, 200);
  const tooLong = await reply('あ'.repeat(5_001));
  assert.equal(tooLong.status, 200);
  for (const [refused, why] of [
    [stranger, /has no contact U1850bbbbbbbbbbbbbbbbbbbbbbbbbbbb/],
    [tooLong, /must be 1 to 5000 characters/],
  ] as const) {
    await until('the FAILED status', () => hubspot.statuses.some((s) => s.messageId === refused.messageId));
    const status = hubspot.statuses.find((s) => s.messageId === refused.messageId);
    assert.equal(status?.statusType, 'FAILED');
    assert.match(status?.errorMessage ?? '', why);
  }
  // HubSpot delivers the first again: no second status, and nothing ever reached LINE.
  await reply('どなたですか', { lineId: 'U1850bbbbbbbbbbbbbbbbbbbbbbbbbbbb', messageId: stranger.messageId });
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal(hubspot.statuses.filter((s) => s.messageId === stranger.messageId).length, 1, 'one status');
  assert.equal(line.pushes.length, pushes, 'nothing pushed');
});

test('what is not an agent reply of a connected hub is ignored; a request HubSpot did not sign is 401', async () => {
  const pushes = line.pushes.length;
  const echo = await reply('published by chatlog itself', { clientType: 'INTEGRATION' });
  assert.deepEqual(echo.body, { sends: [], ignored: 1 });
  const otherAccount = await reply('another account', { channelAccountId: 'ca-unknown' });
  assert.deepEqual(otherAccount.body, { sends: [], ignored: 1 });
  const otherPortal = await reply('another portal', { portalId: '999' });
  assert.deepEqual(otherPortal.body, { sends: [], ignored: 1 });
  const stranger = await reply('a friend chatlog does not know', {
    lineId: 'U1850bbbbbbbbbbbbbbbbbbbbbbbbbbbb',
  });
  assert.deepEqual(stranger.body, { sends: [], ignored: 1 });
  const forged = await reply('forged', { secret: 'not-the-client-secret' });
  assert.equal(forged.status, 401);
  assert.equal((forged.body as { error: { code: string } }).error.code, 'invalid_signature');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(line.pushes.length, pushes, 'nothing pushed');
});
