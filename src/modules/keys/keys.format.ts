/**
 * The API key format: `chl_` + 22 base62 characters of randomness (131 bits) + 6 base62
 * characters of CRC32 over the rest. The prefix lets secret scanners recognise a key; the
 * checksum rejects a mistyped key before any store lookup.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'chl_';
const RANDOM_LENGTH = 22;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
/** How much of a key is kept for display: the prefix and four characters. */
export const KEY_START_LENGTH = KEY_PREFIX.length + 4;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

/** Uniform base62 characters by rejection sampling (bytes >= 248 are dropped). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = KEY_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** True when the text has the shape and checksum of a key chatlog could have issued. */
export function isWellFormedApiKey(text: string): boolean {
  if (text.length !== KEY_LENGTH || !KEY_PATTERN.test(text)) return false;
  const body = text.slice(0, KEY_LENGTH - CHECKSUM_LENGTH);
  return checksum(body) === text.slice(KEY_LENGTH - CHECKSUM_LENGTH);
}

export function keyStart(key: string): string {
  return key.slice(0, KEY_START_LENGTH);
}

/**
 * A key as people are shown it (the account screen, `chatlog key list`): its first characters, then
 * dots (not one per hidden character).
 */
export function maskedKey(start: string): string {
  return `${start}${'•'.repeat(MASK_DOTS)}`;
}

const MASK_DOTS = 12;

export function newKeyId(): string {
  return `key_${randomBase62(12)}`;
}
