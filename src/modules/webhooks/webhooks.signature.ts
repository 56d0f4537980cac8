/**
 * Signing outgoing webhooks as the Standard Webhooks specification says (standardwebhooks.com,
 * CONTRACT §10): the secret is `whsec_` + base64 of random bytes; each attempt carries
 * `webhook-id`, `webhook-timestamp` (unix seconds of the attempt) and `webhook-signature`,
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. Receivers check it
 * with the `standardwebhooks` library (test/modules/webhooks/webhooks.signature.test.ts does).
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** 32 bytes: above the specification's minimum of 24, the size of the HMAC-SHA256 key block's half. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The secret's key bytes; undefined for a string that is not a secret of this form. */
function secretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= 24 ? key : undefined;
}

export function isWebhookSecret(secret: string): boolean {
  return secretKey(secret) !== undefined;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The headers of one delivery attempt of `body` (the exact bytes sent). */
export function signDelivery(secret: string, id: string, at: Date, body: string): SignedHeaders {
  const key = secretKey(secret);
  if (!key) throw new Error('not a webhook secret');
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
