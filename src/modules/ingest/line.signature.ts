/**
 * X-Line-Signature, the proof that a webhook comes from LINE: base64 HMAC-SHA256 of the raw body
 * under the hub's channel secret. Checked before the body is parsed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 */
const SIGNATURE_BYTES = 32;

/** Why a webhook was refused: each answers the same 401, but the operator's log and metrics tell them apart. */
export type WebhookRefusal =
  | 'invalid_hub_id'
  | 'unknown_hub'
  | 'no_channel_secret'
  | 'missing_signature'
  | 'malformed_signature'
  | 'wrong_signature';

/**
 * X-Line-Signature: base64 HMAC-SHA256 of the raw body under the channel secret, compared in constant
 * time. Undefined when it verifies; otherwise what is wrong with it. The header is decoded as LINE's
 * own SDK decodes it (Node's lenient base64: padding optional), so chatlog accepts exactly the
 * signatures @line/bot-sdk's validateSignature accepts (test/tools/line-bot-sdk.test.ts).
 */
export function lineSignatureProblem(
  channelSecret: string,
  rawBody: Buffer,
  header: string | undefined,
): WebhookRefusal | undefined {
  if (header === undefined || header === '') return 'missing_signature';
  const given = Buffer.from(header, 'base64');
  if (given.length !== SIGNATURE_BYTES) return 'malformed_signature';
  const expected = createHmac('sha256', channelSecret).update(rawBody).digest();
  return timingSafeEqual(given, expected) ? undefined : 'wrong_signature';
}

export function isValidLineSignature(
  channelSecret: string,
  rawBody: Buffer,
  header: string | undefined,
): boolean {
  return lineSignatureProblem(channelSecret, rawBody, header) === undefined;
}

export function lineSignature(channelSecret: string, rawBody: Buffer | string): string {
  return createHmac('sha256', channelSecret).update(rawBody).digest('base64');
}
