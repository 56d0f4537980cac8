/** CONTRACT §10: outgoing webhooks, managed with an admin key, delivered to a local receiver. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CHANGE_TYPES } from '../../src/store/store.js';
import { body, messageEvent, SAMPLE_MESSAGES, signed, USER } from '../fixtures/line.js';
import { type Receiver, startReceiver } from '../fixtures/receiver.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const SECRET = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
let server: TestServer;
let receiver: Receiver;
let hub = 1200;

async function newHub() {
  hub += 1;
  const hubId = String(hub);
  await server.hubs.add(hubId, { lineChannelSecret: SECRET });
  const admin = (await server.keys.issue(hubId, 'admin', '')).key;
  const read = (await server.keys.issue(hubId, 'read', '')).key;
  const ingest = (await server.keys.issue(hubId, 'ingest', '')).key;
  return { hubId, admin, read, ingest };
}

function api(path: string, key: string, init: RequestInit = {}) {
  const type: Record<string, string> = init.body === undefined ? {} : { 'content-type': 'application/json' };
  return server.request(path, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...type, ...init.headers },
  });
}

async function addEndpoint(hubId: string, admin: string, extra: Record<string, unknown> = {}) {
  const res = await api(`/api/line/${hubId}/webhooks`, admin, {
    method: 'POST',
    body: JSON.stringify({ url: receiver.url, ...extra }),
  });
  const added = (await res.json()) as { id: string; url: string; events: string[]; secret: string };
  assert.equal(res.status, 201, JSON.stringify(added));
  return added;
}

function lineWebhook(hubId: string, events: unknown[]) {
  const raw = body(events as never[]);
  return rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, signed(SECRET, raw), raw);
}

before(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true, webhookTimeoutMs: 2000 });
});
after(async () => {
  await server.close();
  await receiver.close();
});

test('an endpoint is told of each change, signed as Standard Webhooks says', async () => {
  const { hubId, admin, read } = await newHub();
  const added = await addEndpoint(hubId, admin);
  assert.deepEqual(Object.keys(added), ['id', 'url', 'events', 'secret']);
  assert.match(added.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(added.url, receiver.url);
  assert.deepEqual(added.events, [
    'message.created',
    'message.deleted',
    'contact.updated',
    'contact.erased',
    'retention.applied',
  ]);
  receiver.secret = added.secret;
  receiver.received.length = 0;

  const text = SAMPLE_MESSAGES.text!;
  assert.equal((await lineWebhook(hubId, [messageEvent(text.message)])).status, 200);
  // Delivered before the unsend: a message taken back before its delivery is never sent at all.
  await receiver.waitFor(1);
  await lineWebhook(hubId, [
    {
      type: 'unsend',
      timestamp: 1_462_629_480_000,
      source: { type: 'user', userId: USER },
      unsend: { messageId: text.message.id },
    },
  ]);
  const [created, deleted] = await receiver.waitFor(2);
  assert.ok(created && deleted);
  for (const delivery of [created, deleted]) assert.equal(delivery.verified, true);
  // The feed and the webhooks tell the same changes.
  const feed = (await (await api(`/api/line/${hubId}/changes`, read)).json()) as {
    changes: Array<{ seq: string }>;
  };
  assert.equal(created.payload.type, 'message.created');
  assert.equal(created.id, `${hubId}:${created.payload.data.seq}`);
  assert.equal(created.payload.timestamp, created.payload.data.at);
  assert.equal(created.payload.data.id, text.message.id);
  assert.deepEqual((created.payload.data.line as { message: unknown }).message, text.message);
  assert.equal(deleted.payload.type, 'message.deleted');
  assert.deepEqual(
    deleted.payload.data,
    feed.changes.find((c) => c.seq === deleted.payload.data.seq),
  );
  assert.ok(
    Math.abs(Number(created.timestamp) - Date.now() / 1000) < 60,
    'webhook-timestamp is the attempt time',
  );
});

test('list never shows a secret; remove stops deliveries; events filter the types sent', async () => {
  const { hubId, admin, ingest } = await newHub();
  const onlyDeleted = await addEndpoint(hubId, admin, { events: ['message.deleted'] });
  assert.deepEqual(onlyDeleted.events, ['message.deleted']);
  const listRes = await api(`/api/line/${hubId}/webhooks`, admin);
  assert.equal(listRes.status, 200);
  const listed = (await listRes.json()) as Array<Record<string, unknown>>;
  assert.deepEqual(
    listed.map((e) => e.id),
    [onlyDeleted.id],
  );
  assert.deepEqual(Object.keys(listed[0]!), ['id', 'url', 'events', 'createdAt', 'disabledAt']);
  assert.ok(!JSON.stringify(listed).includes('whsec_'));

  receiver.secret = onlyDeleted.secret;
  const before = receiver.attempts;
  const ingested = await api(`/ingest/line/${hubId}/messages`, ingest, {
    method: 'POST',
    body: JSON.stringify([{ lineId: 'U1', msg: 'not sent', id: 'n1' }]),
  });
  assert.equal(ingested.status, 200);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(receiver.attempts, before, 'message.created is not among its events');

  const removed = await api(`/api/line/${hubId}/webhooks/${onlyDeleted.id}`, admin, { method: 'DELETE' });
  assert.equal(removed.status, 204);
  assert.deepEqual(await (await api(`/api/line/${hubId}/webhooks`, admin)).json(), []);
  const again = await api(`/api/line/${hubId}/webhooks/${onlyDeleted.id}`, admin, { method: 'DELETE' });
  assert.equal(again.status, 404);
  assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'not_found');
});

test('an endpoint that answers 410 Gone is disabled', async () => {
  const { hubId, admin, ingest } = await newHub();
  const added = await addEndpoint(hubId, admin);
  receiver.secret = added.secret;
  receiver.answer = 410;
  try {
    const before = receiver.attempts;
    await api(`/ingest/line/${hubId}/messages`, ingest, {
      method: 'POST',
      body: JSON.stringify([{ lineId: 'U1', msg: 'gone', id: 'g1' }]),
    });
    for (let i = 0; i < 100 && receiver.attempts === before; i++) await new Promise((r) => setTimeout(r, 50));
    let listed: Array<{ disabledAt: string | null }> = [];
    for (let i = 0; i < 100; i++) {
      listed = (await (await api(`/api/line/${hubId}/webhooks`, admin)).json()) as typeof listed;
      if (listed[0]?.disabledAt) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(String(listed[0]?.disabledAt), /Z$/);
  } finally {
    receiver.answer = 204;
  }
});

test('a failed delivery is tried again, with the same webhook-id', async () => {
  const { hubId, admin, ingest } = await newHub();
  const added = await addEndpoint(hubId, admin);
  receiver.secret = added.secret;
  receiver.received.length = 0;
  receiver.answer = 503;
  const before = receiver.attempts;
  await api(`/ingest/line/${hubId}/messages`, ingest, {
    method: 'POST',
    body: JSON.stringify([{ lineId: 'U1', msg: 'retry me', id: 'r1' }]),
  });
  for (let i = 0; i < 100 && receiver.attempts === before; i++) await new Promise((r) => setTimeout(r, 50));
  receiver.answer = 204;
  // The first retry comes about 5 s later (±20 %).
  const [delivered] = await receiver.waitFor(1, 15_000);
  assert.equal(delivered?.payload.data.id, 'r1');
  assert.ok(receiver.attempts - before >= 2);
});

test('URL rules, scopes and credentials', async () => {
  const { hubId, admin, read } = await newHub();
  const post = (url: unknown, key = admin) =>
    api(`/api/line/${hubId}/webhooks`, key, { method: 'POST', body: JSON.stringify({ url }) });
  const code = async (res: Response) => [
    res.status,
    ((await res.json()) as { error: { code: string } }).error.code,
  ];
  assert.deepEqual(await code(await post('http://169.254.169.254/latest/meta-data')), [400, 'invalid_url']);
  assert.deepEqual(await code(await post('ftp://example.com/x')), [400, 'invalid_url']);
  assert.deepEqual(await code(await post('not a url')), [400, 'invalid_url']);
  assert.deepEqual(await code(await post(receiver.url, read)), [403, 'insufficient_scope']);
  // An unknown event type: the message names the item and every event type there is.
  const unknownEvent = await api(`/api/line/${hubId}/webhooks`, admin, {
    method: 'POST',
    body: JSON.stringify({ url: receiver.url, events: ['message.created', 'message.exploded'] }),
  });
  assert.equal(unknownEvent.status, 400);
  const { error } = (await unknownEvent.json()) as { error: { code: string; message: string } };
  assert.equal(error.code, 'invalid_body');
  assert.equal(
    error.message,
    `body.events[1]: must be one of ${CHANGE_TYPES.map((t) => `"${t}"`).join(', ')}`,
  );
  // An admin key cannot read messages (section 1: a key of another scope is invalid there).
  const messages = await server.request(`/api/line/${hubId}/messages?apikey=${admin}`);
  assert.equal(messages.status, 401);
  assert.deepEqual(
    await code(
      await server.request(`/api/line/${hubId}/webhooks?apikey=${admin}`, {
        headers: { authorization: `Bearer ${admin}` },
      }),
    ),
    [400, 'ambiguous_credentials'],
  );
  assert.equal((await server.request(`/api/line/${hubId}/webhooks?apikey=${admin}`)).status, 200);
  assert.deepEqual(await code(await api(`/api/line/${hubId}/webhooks`, admin, { method: 'PUT' })), [
    405,
    'method_not_allowed',
  ]);
});

test('without CHATLOG_WEBHOOK_ALLOW_PRIVATE, a loopback or private receiver is refused', async () => {
  const strict = await startTestServer();
  try {
    await strict.hubs.add('77', {});
    const admin = (await strict.keys.issue('77', 'admin', '')).key;
    for (const url of [receiver.url, 'https://127.0.0.1/x', 'https://10.0.0.8/x', 'https://localhost/x']) {
      const res = await strict.request('/api/line/77/webhooks', {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      assert.equal(res.status, 400, url);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_url', url);
    }
  } finally {
    await strict.close();
  }
});
