/**
 * CONTRACT §18, "publishing is durable (kill -9 safe)": `chatlog serve` is killed with SIGKILL while
 * it publishes 5,000 messages of a connected hub (50 friends, 100 each) to a fake HubSpot that
 * checks every request against HubSpot's documented shapes, then started again. Each message
 * reaches HubSpot once by its `integrationIdempotencyId` (sent again at most once: the one whose
 * answer the kill cut), and each friend's messages arrive in the order they were stored.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { createSecretBox } from '../../src/lib/secrets.js';
import { CHANNEL_ID, CLIENT, type FakeHubspot, startFakeHubspot } from '../fixtures/fake-hubspot.js';
import { killHard, startServe, stop } from '../fixtures/serve.js';
import {
  createTestStore,
  freePort,
  message,
  storeMessages,
  TEST_SECRET,
  type TestStore,
  withoutSettings,
} from '../helpers.js';

const HUB = '4801';
const MESSAGES = 5_000;
const FRIENDS = Array.from({ length: 50 }, (_, i) => `U4801${String(i).padStart(28, '0')}`);
let t: TestStore;
let hubspot: FakeHubspot;
const stderr: string[] = [];

function startNode(port: number): Promise<ChildProcess> {
  const env = {
    ...withoutSettings(),
    ...t.env,
    HUBSPOT_API_BASE_URL: hubspot.base,
    CHATLOG_HUBSPOT_CLIENT_ID: CLIENT.clientId,
    CHATLOG_HUBSPOT_CLIENT_SECRET: CLIENT.clientSecret,
  };
  return startServe({ port, env, stderr });
}

before(async () => {
  t = await createTestStore();
  hubspot = await startFakeHubspot();
  await t.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await t.store.hubspot.setChannelId(CHANNEL_ID);
  const tokens = hubspot.issueTokens('94801');
  hubspot.channelAccounts.add('ca-4801');
  const secrets = createSecretBox(TEST_SECRET);
  await t.store.hubspot.connect({
    hubId: HUB,
    portalId: '94801',
    accessTokenEncrypted: secrets.encrypt(tokens.accessToken),
    refreshTokenEncrypted: secrets.encrypt(tokens.refreshToken),
    tokenExpiresAt: Date.now() + tokens.expiresIn * 1000,
    inboxId: '1001',
    inboxName: 'LINE',
    channelAccountId: 'ca-4801',
    connectedAt: Date.now(),
  });
});

after(async () => {
  await hubspot?.close();
  await t?.close();
});

test('kill -9 while publishing 5,000 messages: each reaches HubSpot once, in order per friend', {
  timeout: 300_000,
}, async () => {
  const port = await freePort();
  let node = await startNode(port);
  try {
    const start = Date.now() - MESSAGES;
    await storeMessages(
      t.store,
      HUB,
      Array.from({ length: MESSAGES }, (_, n) =>
        message({ lineId: FRIENDS[n % FRIENDS.length], msg: `crash ${n}`, createdAt: start + n }),
      ),
    );
    // Killed once 2,000 were published.
    const halfway = Date.now() + 120_000;
    while (hubspot.published.length < 2_000) {
      assert.ok(Date.now() < halfway, `published before the kill: ${hubspot.published.length}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await killHard(node);
    const atKill = hubspot.published.length;
    assert.ok(atKill < MESSAGES, `the kill came mid-way: ${atKill}`);
    node = await startNode(port);
    const deadline = Date.now() + 180_000;
    while (hubspot.published.length < MESSAGES && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const texts = hubspot.published.map((p) => p.text);
    assert.equal(new Set(texts).size, texts.length, 'no message published twice');
    assert.equal(texts.length, MESSAGES, `all published: ${texts.length} of ${MESSAGES}`);
    assert.ok(hubspot.repeats.length <= 1, `sent again only the one the kill cut: ${hubspot.repeats.length}`);
    for (const friend of FRIENDS) {
      const mine = hubspot.published
        .filter((p) => p.integrationThreadId === friend)
        .map((p) => Number(/^crash (\d+)$/.exec(p.text)?.[1]));
      assert.deepEqual(
        mine,
        [...mine].sort((a, b) => a - b),
        `${friend}'s messages in the order they were stored`,
      );
    }
    assert.deepEqual(hubspot.violations, []);
    const connection = await t.store.hubspot.get(HUB);
    assert.equal(await t.store.hubspot.waiting(HUB), 0);
    assert.ok((connection?.published ?? 0) >= MESSAGES - 1, `counted: ${connection?.published}`);
  } catch (error) {
    process.stderr.write(`chatlog serve said:\n${stderr.join('')}\n`);
    throw error;
  } finally {
    await stop(node);
  }
});
