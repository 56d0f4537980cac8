/** CONTRACT §6.1: LINE webhooks against a real listening server, read back through the API. */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { body, GROUP, messageEvent, OTHER_USER, SAMPLE_MESSAGES, signed, USER } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const SECRET = 'f3b1c0ffee0ddba11deadbeef0123456';
let server: TestServer;
let fakeLine: http.Server;
let fakeLineHits = 0;
let hub = 700;

async function newHub(options: { accessToken?: string } = {}) {
  hub += 1;
  const hubId = String(hub);
  await server.hubs.add(hubId, {
    timeZone: 'Asia/Tokyo',
    lineChannelSecret: SECRET,
    lineChannelAccessToken: options.accessToken,
  });
  const { key } = await server.keys.issue(hubId, 'read', '');
  return { hubId, key };
}

function post(hubId: string, raw: string | Buffer, headers = signed(SECRET, raw)) {
  return rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, headers, raw);
}

async function answer(hubId: string, key: string) {
  const res = await rawRequest(server.url, 'GET', `/api/line/${hubId}/messages?apikey=${key}`);
  assert.equal(res.status, 200);
  return JSON.parse(res.body.toString('utf8')) as Array<{
    lineId: string;
    vid: string;
    name: string;
    messages: Array<Record<string, string>>;
  }>;
}

before(async () => {
  fakeLine = http.createServer((req, res) => {
    fakeLineHits += 1;
    assert.equal(req.headers.authorization, 'Bearer test-access-token-1234');
    if (req.url === `/v2/bot/profile/${USER}`) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ userId: USER, displayName: 'しのぶ 🌸' }));
    } else if (req.url === `/v2/bot/group/${GROUP}/member/${OTHER_USER}`) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ userId: OTHER_USER, displayName: 'Group Member' }));
    } else {
      res.writeHead(500).end('broken');
    }
  });
  await new Promise<void>((resolve) => fakeLine.listen(0, '127.0.0.1', resolve));
  const address = fakeLine.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server = await startTestServer({ lineApiBaseUrl: `http://127.0.0.1:${port}` });
});
after(async () => {
  await server.close();
  await new Promise((resolve) => fakeLine.close(resolve));
});

describe('LINE webhooks', () => {
  test("LINE's verification request (no events) → 200", async () => {
    const { hubId } = await newHub();
    const raw = body([]);
    const res = await post(hubId, raw);
    assert.equal(res.status, 200);
  });

  test('every message type is stored and comes back as CONTRACT §3 says', async () => {
    const { hubId, key } = await newHub();
    const events = Object.values(SAMPLE_MESSAGES).map((sample, i) =>
      messageEvent(sample.message, { timestamp: 1_700_000_000_000 + i }),
    );
    events.push(messageEvent({ id: '777', type: 'hologram' }, { timestamp: 1_700_000_000_100 }));
    const res = await post(hubId, body(events));
    assert.equal(res.status, 200);
    const contacts = await answer(hubId, key);
    assert.equal(contacts.length, 1);
    assert.deepEqual(Object.keys(contacts[0] ?? {}), ['lineId', 'vid', 'name', 'messages']);
    assert.equal(contacts[0]?.lineId, USER);
    assert.equal(contacts[0]?.vid, '');
    assert.deepEqual(
      contacts[0]?.messages.map((m) => [m.contentType, m.msg, m.sender, m.createdAt]),
      [
        ...Object.entries(SAMPLE_MESSAGES).map(([type, sample], i) => [
          type,
          sample.msg,
          'User',
          new Date(1_700_000_000_000 + i).toISOString(),
        ]),
        ['hologram', '[Hologram]\nID: 777', 'User', new Date(1_700_000_000_100).toISOString()],
      ],
    );
  });

  test('a missing, malformed or wrong signature, an unknown hub or a hub without a secret → 401, nothing stored', async () => {
    const { hubId, key } = await newHub();
    const raw = body([messageEvent({ id: 'sig-1', type: 'text', text: 'forged' })]);
    const oneByteChanged = raw.replace('forged', 'forgeD');
    await server.hubs.add('99999', {});
    const forgedSignature = signed('another-secret-entirely', raw)['x-line-signature'] ?? '';
    // [why, request, the reason the operator's log gives]
    const cases: Array<[string, () => Promise<{ status: number; body: Buffer }>, string]> = [
      ['no signature', () => post(hubId, raw, { 'content-type': 'application/json' }), 'missing_signature'],
      [
        'malformed',
        () => post(hubId, raw, { 'content-type': 'application/json', 'x-line-signature': 'nope' }),
        'malformed_signature',
      ],
      ['wrong secret', () => post(hubId, raw, signed('another-secret-entirely', raw)), 'wrong_signature'],
      ['one byte changed', () => post(hubId, oneByteChanged, signed(SECRET, raw)), 'wrong_signature'],
      ['unknown hub', () => post('123456789', raw), 'unknown_hub'],
      ['bad hub id', () => post('abc', raw), 'invalid_hub_id'],
      ['hub without a secret', () => post('99999', raw), 'no_channel_secret'],
    ];
    for (const [why, send, reason] of cases) {
      const logged = server.logs.lines.length;
      const res = await send();
      assert.equal(res.status, 401, why);
      assert.equal(JSON.parse(res.body.toString()).error.code, 'invalid_signature', why);
      const warnings = server.logs.lines
        .slice(logged)
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.msg === 'LINE webhook refused');
      assert.equal(warnings.length, 1, `${why}: one warning`);
      assert.equal(warnings[0].reason, reason, why);
      assert.equal(warnings[0].level, 40, `${why}: a warning`);
      assert.ok(warnings[0].reqId, `${why}: with the request id`);
      // Never the body, the secret or the signature.
      const line = JSON.stringify(warnings[0]);
      for (const secret of [SECRET, 'forged', forgedSignature, 'nope'])
        assert.ok(!line.includes(secret), why);
    }
    assert.deepEqual(await answer(hubId, key), []);
  });

  test('a new channel secret is accepted at once; the old one for at most a second', async () => {
    const { hubId, key } = await newHub();
    const first = body([messageEvent({ id: 'rot-1', type: 'text', text: 'old secret' })]);
    assert.equal((await post(hubId, first)).status, 200);
    const NEW_SECRET = 'a-rotated-channel-secret-00000001';
    await server.hubs.add(hubId, { lineChannelSecret: NEW_SECRET });
    const second = body([messageEvent({ id: 'rot-2', type: 'text', text: 'new secret' })]);
    assert.equal((await post(hubId, second, signed(NEW_SECRET, second))).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const late = body([messageEvent({ id: 'rot-3', type: 'text', text: 'old secret, too late' })]);
    assert.equal((await post(hubId, late)).status, 401);
    const texts = (await answer(hubId, key)).flatMap((c) => c.messages.map((m) => m.msg));
    assert.deepEqual(texts, ['old secret', 'new secret']);
  });

  test('redelivery and concurrent duplicates are stored once', async () => {
    const { hubId, key } = await newHub();
    const event = messageEvent({ id: 'dup-1', type: 'text', text: 'once' });
    const raw = body([event]);
    assert.equal((await post(hubId, raw)).status, 200);
    const redelivered = body([{ ...event, deliveryContext: { isRedelivery: true } }]);
    assert.equal((await post(hubId, redelivered)).status, 200);
    const results = await Promise.all(Array.from({ length: 20 }, () => post(hubId, raw)));
    assert.ok(results.every((r) => r.status === 200));
    const contacts = await answer(hubId, key);
    assert.equal(contacts[0]?.messages.length, 1);
  });

  test('follow creates the contact, unfollow keeps its history, unsend removes the message for good', async () => {
    const { hubId, key } = await newHub();
    const follow = {
      type: 'follow',
      mode: 'active',
      timestamp: 1,
      source: { type: 'user', userId: OTHER_USER },
      webhookEventId: 'f1',
      deliveryContext: { isRedelivery: false },
      replyToken: 'r',
      follow: { isUnblocked: false },
    };
    assert.equal((await post(hubId, body([follow]))).status, 200);
    assert.deepEqual(await server.store.contacts.get(hubId, OTHER_USER), {
      lineId: OTHER_USER,
      vid: '',
      name: '',
    });
    assert.deepEqual(await answer(hubId, key), [], 'a contact without messages is left out');

    const kept = messageEvent(
      { id: 'keep-1', type: 'text', text: 'kept' },
      { source: { type: 'user', userId: OTHER_USER } },
    );
    const taken = messageEvent(
      { id: 'take-1', type: 'text', text: 'taken back' },
      { source: { type: 'user', userId: OTHER_USER } },
    );
    await post(hubId, body([kept, taken]));
    const unfollow = {
      type: 'unfollow',
      mode: 'active',
      timestamp: 3,
      source: { type: 'user', userId: OTHER_USER },
      webhookEventId: 'u1',
      deliveryContext: { isRedelivery: false },
    };
    const unsend = {
      type: 'unsend',
      mode: 'active',
      timestamp: 4,
      source: { type: 'user', userId: OTHER_USER },
      webhookEventId: 'x1',
      deliveryContext: { isRedelivery: false },
      unsend: { messageId: 'take-1' },
    };
    assert.equal((await post(hubId, body([unfollow, unsend]))).status, 200);
    assert.deepEqual(
      (await answer(hubId, key))[0]?.messages.map((m) => m.msg),
      ['kept'],
    );
    // LINE redelivers the taken-back message: it stays gone.
    await post(hubId, body([taken]));
    assert.deepEqual(
      (await answer(hubId, key))[0]?.messages.map((m) => m.msg),
      ['kept'],
    );
  });

  test('a timestamp createdAt cannot show (past year 9999) is replaced by the arrival time', async () => {
    const { hubId, key } = await newHub();
    const before = Date.now();
    const far = messageEvent(
      { id: 'future-1', type: 'text', text: 'from the far future' },
      { timestamp: 9_000_000_000_000_000 },
    );
    const logged = server.logs.lines.length;
    assert.equal((await post(hubId, body([far]))).status, 200);
    const createdAt = (await answer(hubId, key))[0]?.messages[0]?.createdAt ?? '';
    assert.equal(createdAt.length, 24);
    assert.ok(Date.parse(createdAt) >= before - 1000);
    // Kept, and the operator is told LINE sent less than it should.
    const warnings = server.logs.lines
      .slice(logged)
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg.startsWith('LINE message events without a usable timestamp'));
    assert.equal(warnings.length, 1);
    assert.deepEqual([warnings[0].level, warnings[0].untimed, warnings[0].unidentified], [40, 1, 0]);
  });

  test('a message event without its sender id is kept under an empty lineId, and logged', async () => {
    const { hubId, key } = await newHub();
    const logged = server.logs.lines.length;
    const anonymous = {
      ...messageEvent({ id: 'anon-1', type: 'text', text: 'who am I' }),
      source: { type: 'user' },
    };
    const bad = messageEvent({ id: 'anon-2', type: 'text', text: 'bad time' }, { timestamp: 'bad' });
    // An empty id is no id; in a group, the group's id is used (CONTRACT: stored under the sender).
    const empty = {
      ...messageEvent({ id: 'anon-3', type: 'text', text: 'empty id' }),
      source: { type: 'user', userId: '' },
    };
    const emptyInGroup = {
      ...messageEvent({ id: 'anon-4', type: 'text', text: 'empty id in a group' }),
      source: { type: 'group', groupId: GROUP, userId: '' },
    };
    assert.equal((await post(hubId, body([anonymous, bad, empty, emptyInGroup]))).status, 200);
    const contacts = await answer(hubId, key);
    assert.deepEqual(
      contacts.map((c) => [c.lineId, c.messages.map((m) => m.msg).sort()]),
      [
        ['', ['empty id', 'who am I']],
        [USER, ['bad time']],
        [GROUP, ['empty id in a group']],
      ],
    );
    const warnings = server.logs.lines
      .slice(logged)
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg.startsWith('LINE message events without'));
    assert.deepEqual([warnings.length, warnings[0]?.untimed, warnings[0]?.unidentified], [1, 1, 2]);
  });

  test('group and room messages are stored under the sending user', async () => {
    const { hubId, key } = await newHub();
    const inGroup = messageEvent(
      { id: 'grp-1', type: 'text', text: 'hello group' },
      { source: { type: 'group', groupId: GROUP, userId: USER } },
    );
    await post(hubId, body([inGroup]));
    const contacts = await answer(hubId, key);
    assert.equal(contacts[0]?.lineId, USER);
  });

  test('bad input: non-JSON, wrong content type, unknown events, oversize bodies; nothing half-stored, still serving', async () => {
    const { hubId, key } = await newHub();
    const notJson = '{"events": [';
    const r1 = await post(hubId, notJson);
    assert.equal(r1.status, 400);
    assert.equal(JSON.parse(r1.body.toString()).error.code, 'invalid_body');

    const raw = body([messageEvent({ id: 'ct-1', type: 'text', text: 'x' })]);
    const r2 = await post(hubId, raw, { ...signed(SECRET, raw), 'content-type': 'text/plain' });
    assert.equal(r2.status, 415);

    const unknown = body([
      { type: 'brandNewEvent', timestamp: 1, whatever: { nested: [1, 2, 3] } },
      { type: 'postback', postback: { data: 'a=1' } },
    ]);
    assert.equal((await post(hubId, unknown)).status, 200);

    const halfBad = body([
      messageEvent({ id: 'ok-1', type: 'text', text: 'fine' }),
      { type: 'message', message: { type: 'text' } },
    ]);
    const r3 = await post(hubId, halfBad);
    assert.equal(r3.status, 400);
    assert.deepEqual(await answer(hubId, key), [], 'nothing of a refused body is stored');

    const tenThousand = body(
      Array.from({ length: 10_000 }, (_, i) => messageEvent({ id: `big-${i}`, type: 'text', text: 'x' })),
    );
    assert.ok(tenThousand.length > 1024 * 1024);
    const r4 = await post(hubId, tenThousand);
    assert.equal(r4.status, 413);
    assert.equal(JSON.parse(r4.body.toString()).error.code, 'payload_too_large');

    const manySmall = Array.from({ length: 3_000 }, (_, i) => ({
      type: 'message',
      timestamp: i,
      source: { type: 'user', userId: USER },
      message: { id: `m-${i}`, type: 'text', text: 'x' },
    }));
    const r5 = await post(hubId, body(manySmall));
    assert.equal(r5.status, 200);
    assert.equal((await answer(hubId, key))[0]?.messages.length, 3_000);

    const wrongMethod = await rawRequest(server.url, 'GET', `/webhooks/line/${hubId}`);
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.allow, 'POST');
  });

  test('display names come from LINE when the hub has an access token; a failed look-up stores anyway', async () => {
    const { hubId, key } = await newHub({ accessToken: 'test-access-token-1234' });
    const events = [
      messageEvent({ id: 'pf-1', type: 'text', text: 'hi' }),
      messageEvent(
        { id: 'pf-2', type: 'text', text: 'from the group' },
        { source: { type: 'group', groupId: GROUP, userId: OTHER_USER } },
      ),
      messageEvent(
        { id: 'pf-3', type: 'text', text: 'lookup fails' },
        { source: { type: 'user', userId: 'Uffffffffffffffffffffffffffffffff' } },
      ),
    ];
    assert.equal((await post(hubId, body(events))).status, 200);
    let contacts = await answer(hubId, key);
    for (let i = 0; i < 50 && contacts.filter((c) => c.name !== '').length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      contacts = await answer(hubId, key);
    }
    assert.deepEqual(
      contacts.map((c) => [c.name, c.messages[0]?.sender]),
      [
        ['しのぶ 🌸', 'しのぶ 🌸'],
        ['Group Member', 'Group Member'],
        ['', 'User'],
      ],
    );
    assert.ok(fakeLineHits >= 3);
  });
});

test('no channel secret or access token reaches the log', () => {
  assert.equal(server.logs.text.includes(SECRET), false);
  assert.equal(server.logs.text.includes('test-access-token-1234'), false);
});
