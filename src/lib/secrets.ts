/**
 * The server secret and what is derived from it: the HMAC key that hashes API keys for
 * lookup, and the AES-256-GCM key that encrypts stored copies of secrets.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SecretBox {
  /** Keyed hash of an API key: the value it is looked up by. */
  hashKey(key: string): Buffer;
  encrypt(plainText: string): Buffer;
  decrypt(sealed: Buffer): string;
}

const IV_LENGTH = 12;
const TAG_LENGTH = 16;

export function createSecretBox(serverSecret: string): SecretBox {
  const master = Buffer.from(serverSecret, 'utf8');
  const hashingKey = Buffer.from(hkdfSync('sha256', master, 'chatlog', 'api key lookup hash', 32));
  const encryptionKey = Buffer.from(hkdfSync('sha256', master, 'chatlog', 'stored secret encryption', 32));
  return {
    hashKey: (key) => createHmac('sha256', hashingKey).update(key, 'utf8').digest(),
    encrypt: (plainText) => {
      const iv = randomBytes(IV_LENGTH);
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
      const body = Buffer.concat([cipher.update(plainText, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decrypt: (sealed) => {
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, sealed.subarray(0, IV_LENGTH));
      decipher.setAuthTag(sealed.subarray(IV_LENGTH, IV_LENGTH + TAG_LENGTH));
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_LENGTH + TAG_LENGTH)),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}

/**
 * CHATLOG_SECRET when set; otherwise the secret kept in `<dataDir>/secret`, created once with
 * mode 0600. Two processes starting together agree: the file is created exclusively.
 */
export function loadServerSecret(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined) return configured;
  const file = path.join(dataDir, 'secret');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = fs.readFileSync(file, 'utf8').trim();
  if (secret.length < 32) throw new Error(`${file} holds a secret shorter than 32 characters`);
  return secret;
}
