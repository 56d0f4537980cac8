/**
 * HubSpot's request signature v3 (CONTRACT §13): base64 HMAC-SHA256, under the app's client secret,
 * of method + URI + body + timestamp; a timestamp more than 5 minutes old (or ahead) is refused.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const MAX_AGE_MS = 5 * 60_000;

/** The characters HubSpot decodes in the URI before it signs (its documentation's list). */
const DECODED: Record<string, string> = {
  '%3A': ':',
  '%2F': '/',
  '%3F': '?',
  '%40': '@',
  '%21': '!',
  '%24': '$',
  '%27': "'",
  '%28': '(',
  '%29': ')',
  '%2A': '*',
  '%2C': ',',
  '%3B': ';',
};

export function signedUri(uri: string): string {
  return uri.replace(
    /%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi,
    (code) => DECODED[code.toUpperCase()] ?? code,
  );
}

/** Why the request is not HubSpot's, or undefined when it is. */
export function hubspotSignatureProblem(
  secret: string,
  request: {
    method: string;
    uri: string;
    body: Buffer;
    signature: string | undefined;
    timestamp: string | undefined;
  },
  now: number,
): string | undefined {
  if (!request.signature) return 'no X-HubSpot-Signature-v3 header';
  if (!request.timestamp || !/^\d{1,16}$/.test(request.timestamp))
    return 'no X-HubSpot-Request-Timestamp (milliseconds)';
  if (Math.abs(now - Number(request.timestamp)) > MAX_AGE_MS)
    return 'the request timestamp is more than 5 minutes away';
  const expected = createHmac('sha256', secret)
    .update(`${request.method}${signedUri(request.uri)}`)
    .update(request.body)
    .update(request.timestamp)
    .digest();
  const given = Buffer.from(request.signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? undefined
    : 'the signature does not match';
}
