import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import {
  isWebhookSecret,
  newWebhookSecret,
  signDelivery,
} from '../../../src/modules/webhooks/webhooks.signature.js';

test('a new secret is whsec_ and base64 of at least 24 random bytes, each one new', () => {
  const secrets = new Set(Array.from({ length: 100 }, () => newWebhookSecret()));
  assert.equal(secrets.size, 100);
  for (const secret of secrets) {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.ok(Buffer.from(secret.slice(6), 'base64').length >= 24);
    assert.equal(isWebhookSecret(secret), true);
  }
  for (const text of [
    '',
    'whsec_',
    'whsec_c2hvcnQ=',
    `secret_${'A'.repeat(44)}`,
    `whsec_${'A'.repeat(43)}`,
  ]) {
    assert.equal(isWebhookSecret(text), false, text);
  }
});

test('every delivery verifies with the standardwebhooks library, and a changed byte does not', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.stringMatching(/^[0-9]{1,20}:[0-9]{1,12}$/), (data, id) => {
      const body = JSON.stringify({ type: 'message.created', data });
      const secret = newWebhookSecret();
      const now = new Date();
      const headers = signDelivery(secret, id, now, body);
      const receiver = new Webhook(secret);
      assert.deepEqual(receiver.verify(body, { ...headers }), JSON.parse(body));
      assert.throws(() => receiver.verify(`${body} `, { ...headers }));
      assert.throws(() => receiver.verify(body, { ...headers, 'webhook-id': `${id}0` }));
      assert.throws(() => new Webhook(newWebhookSecret()).verify(body, { ...headers }));
      assert.equal(headers['webhook-timestamp'], String(Math.floor(now.getTime() / 1000)));
    }),
    { numRuns: 300 },
  );
});
