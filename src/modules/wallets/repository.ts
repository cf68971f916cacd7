import type { Executor, Trx } from '../../db/database.js';
import { sql } from 'kysely';
import { uuidv7Floor } from '../../core/ids.js';
import { literalLimit } from '../../db/database.js';
import { deleteSelected } from '../../db/prune.js';
import type { AuthMethodType } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    wallet_secrets: { account_id: string; platform_id: string; encrypted_mnemonic: string; created_at: Date };
    wallet_credentials: CredentialRow;
    wallet_used_registration_challenges: { platform_id: string; challenge_hash: string; created_at: Date };
    wallet_sessions: SessionRow;
    wallet_auth_challenges: AuthChallengeRow;
  }
}

export interface CredentialRow {
  id: string;
  platform_id: string;
  account_id: string;
  type: AuthMethodType;
  nickname: string;
  email: string | null;
  oidc_issuer: string | null;
  oidc_audience: string | null;
  oidc_subject: string | null;
  passkey_credential_id: string | null;
  passkey_public_key: string | null;
  passkey_counter: number | null;
  passkey_transports: string[] | null;
  passkey_origin: string | null;
  passkey_rp_id: string | null;
  revoked_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SessionRow {
  id: string;
  platform_id: string;
  account_id: string;
  credential_id: string;
  public_key: string;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

export interface AuthChallengeRow {
  id: string;
  platform_id: string;
  credential_id: string;
  kind: 'PASSKEY' | 'EMAIL_OTP';
  challenge: string | null;
  client_public_key: string | null;
  otp_hash: string | null;
  attempts: number;
  expires_at: Date;
  consumed_at: Date | null;
  created_at: Date;
}

export const UNIQUE_CREDENTIAL_TYPE = 'wallet_credentials_one_per_type';
export const UNIQUE_REGISTRATION_CHALLENGE = 'wallet_used_registration_challenges_pkey';

// ── wallet secrets ───────────────────────────────────────────────────────────────────────────────

/** Locks the wallet's row, creating it first if missing: serializes credential changes on one account. */
export async function lockWallet(trx: Trx, platformId: string, accountId: string, newSecret: () => string, now: Date): Promise<string> {
  const lock = () =>
    trx.selectFrom('wallet_secrets').select('encrypted_mnemonic').where('account_id', '=', accountId).forUpdate().executeTakeFirst();
  const existing = await lock();
  if (existing) return existing.encrypted_mnemonic;
  await trx
    .insertInto('wallet_secrets')
    .values({ account_id: accountId, platform_id: platformId, encrypted_mnemonic: newSecret(), created_at: now })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
  return (await lock())!.encrypted_mnemonic;
}

// ── credentials ──────────────────────────────────────────────────────────────────────────────────

export async function insertCredential(trx: Trx, row: CredentialRow): Promise<void> {
  await trx.insertInto('wallet_credentials').values(row).execute();
}

export async function findCredential(ex: Executor, platformId: string, id: string): Promise<CredentialRow | undefined> {
  return ex
    .selectFrom('wallet_credentials')
    .selectAll()
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function listCredentials(ex: Executor, platformId: string, accountId: string): Promise<CredentialRow[]> {
  return ex
    .selectFrom('wallet_credentials')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function revokeCredential(trx: Trx, id: string, now: Date): Promise<void> {
  await trx.updateTable('wallet_credentials').set({ revoked_at: now, updated_at: now }).where('id', '=', id).execute();
  await trx.updateTable('wallet_sessions').set({ revoked_at: now }).where('credential_id', '=', id).where('revoked_at', 'is', null).execute();
  await trx.updateTable('wallet_auth_challenges').set({ consumed_at: now }).where('credential_id', '=', id).where('consumed_at', 'is', null).execute();
}

export async function lockCredential(trx: Trx, platformId: string, id: string): Promise<CredentialRow | undefined> {
  return trx
    .selectFrom('wallet_credentials')
    .selectAll()
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Moves the passkey counter forward; false when another assertion got there first (a replay). */
export async function advancePasskeyCounter(trx: Trx, id: string, from: number, to: number, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('wallet_credentials')
    .set({ passkey_counter: to, updated_at: now })
    .where('id', '=', id)
    .where('passkey_counter', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function rememberRegistrationChallenge(trx: Trx, platformId: string, challengeHash: string, now: Date): Promise<void> {
  await trx.insertInto('wallet_used_registration_challenges').values({ platform_id: platformId, challenge_hash: challengeHash, created_at: now }).execute();
}

// ── sessions ─────────────────────────────────────────────────────────────────────────────────────

export async function insertSession(trx: Trx, row: SessionRow): Promise<void> {
  await trx.insertInto('wallet_sessions').values(row).execute();
}

export interface ActiveSession extends SessionRow {
  type: AuthMethodType;
  nickname: string;
  credential_created_at: Date;
}

/** Active sessions (neither revoked nor expired at `now`, nor their credential revoked) of a platform, with their credential. */
function activeSessionsQuery(ex: Executor, platformId: string, now: Date) {
  return ex
    .selectFrom('wallet_sessions as s')
    .innerJoin('wallet_credentials as c', 'c.id', 's.credential_id')
    .selectAll('s')
    .select(['c.type', 'c.nickname', 'c.created_at as credential_created_at'])
    .where('s.platform_id', '=', platformId)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('c.revoked_at', 'is', null);
}

/** Sessions of the account that are active at `now`, oldest first. */
export async function activeSessions(ex: Executor, platformId: string, accountId: string, now: Date): Promise<ActiveSession[]> {
  return activeSessionsQuery(ex, platformId, now).where('s.account_id', '=', accountId).orderBy('s.created_at').orderBy('s.id').execute();
}

export async function findActiveSession(ex: Executor, platformId: string, id: string, now: Date): Promise<ActiveSession | undefined> {
  return activeSessionsQuery(ex, platformId, now).where('s.id', '=', id).executeTakeFirst();
}

/** The session if it is active at `now`, locked (FOR SHARE) so that it stays so until commit. */
export async function lockActiveSession(trx: Trx, platformId: string, id: string, now: Date): Promise<SessionRow | undefined> {
  return activeSessionsQuery(trx, platformId, now).where('s.id', '=', id).forShare('s').executeTakeFirst();
}

/** Revokes a session still active at `now`; false when it no longer is. */
export async function revokeSession(trx: Trx, id: string, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('wallet_sessions')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ── authentication challenges (passkey challenges, emailed codes) ──────────────────────────────────

export async function insertAuthChallenge(trx: Trx, row: AuthChallengeRow): Promise<void> {
  await trx.insertInto('wallet_auth_challenges').values(row).execute();
}

/** Challenges of the credential issued since `since` (for the re-issue rate limit), oldest first. */
export async function recentChallengeTimes(trx: Trx, credentialId: string, since: Date): Promise<Date[]> {
  const rows = await trx
    .selectFrom('wallet_auth_challenges')
    .select('created_at')
    .where('credential_id', '=', credentialId)
    .where('created_at', '>', since)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => r.created_at);
}

/** Retires the credential's open codes: only the newest one sent can be used. */
export async function retireOpenCodes(trx: Trx, credentialId: string, now: Date): Promise<void> {
  await trx
    .updateTable('wallet_auth_challenges')
    .set({ consumed_at: now })
    .where('credential_id', '=', credentialId)
    .where('kind', '=', 'EMAIL_OTP')
    .where('consumed_at', 'is', null)
    .execute();
}

export async function lockOpenCode(trx: Trx, credentialId: string): Promise<AuthChallengeRow | undefined> {
  return trx
    .selectFrom('wallet_auth_challenges')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .where('kind', '=', 'EMAIL_OTP')
    .where('consumed_at', 'is', null)
    .orderBy('created_at', 'desc')
    .limit(literalLimit(1))
    .forUpdate()
    .executeTakeFirst();
}

export async function findPasskeyChallenge(ex: Executor, credentialId: string, id: string): Promise<AuthChallengeRow | undefined> {
  return ex
    .selectFrom('wallet_auth_challenges')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .where('id', '=', id)
    .where('kind', '=', 'PASSKEY')
    .executeTakeFirst();
}

/** Wrong codes entered for the credential's codes issued since `since`, and when the oldest of those codes was issued. */
export async function otpFailuresSince(ex: Executor, credentialId: string, since: Date): Promise<{ failures: number; oldest: Date | null }> {
  const row = await ex
    .selectFrom('wallet_auth_challenges')
    .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('attempts'), eb.lit(0)).as('failures'), eb.fn.min<Date>('created_at').as('oldest')])
    .where('credential_id', '=', credentialId)
    .where('kind', '=', 'EMAIL_OTP')
    .where('attempts', '>', 0)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return { failures: Number(row.failures), oldest: row.oldest };
}

export async function recordFailedAttempt(trx: Trx, id: string, attempts: number, burn: Date | null): Promise<void> {
  await trx.updateTable('wallet_auth_challenges').set({ attempts, ...(burn && { consumed_at: burn }) }).where('id', '=', id).execute();
}

/** Uses up an open challenge; false when it was already used. */
export async function consumeAuthChallenge(trx: Trx, id: string, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('wallet_auth_challenges')
    .set({ consumed_at: now })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ── pruning (maintenance) ──────────────────────────────────────────────────────────────────────────

/**
 * Challenges are kept a day (real time): past every one's lifetime (minutes) and the day of wrong
 * codes the daily limit counts (OTP_FAILURE_WINDOW_MS). A test clock only moves forward, so a
 * row a day old in real time is at least a day old on its platform's clock too.
 */
export const CHALLENGE_RETENTION_MS = 86_400_000;
/** Sessions are kept a day (real time) after they expired or were revoked. */
export const ENDED_SESSION_RETENTION_MS = 86_400_000;

/** Deletes, in batches, the challenges whose id is in [from, upTo). */
function deleteChallengeRange(ex: Executor, from: string, upTo: string, batch?: number): Promise<number> {
  const pick = () => ex.selectFrom('wallet_auth_challenges').select('id').where('id', '>=', from).where('id', '<', upTo).orderBy('id');
  return deleteSelected(ex, 'wallet_auth_challenges', 'id', pick, batch);
}

/**
 * Deletes passkey challenges and emailed codes issued before `before` (real time), in batches.
 * Their ids carry that time: a bare uuidv7 (passkey, the Request-Id) or `Otp:<uuidv7>`.
 */
export async function pruneAuthChallenges(ex: Executor, before: Date, batch?: number): Promise<number> {
  const floor = uuidv7Floor(before.getTime());
  const passkeys = await deleteChallengeRange(ex, '0', floor, batch);
  const codes = await deleteChallengeRange(ex, 'Otp:', `Otp:${floor}`, batch);
  return passkeys + codes;
}

/**
 * Deletes sessions that expired or were revoked before `before` (real time), in batches. The id
 * (`Session:<uuidv7>`) says when a session was opened in real time; its end is then at most that
 * plus how long it lasted on its platform's clock (which may only have run ahead meanwhile).
 */
export async function pruneSessions(ex: Executor, before: Date, batch?: number): Promise<number> {
  const upTo = `Session:${uuidv7Floor(before.getTime())}`;
  // Milliseconds of the uuidv7 after `Session:`: its first 12 hex digits.
  const openedMs = sql<number>`('x' || lpad(substr(id, 9, 8) || substr(id, 18, 4), 16, '0'))::bit(64)::bigint`;
  const lastedMs = sql<number>`extract(epoch from least(expires_at, revoked_at) - created_at) * 1000`;
  const pick = () =>
    ex
      .selectFrom('wallet_sessions')
      .select('id')
      .where('id', '>=', 'Session:')
      .where('id', '<', upTo)
      .where(sql<boolean>`${openedMs} + ${lastedMs} < ${before.getTime()}`)
      .orderBy('id');
  return deleteSelected(ex, 'wallet_sessions', 'id', pick, batch);
}
