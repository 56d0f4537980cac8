/** The account screen's tables: accounts, the hubs each may see, and signed-in sessions. */
import type { AccountRecord, AccountsPort, SessionRecord, SessionsPort } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

const ACCOUNT_COLUMNS = 'id, email, password_hash AS "passwordHash", created_at AS "createdAt"';

/** Creates the account, or sets a new password on the existing one. */
export async function upsertAccount(
  tx: Transaction,
  email: string,
  passwordHash: string,
  now: number,
): Promise<{ account: AccountRecord; created: boolean }> {
  const inserted = await tx.get<AccountRecord>(
    `INSERT INTO accounts (email, password_hash, created_at) VALUES (?, ?, ?)
     ON CONFLICT (email) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
    [email, passwordHash, now],
  );
  if (inserted) return { account: inserted, created: true };
  const account = await tx.get<AccountRecord>(
    `UPDATE accounts SET password_hash = ? WHERE email = ? RETURNING ${ACCOUNT_COLUMNS}`,
    [passwordHash, email],
  );
  if (!account) throw new Error('the account vanished while its password was set');
  return { account, created: false };
}

export function findAccountByEmail(sql: Sql, email: string): Promise<AccountRecord | undefined> {
  return sql.get<AccountRecord>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = ?`, [email]);
}

export function findAccountById(sql: Sql, id: number): Promise<AccountRecord | undefined> {
  return sql.get<AccountRecord>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`, [id]);
}

export async function grantHub(tx: Transaction, accountId: number, hubId: string): Promise<void> {
  await tx.run('INSERT INTO account_hubs (account_id, hub_id) VALUES (?, ?) ON CONFLICT DO NOTHING', [
    accountId,
    hubId,
  ]);
}

/** The hubs the account may see, in id order (shorter ids first: they are numbers). */
export async function hubsOfAccount(sql: Sql, accountId: number): Promise<string[]> {
  const rows = await sql.all<{ hub_id: string }>(
    'SELECT hub_id FROM account_hubs WHERE account_id = ? ORDER BY length(hub_id), hub_id',
    [accountId],
  );
  return rows.map((row) => row.hub_id);
}

/** Stores a new session and forgets the expired ones. */
export async function createSession(tx: Transaction, session: SessionRecord, now: number): Promise<void> {
  await tx.run('DELETE FROM sessions WHERE expires_at <= ?', [now]);
  await tx.run('INSERT INTO sessions (id_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)', [
    session.idHash,
    session.accountId,
    session.createdAt,
    session.expiresAt,
  ]);
}

export function findSession(sql: Sql, idHash: Buffer, now: number): Promise<SessionRecord | undefined> {
  return sql.get<SessionRecord>(
    `SELECT id_hash AS "idHash", account_id AS "accountId", created_at AS "createdAt", expires_at AS "expiresAt"
     FROM sessions WHERE id_hash = ? AND expires_at > ?`,
    [idHash, now],
  );
}

export async function deleteSession(tx: Transaction, idHash: Buffer): Promise<void> {
  await tx.run('DELETE FROM sessions WHERE id_hash = ?', [idHash]);
}

/** The accounts port (store.ts): logins to the account screen. */
export function accountsPort(engine: Engine): AccountsPort {
  return engine.port(
    'accounts',
    {
      upsert: (email, passwordHash, now) => engine.write((tx) => upsertAccount(tx, email, passwordHash, now)),
      findByEmail: (email) => findAccountByEmail(engine.reads, email),
      findById: (id) => findAccountById(engine.reads, id),
      grantHub: (accountId, hubId) => engine.write((tx) => grantHub(tx, accountId, hubId)),
      hubsOf: (accountId) => hubsOfAccount(engine.reads, accountId),
    },
    ['upsert', 'grantHub'],
  );
}

/** The sessions port (store.ts): the account screen's signed-in sessions. */
export function sessionsPort(engine: Engine): SessionsPort {
  return engine.port(
    'sessions',
    {
      create: (session, now) => engine.write((tx) => createSession(tx, session, now)),
      find: (idHash, now) => findSession(engine.reads, idHash, now),
      delete: (idHash) => engine.write((tx) => deleteSession(tx, idHash)),
    },
    ['create', 'delete'],
  );
}
