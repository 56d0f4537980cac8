/**
 * The account screen's rules: accounts and the hubs they were given, sign-in (throttled, a wrong
 * email and a wrong password alike), sessions, CSRF tokens, and key management limited to the
 * account's own hubs. The session id lives only in the browser's cookie; the store keeps its hash.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../../lib/secrets.js';
import type { AccountRecord, KeyScope, RateLimit, Store } from '../../store/store.js';
import type { HubService } from '../hubs/hubs.usecases.js';
import type { RateLimiter } from '../keys/keys.ratelimit.js';
import { KEY_SCOPES, type KeyService, type KeySummary } from '../keys/keys.usecases.js';
import { accountErrors } from './account.errors.js';
import {
  decoyHash,
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyPassword,
} from './account.passwords.js';
import { type DayRange, exampleDays } from './account.time.js';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Failed sign-ins allowed per email, and per client address, in 15 minutes. */
export const SIGN_IN_LIMIT_PER_EMAIL: RateLimit = { requests: 5, perSeconds: 900 };
export const SIGN_IN_LIMIT_PER_ADDRESS: RateLimit = { requests: 30, perSeconds: 900 };
const MAX_EMAIL_LENGTH = 254;
const MAX_LABEL_LENGTH = 200;

/** Lower-cased and trimmed, or undefined when it cannot be an email address. */
export function normalizeEmail(text: string): string | undefined {
  const email = text.trim().toLowerCase();
  if (email.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+$/.test(email)) return undefined;
  return email;
}

export interface SignedIn {
  account: AccountRecord;
  /** The hubs this account may see, in id order. */
  hubIds: string[];
  sessionId: string;
}

export type SignInResult =
  | { ok: true; sessionId: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

export interface HubOverview {
  /** The hub's IANA time zone: the API's days and every time on the screen are in it. */
  timeZone: string;
  /** The createdAt of the hub's newest message, or undefined while it has none. */
  latestMessageAt: number | undefined;
  /** The example curl's `from` and `to`. */
  exampleDays: DayRange;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

export class AccountService {
  constructor(
    private readonly deps: {
      store: Pick<Store, 'messages' | 'accounts' | 'sessions'>;
      hubs: HubService;
      keys: KeyService;
      secrets: SecretBox;
      rateLimiter?: RateLimiter | undefined;
      clock?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /** `chatlog account add`: creates the account (or sets its password) and gives it the hubs. */
  async add(emailText: string, hubIds: readonly string[], password: string): Promise<{ created: boolean }> {
    const email = normalizeEmail(emailText);
    if (!email) throw accountErrors.invalidEmail(emailText);
    if (hubIds.length === 0) throw accountErrors.noHub();
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw accountErrors.passwordTooShort(MIN_PASSWORD_LENGTH);
    }
    if (password.length > MAX_PASSWORD_LENGTH) {
      throw accountErrors.passwordTooLong(MAX_PASSWORD_LENGTH);
    }
    for (const hubId of hubIds) await this.deps.hubs.require(hubId);
    const { account, created } = await this.deps.store.accounts.upsert(
      email,
      await hashPassword(password),
      this.now(),
    );
    for (const hubId of hubIds) await this.deps.store.accounts.grantHub(account.id, hubId);
    return { created };
  }

  async signIn(emailText: string, password: string, clientAddress: string): Promise<SignInResult> {
    const email = normalizeEmail(emailText) ?? emailText.slice(0, MAX_EMAIL_LENGTH).toLowerCase();
    // Counted by a hash: the counters' keys (in Redis, say) never hold an email address.
    const limits: Array<[string, RateLimit]> = [
      [`signin:email:${sha256(email).toString('base64url')}`, SIGN_IN_LIMIT_PER_EMAIL],
      [`signin:address:${clientAddress}`, SIGN_IN_LIMIT_PER_ADDRESS],
    ];
    const limiter = this.deps.rateLimiter;
    if (limiter) {
      for (const [id, limit] of limits) {
        const wait = await limiter.blockedFor(id, limit);
        if (wait > 0) return { ok: false, reason: 'throttled', retryAfterSeconds: wait };
      }
    }
    const account =
      password.length <= MAX_PASSWORD_LENGTH ? await this.deps.store.accounts.findByEmail(email) : undefined;
    // The same work whether or not the email is known.
    const matches = await verifyPassword(
      account?.passwordHash ?? (await decoyHash()),
      password.slice(0, MAX_PASSWORD_LENGTH),
    );
    if (!account || !matches || password.length > MAX_PASSWORD_LENGTH) {
      if (limiter) for (const [id, limit] of limits) await limiter.consume(id, limit);
      return { ok: false, reason: 'invalid' };
    }
    const sessionId = randomBytes(32).toString('base64url');
    const now = this.now();
    await this.deps.store.sessions.create(
      { idHash: sha256(sessionId), accountId: account.id, createdAt: now, expiresAt: now + SESSION_TTL_MS },
      now,
    );
    return { ok: true, sessionId };
  }

  /** The signed-in account behind a session cookie, or undefined (unknown, expired or signed out). */
  async session(sessionId: string | undefined): Promise<SignedIn | undefined> {
    if (!sessionId || sessionId.length > 100) return undefined;
    const session = await this.deps.store.sessions.find(sha256(sessionId), this.now());
    if (!session) return undefined;
    const account = await this.deps.store.accounts.findById(session.accountId);
    if (!account) return undefined;
    return { account, hubIds: await this.deps.store.accounts.hubsOf(account.id), sessionId };
  }

  async signOut(sessionId: string): Promise<void> {
    await this.deps.store.sessions.delete(sha256(sessionId));
  }

  /** The token every state change of this session must carry (derived, so nothing to store). */
  csrfToken(sessionId: string): string {
    return this.deps.secrets.hashKey(`csrf:${sessionId}`).toString('base64url');
  }

  checkCsrf(sessionId: string, presented: string | undefined): boolean {
    const expected = Buffer.from(this.csrfToken(sessionId));
    const actual = Buffer.from(presented ?? '');
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  /** A token for the sign-in form, tied to a cookie of its own (before there is a session). */
  signInToken(cookieValue: string): string {
    return this.deps.secrets.hashKey(`signin:${cookieValue}`).toString('base64url');
  }

  private requireHub(signedIn: SignedIn, hubId: string): void {
    if (!signedIn.hubIds.includes(hubId)) throw accountErrors.hubNotFound();
  }

  /** The key with this id if it belongs to one of the account's hubs. */
  async keyOf(signedIn: SignedIn, keyId: string): Promise<KeySummary | undefined> {
    for (const hubId of signedIn.hubIds) {
      const found = (await this.deps.keys.list(hubId)).find((key) => key.id === keyId);
      if (found) return found;
    }
    return undefined;
  }

  private async requireOwnKey(signedIn: SignedIn, keyId: string): Promise<KeySummary> {
    const key = await this.keyOf(signedIn, keyId);
    if (!key) throw accountErrors.keyNotFound();
    return key;
  }

  async keysOf(signedIn: SignedIn, hubId: string): Promise<KeySummary[]> {
    this.requireHub(signedIn, hubId);
    return this.deps.keys.list(hubId);
  }

  /** What the screen shows of a hub besides its keys: the zone of its days and its example's range. */
  async hubOverview(signedIn: SignedIn, hubId: string): Promise<HubOverview> {
    this.requireHub(signedIn, hubId);
    const timeZone = (await this.deps.hubs.get(hubId))?.timeZone ?? 'UTC';
    const latestMessageAt = await this.deps.store.messages.latestAt(hubId);
    return { timeZone, latestMessageAt, exampleDays: exampleDays(latestMessageAt, this.now(), timeZone) };
  }

  async issueKey(signedIn: SignedIn, hubId: string, label: string, scope: string): Promise<KeySummary> {
    this.requireHub(signedIn, hubId);
    if (!KEY_SCOPES.includes(scope as KeyScope)) throw accountErrors.unknownScope();
    const trimmed = label.trim();
    if (trimmed.length > MAX_LABEL_LENGTH) throw accountErrors.labelTooLong();
    return (await this.deps.keys.issue(hubId, scope as KeyScope, trimmed)).summary;
  }

  /** The full key, for the copy and show icons: the only answer of the screen that carries one. */
  async revealKey(signedIn: SignedIn, keyId: string): Promise<string> {
    await this.requireOwnKey(signedIn, keyId);
    const key = await this.deps.keys.reveal(keyId);
    if (!key) throw accountErrors.keyRevoked();
    return key;
  }

  async revokeKey(signedIn: SignedIn, keyId: string): Promise<KeySummary> {
    const key = await this.requireOwnKey(signedIn, keyId);
    if (key.revokedAt === null) await this.deps.keys.revoke(keyId);
    return key;
  }
}
