import { createHash } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { uuidv7, uuidv7Floor } from '../../core/ids.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import { deleteSelected } from '../../db/prune.js';
import { verifyDerSignature } from './crypto/keys.js';
import * as repo from './repository.js';
import type { AuthMethodType } from './schemas.js';
import { parseSignatureHeader } from './signature.js';

declare module '../../db/schema.js' {
  interface DB {
    signed_retry_challenges: {
      request_id: string;
      platform_id: string;
      account_id: string;
      operation: string;
      body_hash: string | null;
      payload: string;
      exclude_credential_id: string | null;
      expires_at: Date;
      consumed_at: Date | null;
      created_at: Date;
    };
  }
}

/** Default window of a signed retry (SPEC §8: typically 5 minutes). */
export const CHALLENGE_LIFETIME_SECONDS = 300;
/** The `reason` of a wrong `Service-Wallet-Signature`, as the interface spells it (SPEC §5). */
export const INVALID_SIGNATURE_REASON = 'Invalid Grid-Wallet-Signature';

/** What a protected operation asks the engine to authorize. */
export interface SignedRetrySpec {
  platform: PlatformRef;
  /** The embedded wallet account whose session must sign. */
  accountId: string;
  /** What is authorized, e.g. `REVOKE_CREDENTIAL`; a challenge authorizes only the action (and target) it was issued for. */
  action: string;
  /** The object acted on, e.g. the credential id; part of the payload and of the match. */
  target?: string;
  /** The request body: the retry must carry an equal one (compared as canonical JSON). Leave out when there is none. */
  body?: unknown;
  /** Credential type: echoed in the 202 (`type`) and in the payload. */
  type?: AuthMethodType;
  /** Extra fields bound into the default payload (e.g. an export's `clientPublicKey`). */
  bind?: Record<string, string>;
  /** A payloadToSign of the caller's own (e.g. a quote's); default: Corridor's JSON document. */
  payload?: (challenge: { requestId: string; expiresAt: string }) => string;
  /** Sessions opened by this credential may not sign (revoking a credential needs another one). */
  excludeCredentialId?: string;
  lifetimeSeconds?: number;
}

/** The two headers of a signed retry, as received (either may be missing). */
export interface SignedRetryHeaders {
  signature?: string;
  requestId?: string;
}

export interface IssuedChallenge {
  type?: AuthMethodType;
  payloadToSign: string;
  requestId: string;
  expiresAt: string;
}

export interface VerifiedSignature {
  requestId: string;
  /** The session whose key signed; null for the sandbox's magic signature. */
  sessionId: string | null;
  credentialId: string | null;
}

export type SignedRetryOutcome = { kind: 'challenge'; challenge: IssuedChallenge } | { kind: 'verified'; signature: VerifiedSignature };

/** Canonical JSON: keys sorted at every level, so key order and whitespace do not matter, values do. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function bodyHash(body: unknown): string | null {
  return body === undefined ? null : createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function operationOf(spec: Pick<SignedRetrySpec, 'action' | 'target'>): string {
  return spec.target ? `${spec.action} ${spec.target}` : spec.action;
}

function unauthorized(message: string, reason?: string): ServiceError {
  return new ServiceError('UNAUTHORIZED', message, reason ? { extra: { reason } } : {});
}

const alreadyUsed = () => unauthorized('this requestId has already been used; start again without signature headers');

/**
 * The signed-retry engine (SPEC §3.1) shared by every protected operation: issues 202 challenges,
 * checks signed retries against the exact payload bytes and the session keys of the account, and
 * consumes request ids once.
 */
export function createSignedRetryEngine(deps: { database: Database; clock: Clock }) {
  const { database, clock } = deps;

  /** Persists a challenge and returns what the 202 carries. Pass `ex` to issue inside a transaction (e.g. with a quote). */
  async function issue(ex: Executor, spec: SignedRetrySpec): Promise<IssuedChallenge> {
    const now = clock.now(spec.platform);
    const requestId = uuidv7(clock.realNowMs());
    const expiresAt = new Date(now.getTime() + (spec.lifetimeSeconds ?? CHALLENGE_LIFETIME_SECONDS) * 1000).toISOString();
    const hash = bodyHash(spec.body);
    const payloadToSign = spec.payload
      ? spec.payload({ requestId, expiresAt })
      : JSON.stringify({
          requestId,
          ...(spec.type && { type: spec.type }),
          accountId: spec.accountId,
          action: spec.action,
          ...(spec.target && { target: spec.target }),
          ...spec.bind,
          ...(hash && { requestHash: hash }),
          expiresAt,
        });
    await ex
      .insertInto('signed_retry_challenges')
      .values({
        request_id: requestId,
        platform_id: spec.platform.id,
        account_id: spec.accountId,
        operation: operationOf(spec),
        body_hash: hash,
        payload: payloadToSign,
        exclude_credential_id: spec.excludeCredentialId ?? null,
        expires_at: new Date(expiresAt),
        consumed_at: null,
        created_at: now,
      })
      .execute();
    return { ...(spec.type && { type: spec.type }), payloadToSign, requestId, expiresAt };
  }

  async function findSigner(spec: SignedRetrySpec, payload: string, header: string, excluded: string | null, now: Date) {
    const parsed = parseSignatureHeader(header);
    if (parsed?.kind === 'magic') {
      if (spec.platform.mode === 'SANDBOX') return { sessionId: null, credentialId: null };
      throw unauthorized('the sandbox signature is not accepted on production platforms', INVALID_SIGNATURE_REASON);
    }
    if (!parsed) throw unauthorized('Service-Wallet-Signature is neither a base64 DER signature nor an API-key stamp', INVALID_SIGNATURE_REASON);
    const sessions = (await repo.activeSessions(database.db, spec.platform.id, spec.accountId, now)).filter(
      (s) => s.credential_id !== excluded && (parsed.kind !== 'stamp' || s.public_key === parsed.publicKey),
    );
    const message = Buffer.from(payload, 'utf8');
    const signer = sessions.find((s) => verifyDerSignature(s.public_key, message, parsed.der));
    if (!signer) {
      const whose = excluded ? 'an active session of another credential of this account' : 'an active session of this account';
      throw unauthorized(`the signature does not verify with the key of ${whose}`, INVALID_SIGNATURE_REASON);
    }
    return { sessionId: signer.id, credentialId: signer.credential_id };
  }

  /**
   * Checks a signed retry without consuming it: the request id names an unexpired, unused
   * challenge of this account and operation, the body is the one challenged, and the signature
   * verifies over the exact payload with an active session key. Call `consume` in the transaction
   * that performs the operation.
   */
  async function verify(spec: SignedRetrySpec, headers: SignedRetryHeaders): Promise<VerifiedSignature> {
    const { signature, requestId } = headers;
    if (!signature || !requestId) throw unauthorized('a signed retry needs both Service-Wallet-Signature and Request-Id');
    const now = clock.now(spec.platform);
    const challenge = await database.db
      .selectFrom('signed_retry_challenges')
      .selectAll()
      .where('request_id', '=', requestId)
      .where('platform_id', '=', spec.platform.id)
      .executeTakeFirst();
    if (!challenge || challenge.account_id !== spec.accountId || challenge.operation !== operationOf(spec)) {
      throw unauthorized('Request-Id does not match a challenge issued for this request');
    }
    if (challenge.consumed_at) throw alreadyUsed();
    if (challenge.expires_at <= now) throw unauthorized('the challenge expired; start again without signature headers');
    if (challenge.body_hash !== bodyHash(spec.body)) throw unauthorized('the request body differs from the one the challenge was issued for');
    const signer = await findSigner(spec, challenge.payload, signature, challenge.exclude_credential_id, now);
    return { requestId, ...signer };
  }

  /**
   * In the operation's transaction: 401 unless the signing session is still active (it was checked
   * before the transaction, and may have been revoked since). Locks its row until commit, so a
   * revocation waits for the operation; take the wallet lock first where the operation has one.
   */
  async function confirmSigner(trx: Trx, platform: PlatformRef, signer: Pick<VerifiedSignature, 'sessionId'>): Promise<void> {
    if (!signer.sessionId) return; // the sandbox's magic signature
    if (!(await repo.lockActiveSession(trx, platform.id, signer.sessionId, clock.now(platform)))) {
      throw unauthorized('the session that signed is no longer active (revoked or expired); verify a credential and sign again', INVALID_SIGNATURE_REASON);
    }
  }

  /** Uses the request id up and confirms its signer, inside the operation's transaction; 401 when another retry got there first. */
  async function consume(trx: Trx, platform: PlatformRef, signature: VerifiedSignature): Promise<void> {
    const now = clock.now(platform);
    const result = await trx
      .updateTable('signed_retry_challenges')
      .set({ consumed_at: now })
      .where('request_id', '=', signature.requestId)
      .where('platform_id', '=', platform.id)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw alreadyUsed();
    await confirmSigner(trx, platform, signature);
  }

  /**
   * 401 when the request's Request-Id was already used (SPEC §3.1). Operations call it before
   * their own checks, so that a replayed signed retry is told so even where the operation could
   * not run again anyway (the credential it added exists, the session it revoked is gone).
   */
  async function refuseReplay(platform: PlatformRef, headers: SignedRetryHeaders): Promise<void> {
    if (headers.requestId === undefined) return;
    const used = await database.db
      .selectFrom('signed_retry_challenges')
      .select('request_id')
      .where('request_id', '=', headers.requestId)
      .where('platform_id', '=', platform.id)
      .where('consumed_at', 'is not', null)
      .executeTakeFirst();
    if (used) throw alreadyUsed();
  }

  /**
   * The whole pattern for a request that may carry the signature headers: without them, a 202
   * challenge (when the account has an active session that may sign); with them, the verified
   * signature (consume it in the operation's transaction).
   */
  async function challengeOrVerify(spec: SignedRetrySpec, headers: SignedRetryHeaders): Promise<SignedRetryOutcome> {
    if (headers.signature !== undefined || headers.requestId !== undefined) {
      return { kind: 'verified', signature: await verify(spec, headers) };
    }
    const sessions = await repo.activeSessions(database.db, spec.platform.id, spec.accountId, clock.now(spec.platform));
    if (!sessions.some((s) => s.credential_id !== spec.excludeCredentialId)) {
      const which = spec.excludeCredentialId ? 'of another credential ' : '';
      throw unauthorized(`this operation must be signed, and the account has no active session ${which}to sign it: verify a credential first`);
    }
    return { kind: 'challenge', challenge: await issue(database.db, spec) };
  }

  /**
   * Checks a signature over a payload the caller issued itself (a quote's payloadToSign): it must
   * verify with the key of an active session of the account (or be the sandbox's magic value).
   * Single use is the caller's business (a quote executes once); call `confirmSigner` with the
   * result in the transaction that performs the operation.
   */
  async function verifyPayload(spec: Pick<SignedRetrySpec, 'platform' | 'accountId'>, payload: string, header: string | undefined) {
    if (!header) throw unauthorized('this operation must be signed: send Service-Wallet-Signature over the payloadToSign', INVALID_SIGNATURE_REASON);
    const full: SignedRetrySpec = { ...spec, action: 'PAYLOAD' };
    return findSigner(full, payload, header, null, clock.now(spec.platform));
  }

  return { issue, verify, consume, confirmSigner, refuseReplay, challengeOrVerify, verifyPayload };
}

export type SignedRetryEngine = ReturnType<typeof createSignedRetryEngine>;

/**
 * Deletes signed-retry challenges issued before `before` (real time: the request id is a uuidv7 of
 * it), in batches. Keep them past their lifetime (CHALLENGE_RETENTION_MS): then a late retry is
 * told that its challenge expired or was used, not that it never existed.
 */
export async function pruneSignedRetryChallenges(ex: Executor, before: Date, batch?: number): Promise<number> {
  const upTo = uuidv7Floor(before.getTime());
  const pick = () => ex.selectFrom('signed_retry_challenges').select('request_id').where('request_id', '<', upTo).orderBy('request_id');
  return deleteSelected(ex, 'signed_retry_challenges', 'request_id', pick, batch);
}
