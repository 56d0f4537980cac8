/**
 * CONTRACT §18, publishing: every message stored for a hub after it was connected to a HubSpot
 * inbox reaches HubSpot's custom channel once, in order, with §18's fields, against a fake HubSpot
 * that checks each request against HubSpot's documented shapes (test/fixtures/fake-hubspot.ts);
 * tokens are refreshed before they run out and once after a 401; 429 and 5xx pause the hub and it
 * goes on after; a message HubSpot refuses is passed over and said; an erased friend's queued
 * messages are never published.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { parseCalendarDay, startOfDayInZone } from '../../src/lib/calendar.js';
import { createSecretBox } from '../../src/lib/secrets.js';
import { CHANNEL_ID, CLIENT, type FakeHubspot, startFakeHubspot } from '../fixtures/fake-hubspot.js';
import { message, startTestServer, storeMessages, TEST_SECRET, type TestServer } from '../helpers.js';

const secrets = createSecretBox(TEST_SECRET);
let server: TestServer;
let hubspot: FakeHubspot;
let hubCount = 0;

before(async () => {
  hubspot = await startFakeHubspot();
  server = await startTestServer({
    hubspotApiBaseUrl: hubspot.base,
    hubspotClientId: CLIENT.clientId,
    hubspotClientSecret: CLIENT.clientSecret,
  });
  await server.store.hubspot.setChannelId(CHANNEL_ID);
});

after(async () => {
  await server?.close();
  await hubspot?.close();
});

beforeEach(() => {
  assert.deepEqual(hubspot.violations, [], 'every request chatlog made was as HubSpot documents it');
  hubspot.misbehave.length = 0;
});

/** A new hub, with messages from before, connected to an inbox now. */
async function connectedHub(
  expiresInSeconds = 1800,
  before: ReturnType<typeof message>[] = [],
): Promise<{ hubId: string; accessToken: string }> {
  hubCount += 1;
  const hubId = String(1800 + hubCount);
  await server.hubs.add(hubId, { timeZone: 'Asia/Tokyo' });
  await storeMessages(server.store, hubId, [
    ...before,
    message({ lineId: 'Ubefore', msg: 'before the connection', createdAt: Date.now() - 60_000 }),
  ]);
  const tokens = hubspot.issueTokens(`9${hubId}`, expiresInSeconds);
  const channelAccountId = `ca-${hubId}`;
  hubspot.channelAccounts.add(channelAccountId);
  await server.store.hubspot.connect({
    hubId,
    portalId: `9${hubId}`,
    accessTokenEncrypted: secrets.encrypt(tokens.accessToken),
    refreshTokenEncrypted: secrets.encrypt(tokens.refreshToken),
    tokenExpiresAt: Date.now() + tokens.expiresIn * 1000,
    inboxId: '1001',
    inboxName: 'LINE',
    channelAccountId,
    connectedAt: Date.now(),
  });
  return { hubId, accessToken: tokens.accessToken };
}

const ofHub = (hubId: string) => hubspot.published.filter((p) => p.channelAccountId === `ca-${hubId}`);

async function until(what: string, done: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("a connected hub's new messages are published once, in order, as §18 maps them; older ones are not", async () => {
  const { hubId } = await connectedHub();
  const now = Date.now();
  await storeMessages(server.store, hubId, [
    message({ lineId: 'Ualice', vid: '5101', name: '山田', msg: '予約できますか', createdAt: now - 3_000 }),
    message({ lineId: 'Ualice', sender: 'You', msg: 'はい、どうぞ', createdAt: now - 2_000 }),
    message({ lineId: 'Ubob', msg: 'hello', createdAt: now - 1_000 }),
  ]);
  await until('three messages published', () => ofHub(hubId).length === 3);
  const [first, second, third] = ofHub(hubId);
  assert.deepEqual(
    { ...first, id: undefined, integrationIdempotencyId: undefined },
    {
      channelAccountId: `ca-${hubId}`,
      messageDirection: 'INCOMING',
      senders: [
        { deliveryIdentifier: { type: 'CHANNEL_SPECIFIC_OPAQUE_ID', value: 'Ualice' }, name: '山田' },
      ],
      recipients: [
        { deliveryIdentifier: { type: 'CHANNEL_SPECIFIC_OPAQUE_ID', value: `chatlog-hub-${hubId}` } },
      ],
      text: '予約できますか',
      timestamp: new Date(now - 3_000).toISOString(),
      attachments: [],
      integrationThreadId: 'Ualice',
      associateWithContactId: 5101,
      id: undefined,
      integrationIdempotencyId: undefined,
    },
  );
  assert.equal(second?.messageDirection, 'OUTGOING');
  assert.equal(second?.senders[0]?.deliveryIdentifier.value, `chatlog-hub-${hubId}`);
  assert.equal(second?.recipients[0]?.deliveryIdentifier.value, 'Ualice');
  assert.equal(third?.associateWithContactId, undefined, 'no vid, no association');
  // Each under its own message id, as the feed gives it.
  const readKey = (await server.keys.issue(hubId, 'read', '')).key;
  const res = await server.request(`/api/line/${hubId}/changes?apikey=${readKey}&limit=100`);
  const { changes } = (await res.json()) as {
    changes: Array<{ type: string; id: string; message: { msg: string } }>;
  };
  const ids = changes
    .filter((c) => c.type === 'message.created' && c.message.msg !== 'before the connection')
    .map((c) => c.id);
  assert.deepEqual(
    ofHub(hubId).map((p) => p.integrationIdempotencyId),
    ids,
  );
  assert.ok(!ofHub(hubId).some((p) => p.text === 'before the connection'));
  await until('the connection says 3 published, none waiting', async () => {
    const connection = await server.store.hubspot.get(hubId);
    return connection?.published === 3 && (await server.store.hubspot.waiting(hubId)) === 0;
  });
  assert.deepEqual(hubspot.repeats, []);
});

test('an expired token is refreshed once after the 401 and publishing goes on; one about to run out is refreshed first', async () => {
  const { hubId, accessToken } = await connectedHub();
  hubspot.expire(accessToken);
  const refreshesBefore = hubspot.refreshes;
  await storeMessages(server.store, hubId, [
    message({ lineId: 'Ucarol', msg: 'after expiry', createdAt: Date.now() }),
  ]);
  await until('published with a new token', () => ofHub(hubId).length === 1);
  assert.equal(hubspot.refreshes - refreshesBefore, 1);
  const connection = await server.store.hubspot.get(hubId);
  assert.notEqual(
    secrets.decrypt(connection?.accessTokenEncrypted ?? Buffer.alloc(0)),
    accessToken,
    'the new token kept',
  );
  assert.ok((connection?.tokenExpiresAt ?? 0) > Date.now() + 60_000);

  const soon = await connectedHub(60);
  const before401s = hubspot.requests.filter((r) => r.status === 401).length;
  await storeMessages(server.store, soon.hubId, [
    message({ lineId: 'Udave', msg: 'token nearly out', createdAt: Date.now() }),
  ]);
  await until('published', () => ofHub(soon.hubId).length === 1);
  assert.equal(
    hubspot.requests.filter((r) => r.status === 401).length,
    before401s,
    'refreshed before, not after a 401',
  );
});

test('429 with Retry-After and a 5xx pause the hub, then it goes on in order; a refused message is passed over and said', async () => {
  const { hubId } = await connectedHub();
  hubspot.misbehave.push({ status: 429, retryAfterSeconds: 1 }, { status: 503 });
  const now = Date.now();
  await storeMessages(
    server.store,
    hubId,
    ['one', 'two', 'three'].map((msg, i) => message({ lineId: 'Ueve', msg, createdAt: now + i })),
  );
  await until('all three published', () => ofHub(hubId).length === 3);
  assert.deepEqual(
    ofHub(hubId).map((p) => p.text),
    ['one', 'two', 'three'],
  );
  const paused = hubspot.requests.filter((r) => r.status === 429 || r.status === 503).length;
  assert.ok(paused >= 2);

  hubspot.misbehave.push({ status: 400, message: 'text: must not be blank' });
  await storeMessages(server.store, hubId, [
    message({ lineId: 'Ueve', msg: 'refused', createdAt: Date.now() }),
    message({ lineId: 'Ueve', msg: 'after the refusal', createdAt: Date.now() + 1 }),
  ]);
  await until('the next one published', () => ofHub(hubId).some((p) => p.text === 'after the refusal'));
  assert.ok(!ofHub(hubId).some((p) => p.text === 'refused'));
  const connection = await server.store.hubspot.get(hubId);
  assert.match(
    connection?.lastError ?? '',
    /HubSpot answered 400: VALIDATION_ERROR: text: must not be blank/,
  );
  assert.ok(!(connection?.lastError ?? '').includes('fake-access'), 'no token in the error');
});

test("an erased friend's messages waiting to be published are never published", async () => {
  const { hubId } = await connectedHub();
  // HubSpot asks for a pause of 2 s: the messages wait, and the friend is erased meanwhile.
  hubspot.misbehave.push({ status: 429, retryAfterSeconds: 2 });
  await storeMessages(server.store, hubId, [
    message({ lineId: 'Ufirst', msg: 'first', createdAt: Date.now() }),
  ]);
  await until('the 429', () => hubspot.requests.some((r) => r.status === 429));
  await storeMessages(server.store, hubId, [
    message({ lineId: 'Uerased', msg: 'erase me', createdAt: Date.now() }),
    message({ lineId: 'Ukept', msg: 'keep me', createdAt: Date.now() + 1 }),
  ]);
  const adminKey = (await server.keys.issue(hubId, 'admin', '')).key;
  const erased = await server.request(`/api/line/${hubId}/contacts/Uerased`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${adminKey}` },
  });
  assert.equal(erased.status, 200);
  await until('the others published', () => ofHub(hubId).some((p) => p.text === 'keep me'));
  assert.deepEqual(
    ofHub(hubId).map((p) => p.text),
    ['first', 'keep me'],
  );
});

test('a disconnected hub publishes nothing more', async () => {
  const { hubId } = await connectedHub();
  assert.equal(await server.store.hubspot.disconnect(hubId, Date.now()), true);
  await storeMessages(server.store, hubId, [
    message({ lineId: 'Ufrank', msg: 'not published', createdAt: Date.now() }),
  ]);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.deepEqual(ofHub(hubId), []);
  assert.equal(await server.store.hubspot.waiting(hubId), 0, 'nothing waits for a disconnected hub');
});

test('a backfill publishes what was stored before the connection from its day on, once; an earlier day adds only the days before; a token that runs out mid-way is refreshed once', async () => {
  const tokyo = (day: string) =>
    startOfDayInZone(parseCalendarDay(day) ?? { year: 0, month: 0, day: 0 }, 'Asia/Tokyo');
  const before = ['2026-11-01', '2026-11-10', '2026-11-20'].flatMap((day) =>
    Array.from({ length: 10 }, (_, i) =>
      message({
        lineId: i % 2 === 0 ? 'Ueven' : 'Uodd',
        msg: `${day} #${i}`,
        createdAt: tokyo(day) + 3_600_000 + i,
      }),
    ),
  );
  const { hubId, accessToken } = await connectedHub(1800, before);
  const refreshes = hubspot.refreshes;
  hubspot.delayMs = 20;
  const started = await server.store.hubspot.startBackfill(hubId, tokyo('2026-11-10'));
  assert.equal(started?.backfill?.total, 21, 'the 10th and the 20th, and the message of a minute ago');
  await until('five published', () => ofHub(hubId).length >= 5);
  hubspot.expire(accessToken);
  await until(
    'the backfill done',
    async () => (await server.store.hubspot.get(hubId))?.backfill?.done === true,
  );
  hubspot.delayMs = 0;
  assert.equal(hubspot.refreshes - refreshes, 1, 'refreshed once, and it went on');
  const texts = ofHub(hubId).map((p) => p.text);
  assert.equal(texts.length, 21);
  assert.equal(new Set(texts).size, 21, 'each once');
  assert.ok(!texts.some((t) => t.startsWith('2026-11-01')), 'nothing before its day');
  for (const friend of ['Ueven', 'Uodd']) {
    const mine = ofHub(hubId)
      .filter((p) => p.integrationThreadId === friend)
      .map((p) => p.text);
    assert.deepEqual(mine, [...mine].sort(), `${friend}'s in order`);
  }
  const done = (await server.store.hubspot.get(hubId))?.backfill;
  assert.deepEqual([done?.published, done?.total], [21, 21]);
  // An earlier day: only the days before the first backfill's.
  const earlier = await server.store.hubspot.startBackfill(hubId, tokyo('2026-11-01'));
  assert.equal(earlier?.backfill?.total, 10);
  await until(
    'the 1st published',
    async () => (await server.store.hubspot.get(hubId))?.backfill?.done === true,
  );
  assert.equal(ofHub(hubId).length, 31);
  assert.equal(ofHub(hubId).filter((p) => p.text.startsWith('2026-11-01')).length, 10);
  // The same days again: nothing more.
  const again = await server.store.hubspot.startBackfill(hubId, tokyo('2026-11-01'));
  assert.equal(again?.backfill?.done, true);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(ofHub(hubId).length, 31);
  assert.deepEqual(hubspot.repeats, []);
});
