/**
 * CONTRACT §13, HubSpot privacy deletion: POST /webhooks/hubspot signed with signature v3 by
 * HubSpot's own library (@hubspot/api-client's Signature), so the check is HubSpot's, not ours.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Signature } from '@hubspot/api-client';
import { startTestServer, type TestServer } from '../helpers.js';

const CLIENT_SECRET = 'hubspot-app-client-secret-0123456789';
const HUB = '6662290';
let server: TestServer;
let url: string;

before(async () => {
  server = await startTestServer({ hubspotClientSecret: CLIENT_SECRET });
  url = `${server.url}/webhooks/hubspot`;
  await server.hubs.add(HUB, {});
  const now = Date.now();
  const ingest = (lineId: string, n: number) =>
    server.store.messages.ingest(
      HUB,
      [
        {
          kind: 'message',
          lineId,
          sender: null,
          msg: `message ${lineId} ${n}`,
          contentType: 'text',
          createdAt: now - n,
          sourceId: `ingest:hubspot-${lineId}-${n}`,
          sourceKind: 'user',
          sourceChatId: null,
        },
      ],
      now,
    );
  for (const [lineId, vid] of [
    ['Ualone00000000000000000000000001', '101'],
    ['Utwin100000000000000000000000002', '202'],
    ['Utwin200000000000000000000000003', '202'],
    ['Ukept000000000000000000000000004', '303'],
  ] as const) {
    await ingest(lineId, 1);
    await ingest(lineId, 2);
    await server.store.contacts.upsert(HUB, lineId, { vid }, now);
  }
});
after(async () => {
  await server.close();
});

/** A request as HubSpot sends it, signed by HubSpot's library. */
function send(events: unknown, options: { timestamp?: number; secret?: string; signature?: string } = {}) {
  const body = JSON.stringify(events);
  const timestamp = options.timestamp ?? Date.now();
  const signature =
    options.signature ??
    Signature.getSignature('POST', 'v3', {
      signature: '',
      clientSecret: options.secret ?? CLIENT_SECRET,
      requestBody: body,
      url,
      timestamp,
    });
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hubspot-signature-v3': signature,
      'x-hubspot-request-timestamp': String(timestamp),
    },
    body,
  });
}

const deletion = (objectId: number, portalId = Number(HUB)) => ({
  eventId: objectId,
  subscriptionId: 1,
  portalId,
  appId: 9,
  occurredAt: Date.now(),
  subscriptionType: 'contact.privacyDeletion',
  attemptNumber: 0,
  objectId,
  changeSource: 'GDPR',
});

const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

test("HubSpot's own signature is accepted: the contact linked to the vid is erased", async () => {
  const res = await send([deletion(101)]);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { erased: { contacts: 1, messages: 2 } });
  assert.equal(await server.store.contacts.get(HUB, 'Ualone00000000000000000000000001'), undefined);
  assert.ok(await server.store.contacts.get(HUB, 'Ukept000000000000000000000000004'));
});

test('a vid linked to two contacts erases both; an unlinked vid, another portal and other events erase nothing', async () => {
  const res = await send([
    deletion(202),
    deletion(999),
    deletion(303, 4242),
    { ...deletion(303), subscriptionType: 'contact.propertyChange' },
  ]);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { erased: { contacts: 2, messages: 4 } });
  assert.equal(await server.store.contacts.get(HUB, 'Utwin100000000000000000000000002'), undefined);
  assert.equal(await server.store.contacts.get(HUB, 'Utwin200000000000000000000000003'), undefined);
  assert.ok(await server.store.contacts.get(HUB, 'Ukept000000000000000000000000004'));
});

test('a wrong secret, a forged signature, no signature and an old timestamp are 401 invalid_signature; nothing is erased', async () => {
  assert.throws(
    () =>
      Signature.isValid({
        signatureVersion: 'v3',
        signature: 'x',
        clientSecret: CLIENT_SECRET,
        requestBody: '[]',
        url,
        timestamp: Date.now() - 6 * 60_000,
      }),
    /Timestamp is invalid/,
    "HubSpot's library refuses a 6-minute-old timestamp too",
  );
  for (const res of [
    await send([deletion(303)], { secret: 'another-apps-client-secret' }),
    await send([deletion(303)], { signature: Buffer.alloc(32).toString('base64') }),
    await send([deletion(303)], { signature: '' }),
    await send([deletion(303)], { timestamp: Date.now() - 6 * 60_000 }),
  ]) {
    assert.equal(res.status, 401);
    assert.equal(await code(res), 'invalid_signature');
  }
  assert.ok(await server.store.contacts.get(HUB, 'Ukept000000000000000000000000004'));
});

test('a signed body that is not a list of events is 400 invalid_body', async () => {
  const res = await send({ not: 'a list' });
  assert.equal(res.status, 400);
  assert.equal(await code(res), 'invalid_body');
});
