/**
 * LINE's own Node SDK (@line/bot-sdk) as the judge of what LINE sends: its signature check agrees
 * with chatlog's on every body, secret and signature, and a webhook built with its types (the
 * samples in fixtures/line.ts are typed with them) is stored as the contract says.
 */
// sqlite-only: LINE's SDK checks the webhook's signature and shapes, not the store; test/contract/webhook.test.ts
// runs LINE's webhook on both stores
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import { validateSignature, type webhook } from '@line/bot-sdk';
import fc from 'fast-check';
import { isValidLineSignature } from '../../src/modules/ingest/line.signature.js';
import { DESTINATION, SAMPLE_MESSAGES, signed, USER } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

let server: TestServer;
const HUB = '31337';
const SECRET = 'channel-secret-for-the-bot-sdk-test';

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { lineChannelSecret: SECRET });
});
after(() => server?.close());

test("chatlog accepts exactly the signatures LINE's SDK accepts", () => {
  const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('base64');
  const body = fc.oneof(fc.string(), fc.json(), fc.string({ unit: 'grapheme' }));
  const secret = fc.stringMatching(/^[\x21-\x7e]{8,64}$/);
  const signature = (rightSecret: string, text: string) =>
    fc.oneof(
      fc.constant(sign(rightSecret, text)),
      fc.string().map((other) => sign(rightSecret, `${text}${other}`)),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64')),
      fc.uint8Array({ minLength: 0, maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64')),
      fc.constant(sign(rightSecret, text).replace('=', '')),
      fc.constant(sign(rightSecret, text).toLowerCase()),
    );
  let valid = 0;
  fc.assert(
    fc.property(
      fc
        .tuple(body, secret)
        .chain(([text, key]) => fc.tuple(fc.constant(text), fc.constant(key), signature(key, text))),
      ([text, key, given]) => {
        const theirs = validateSignature(text, key, given);
        assert.equal(
          isValidLineSignature(key, Buffer.from(text), given),
          theirs,
          `${given} over ${JSON.stringify(text)}`,
        );
        if (theirs) valid += 1;
      },
    ),
    { numRuns: 2000 },
  );
  assert.ok(valid > 200, `only ${valid} valid signatures: the property says little`);
});

test("a webhook built with the SDK's types is stored as the contract says, and its forgery is not", async () => {
  const events: webhook.Event[] = Object.values(SAMPLE_MESSAGES).map(
    ({ message }, i): webhook.MessageEvent => ({
      type: 'message',
      mode: 'active',
      timestamp: 1_700_000_000_000 + i,
      source: { type: 'user', userId: USER },
      webhookEventId: `01HSDK${String(i).padStart(20, '0')}`,
      deliveryContext: { isRedelivery: false },
      replyToken: `reply-${i}`,
      message,
    }),
  );
  const follow: webhook.FollowEvent = {
    type: 'follow',
    mode: 'active',
    timestamp: 1_699_999_999_000,
    source: { type: 'user', userId: 'U0000000000000000000000000000fol1' },
    webhookEventId: '01HSDKFOLLOW0000000000000',
    deliveryContext: { isRedelivery: false },
    replyToken: 'reply-follow',
    follow: { isUnblocked: false },
  };
  const request: webhook.CallbackRequest = { destination: DESTINATION, events: [follow, ...events] };
  const raw = JSON.stringify(request);
  assert.ok(validateSignature(raw, SECRET, signed(SECRET, raw)['x-line-signature'] ?? ''));

  const forged = await rawRequest(
    server.url,
    'POST',
    `/webhooks/line/${HUB}`,
    signed('not-the-secret', raw),
    raw,
  );
  assert.equal(forged.status, 401);
  const res = await rawRequest(server.url, 'POST', `/webhooks/line/${HUB}`, signed(SECRET, raw), raw);
  assert.equal(res.status, 200, res.body.toString());

  const key = (await server.keys.issue(HUB, 'read', '')).key;
  const answer = JSON.parse(
    (await rawRequest(server.url, 'GET', `/api/line/${HUB}/messages?apikey=${key}`)).body.toString(),
  );
  const stored = answer.find((c: { lineId: string }) => c.lineId === USER);
  assert.deepEqual(
    stored.messages.map((m: { msg: string }) => m.msg),
    Object.values(SAMPLE_MESSAGES).map((sample) => sample.msg),
  );
  assert.ok(
    await server.store.contacts.get(HUB, 'U0000000000000000000000000000fol1'),
    'follow created the contact',
  );
});
