/**
 * CONTRACT §16, replying to a LINE friend, against a fake LINE push API that checks every request
 * against LINE's own definition (test/fixtures/fake-line-push.ts): a send is answered 202, reaches
 * LINE once with the same retry key at every attempt, and what LINE took is stored as the contact's
 * message from You, which the read API, the feed and search show; LINE's refusals and troubles, the
 * idempotency key, the order of a contact's sends, and every refusal before anything is queued.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { type FakeLinePush, startFakeLinePush } from '../fixtures/fake-line-push.js';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';

let server: TestServer;
let line: FakeLinePush;
let sendKey = '';
let readKey = '';
const HUB = '1600';
const FRIEND = 'U1600aaaaaaaaaaaaaaaaaaaaaaaaaaaa';

before(async () => {
  line = await startFakeLinePush();
  server = await startTestServer({ lineApiBaseUrl: line.base });
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo', lineChannelAccessToken: line.token });
  await server.hubs.add('1601', { timeZone: 'Asia/Tokyo' });
  await storeMessages(server.store, HUB, [
    message({ lineId: FRIEND, name: '山田', msg: '予約できますか', createdAt: Date.now() - 60_000 }),
  ]);
  await storeMessages(server.store, '1601', [
    message({ lineId: FRIEND, msg: 'こんにちは', createdAt: Date.now() - 60_000 }),
  ]);
  sendKey = (await server.keys.issue(HUB, 'send', '')).key;
  readKey = (await server.keys.issue(HUB, 'read', '')).key;
});

after(async () => {
  await server?.close();
  await line?.close();
});

beforeEach(() => {
  assert.deepEqual(
    line.violations,
    [],
    `every request chatlog made was as LINE defines it: ${line.violations.join('; ')}`,
  );
  line.misbehave.length = 0;
  line.delayMs = 0;
});

interface SendView {
  id: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  error?: string;
  messageIds?: string[];
}

const send = (body: unknown, { hubId = HUB, lineId = FRIEND, key = sendKey } = {}) =>
  server.request(`/api/line/${hubId}/contacts/${encodeURIComponent(lineId)}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function accepted(body: unknown, lineId = FRIEND): Promise<SendView> {
  const res = await send(body, { lineId });
  const json = (await res.json()) as { send: SendView };
  assert.equal(res.status, 202, JSON.stringify(json));
  return json.send;
}

/** The send once it is no longer pending (read with a read key, as a dashboard would). */
async function settled(id: string, timeoutMs = 20_000): Promise<SendView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.request(`/api/line/${HUB}/sends/${id}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    assert.equal(res.status, 200);
    const { send: now } = (await res.json()) as { send: SendView };
    if (now.status !== 'pending' || Date.now() > deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The feed's message.created changes of the hub, from its start. */
async function feedCreated(): Promise<Array<{ id: string; message: { msg: string; sender: string } }>> {
  const res = await server.request(`/api/line/${HUB}/changes?apikey=${readKey}&limit=1000`);
  const page = (await res.json()) as {
    changes: Array<{ type: string; id: string; message: { msg: string; sender: string } }>;
  };
  return page.changes.filter((c) => c.type === 'message.created');
}

async function youMessages(): Promise<Array<{ msg: string; sender: string }>> {
  const res = await server.request(`/api/line/${HUB}/messages?apikey=${readKey}`);
  const contacts = (await res.json()) as Array<{
    lineId: string;
    messages: Array<{ msg: string; sender: string; id?: string }>;
  }>;
  return (contacts.find((c) => c.lineId === FRIEND)?.messages ?? []).filter((m) => m.sender === 'You');
}

test('a reply reaches LINE once, is stored as You under its LINE id, and shows in the read API, the feed and search', async () => {
  const text = 'ご予約ありがとうございます。\n明日10時にお待ちしています 😀';
  const pending = await accepted({ messages: [{ type: 'text', text }] });
  assert.equal(pending.status, 'pending');
  const done = await settled(pending.id);
  assert.equal(done.status, 'sent', JSON.stringify(done));
  assert.equal(done.messageIds?.length, 1);
  const pushes = line.pushes.filter((p) => p.to === FRIEND && p.messages[0]?.text === text);
  assert.equal(pushes.length, 1);
  assert.deepEqual(pushes[0]?.messages, [{ type: 'text', text }]);
  assert.equal((await youMessages()).filter((m) => m.msg === text).length, 1);
  // The feed: a message.created of it, under LINE's id.
  const created = (await feedCreated()).filter((c) => c.message.msg === text);
  assert.equal(created.length, 1);
  assert.equal(created[0]?.id, done.messageIds?.[0]);
  assert.equal(created[0]?.message.sender, 'You');
  // Search finds it as soon as its send is answered sent.
  const found = await server.request(
    `/api/line/${HUB}/search?apikey=${readKey}&q=${encodeURIComponent('お待ち')}`,
  );
  const hits = (await found.json()) as {
    results: Array<{ id: string; message: { msg: string; sender: string } }>;
  };
  assert.ok(
    hits.results.some(
      (h) => h.id === done.messageIds?.[0] && h.message.msg === text && h.message.sender === 'You',
    ),
    JSON.stringify(hits),
  );
});

test("a later ingest record with a sent message's LINE id is a duplicate, not a second message", async () => {
  const text = '領収書をお送りしました';
  const done = await settled((await accepted({ messages: [{ type: 'text', text }] })).id);
  assert.equal(done.status, 'sent', JSON.stringify(done));
  const ingestKey = (await server.keys.issue(HUB, 'ingest', '')).key;
  // What a CRM that also logs the reply would send in: the same LINE message id.
  const res = await server.request(`/ingest/line/${HUB}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ lineId: FRIEND, msg: text, id: done.messageIds?.[0] }]),
  });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { stored: 0, duplicates: 1 });
  assert.equal((await youMessages()).filter((m) => m.msg === text).length, 1);
});

test('a sent message whose LINE id another message already has is stored once under an id of its own, and the queue goes on', async () => {
  // The fake LINE numbers its messages in order: the next send's id is known.
  const first = await settled((await accepted({ messages: [{ type: 'text', text: '一通目' }] })).id);
  assert.equal(first.status, 'sent', JSON.stringify(first));
  const nextId = String(BigInt(first.messageIds?.[0] ?? '0') + 1n);
  const ingestKey = (await server.keys.issue(HUB, 'ingest', '')).key;
  const logged = await server.request(`/ingest/line/${HUB}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ lineId: FRIEND, msg: '別の記録', id: nextId, sender: 'You' }]),
  });
  assert.equal(logged.status, 200);
  // On PostgreSQL the sends' one-statement way gives up on the taken id and the shared way stores it.
  const second = await settled((await accepted({ messages: [{ type: 'text', text: '二通目' }] })).id);
  assert.equal(second.status, 'sent', JSON.stringify(second));
  assert.deepEqual(second.messageIds, [nextId]);
  // The id shows once (the other record's), and the sent message is stored once, under an id of
  // its own, as ingest does with a taken id.
  const feed = await feedCreated();
  const withId = feed.filter((c) => c.id === nextId);
  assert.deepEqual(
    withId.map((c) => c.message.msg),
    ['別の記録'],
  );
  const sent = feed.filter((c) => c.message.msg === '二通目');
  assert.equal(sent.length, 1, JSON.stringify(sent));
  assert.equal(sent[0]?.message.sender, 'You');
  // The next send goes as ever: its contact's queue moved on.
  const third = await settled((await accepted({ messages: [{ type: 'text', text: '三通目' }] })).id);
  assert.equal(third.status, 'sent', JSON.stringify(third));
});

test('the same idempotency key answers the first send and sends nothing again', async () => {
  const body = { messages: [{ type: 'text', text: '一度だけ' }], idempotencyKey: 'order-1042' };
  const first = await accepted(body);
  const again = await accepted(body);
  assert.equal(again.id, first.id);
  await settled(first.id);
  const third = await accepted(body);
  assert.equal(third.id, first.id);
  assert.equal(third.status, 'sent');
  assert.equal(line.pushes.filter((p) => p.messages[0]?.text === '一度だけ').length, 1);
});

test('refusals before anything is queued: each its code, naming the field', async () => {
  const before = line.pushes.length;
  const cases: Array<[Response, number, string, RegExp?]> = [
    [
      await send({ messages: [{ type: 'text', text: 'x' }] }, { lineId: 'Unobody' }),
      404,
      'contact_not_found',
    ],
    [
      await send(
        { messages: [{ type: 'text', text: 'x' }] },
        { hubId: '1601', key: (await server.keys.issue('1601', 'send', '')).key },
      ),
      409,
      'no_channel_access_token',
    ],
    [
      await send({ messages: [{ type: 'text', text: 'あ'.repeat(5001) }] }),
      400,
      'invalid_body',
      /messages\[0\]\.text/,
    ],
    [
      await send({ messages: Array.from({ length: 6 }, () => ({ type: 'text', text: 'x' })) }),
      400,
      'invalid_body',
      /messages/,
    ],
    [
      await send({ messages: [{ type: 'sticker', packageId: '446' }] }),
      400,
      'invalid_body',
      /messages\[0\]\.stickerId/,
    ],
    [await send({ messages: [] }), 400, 'invalid_body', /messages/],
    [await send({ messages: [{ type: 'image', url: 'x' }] }), 400, 'invalid_body', /messages\[0\]\.type/],
    [await send({ messages: [{ type: 'text', text: 'x' }] }, { key: readKey }), 403, 'insufficient_scope'],
  ];
  for (const [res, status, code, field] of cases) {
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(res.status, status, JSON.stringify(error));
    assert.equal(error.code, code);
    if (field) assert.match(error.message, field);
  }
  // A text of exactly 5,000 characters is LINE's limit, not over it.
  const longest = await accepted({ messages: [{ type: 'text', text: 'あ'.repeat(5000) }] });
  assert.equal((await settled(longest.id)).status, 'sent');
  assert.equal(line.pushes.length, before + 1);
});

test("LINE's 429 and 5xx are tried again with the same retry key; a 400 fails with LINE's words and stores nothing", async () => {
  line.misbehave.push({ status: 429, retryAfterSeconds: 1 }, { status: 500 });
  const busy = await accepted({ messages: [{ type: 'text', text: '混雑中でも届く' }] });
  const done = await settled(busy.id);
  assert.equal(done.status, 'sent', JSON.stringify(done));
  assert.equal(done.attempts, 3);
  const attempts = line.pushes.filter((p) => p.messages[0]?.text === '混雑中でも届く');
  assert.deepEqual(
    attempts.map((p) => p.status),
    [429, 500, 200],
  );
  assert.equal(new Set(attempts.map((p) => p.retryKey)).size, 1, 'one retry key for every attempt');
  assert.equal((await youMessages()).filter((m) => m.msg === '混雑中でも届く').length, 1);

  line.misbehave.push({
    status: 400,
    message: 'The request body has 1 error(s)',
    details: [{ message: 'May not be empty', property: 'messages[0].text' }],
  });
  const refused = await accepted({ messages: [{ type: 'text', text: '断られる' }] });
  const failed = await settled(refused.id);
  assert.equal(failed.status, 'failed');
  assert.match(
    failed.error ?? '',
    /LINE answered 400: The request body has 1 error\(s\); messages\[0\]\.text: May not be empty/,
  );
  assert.equal((await youMessages()).filter((m) => m.msg === '断られる').length, 0);

  line.misbehave.push({ status: 429, message: 'You have reached your monthly limit.' });
  const quota = await settled((await accepted({ messages: [{ type: 'text', text: '今月の上限' }] })).id);
  assert.equal(quota.status, 'failed');
  assert.match(quota.error ?? '', /monthly limit/);
});

test('an answer lost after LINE took the push: the retry gets 409 with the ids, and the messages are stored once', async () => {
  line.misbehave.push({ dropAfterAccepting: true });
  const lost = await accepted({
    messages: [
      { type: 'text', text: '答えが消えた' },
      { type: 'sticker', packageId: '446', stickerId: '1988' },
    ],
  });
  const done = await settled(lost.id);
  assert.equal(done.status, 'sent', JSON.stringify(done));
  const attempts = line.pushes.filter((p) => p.messages[0]?.text === '答えが消えた');
  assert.deepEqual(
    attempts.map((p) => p.status),
    [200, 409],
  );
  assert.equal(line.delivered.get(FRIEND)?.filter((m) => m.text === '答えが消えた').length, 1);
  const you = await youMessages();
  assert.equal(you.filter((m) => m.msg === '答えが消えた').length, 1);
  const sticker = (await feedCreated()).filter((c) => c.id === done.messageIds?.[1]);
  assert.equal(sticker.length, 1);
  assert.match(sticker[0]?.message.msg ?? '', /^\[Sticker\]/);
});

test("a contact's sends reach LINE in the order they were accepted", async () => {
  line.delayMs = 30;
  const texts = Array.from({ length: 8 }, (_, i) => `順番 ${i}`);
  const ids: string[] = [];
  for (const text of texts) ids.push((await accepted({ messages: [{ type: 'text', text }] })).id);
  for (const id of ids) assert.equal((await settled(id)).status, 'sent');
  const order = line.pushes
    .filter((p) => String(p.messages[0]?.text).startsWith('順番'))
    .map((p) => p.messages[0]?.text);
  assert.deepEqual(order, texts);
});

test('a send of another hub, or an unknown id, is not found', async () => {
  const res = await server.request(`/api/line/${HUB}/sends/00000000-0000-0000-0000-000000000000`, {
    headers: { authorization: `Bearer ${sendKey}` },
  });
  assert.equal(res.status, 404);
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'not_found');
  const other = (await server.keys.issue('1601', 'read', '')).key;
  const mine = await accepted({ messages: [{ type: 'text', text: 'ひみつ' }] });
  const cross = await server.request(`/api/line/${HUB}/sends/${mine.id}`, {
    headers: { authorization: `Bearer ${other}` },
  });
  assert.equal(cross.status, 403);
  assert.equal((await settled(mine.id)).status, 'sent');
  assert.deepEqual(line.violations, []);
});

test('erasing the contact takes its sends with it: one not yet sent never goes', async () => {
  const lineId = 'U1600eeeeeeeeeeeeeeeeeeeeeeeeeeee';
  await storeMessages(server.store, HUB, [
    message({ lineId, msg: '消してください', createdAt: Date.now() - 1_000 }),
  ]);
  // LINE busy: the send waits for its next attempt (each a second or more after the one before).
  line.misbehave.push({ status: 503 }, { status: 503 }, { status: 503 });
  const waiting = await accepted({ messages: [{ type: 'text', text: '消える返信' }] }, lineId);
  const deadline = Date.now() + 10_000;
  while (!line.pushes.some((p) => p.messages[0]?.text === '消える返信') && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal((await settled(waiting.id, 200)).status, 'pending');
  assert.equal(await server.store.contacts.erase(HUB, lineId, Date.now()), 1);
  const gone = await server.request(`/api/line/${HUB}/sends/${waiting.id}`, {
    headers: { authorization: `Bearer ${readKey}` },
  });
  assert.equal(gone.status, 404);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal(
    line.pushes.filter((p) => p.messages[0]?.text === '消える返信').length,
    1,
    'never pushed again',
  );
  assert.equal(line.delivered.get(lineId)?.length ?? 0, 0);
});
