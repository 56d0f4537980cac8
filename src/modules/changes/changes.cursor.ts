/**
 * The feed's cursors (CONTRACT §9): opaque to clients, naming a hub and a seq. `c1.` then base64url
 * of `<hubId>:<seq>`; a cursor of another hub, or anything else, is not one of this hub's.
 */

const PREFIX = 'c1.';
const BODY = /^(\d{1,20}):(0|[1-9]\d{0,15})$/;

export function encodeCursor(hubId: string, seq: number): string {
  return PREFIX + Buffer.from(`${hubId}:${seq}`, 'utf8').toString('base64url');
}

/** The seq a cursor of `hubId` names; undefined when it is malformed or of another hub. */
export function decodeCursor(hubId: string, cursor: string): number | undefined {
  if (!cursor.startsWith(PREFIX) || cursor.length > 64) return undefined;
  const encoded = cursor.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const text = Buffer.from(encoded, 'base64url').toString('utf8');
  // Only the one spelling encodeCursor writes.
  if (Buffer.from(text, 'utf8').toString('base64url') !== encoded) return undefined;
  const match = BODY.exec(text);
  if (!match || match[1] !== hubId) return undefined;
  const seq = Number(match[2]);
  return Number.isSafeInteger(seq) ? seq : undefined;
}
