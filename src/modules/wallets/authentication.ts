import { createHash, randomBytes } from 'node:crypto';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { uuidv7 } from '../../core/ids.js';
import { safeEqual } from '../../core/secrets.js';
import type { Platform } from '../platform/service.js';
import { clientKey, credentialNotFound, presentCredential, type WalletContext, type WalletCore, type WalletDeps } from './core.js';
import { invalidOidc } from './credentials.js';
import type { OidcError } from './oidc.js';
import { INVALID_OTP_REASON, OTP_DAILY_FAILURES, OTP_FAILURE_WINDOW_MS, OTP_MAX_ATTEMPTS, SANDBOX_OTP, type OtpEmail } from './otp.js';
import { INVALID_PASSKEY_REASON, SANDBOX_PASSKEY_SIGNATURE, verifyAssertion } from './passkeys.js';
import * as repo from './repository.js';
import type { CredentialRow } from './repository.js';
import type { AuthSessionView, CredentialChallengeResponse, CredentialVerify } from './schemas.js';
import { transact } from '../../db/transact.js';
import type { Executor } from '../../db/database.js';

/** Challenge re-issues per credential: at most 3 in any 90 seconds (a burst of 3, then one per 30 s). */
export const CHALLENGE_BURST = 3;
export const CHALLENGE_WINDOW_SECONDS = 90;
/** A passkey challenge must be answered within 5 minutes. */
export const PASSKEY_CHALLENGE_SECONDS = 300;
export const SANDBOX_OIDC_TOKEN = 'sandbox-valid-oidc-token';

const unauthorized = (message: string, reason: string) => new ServiceError('UNAUTHORIZED', message, { extra: { reason } });

export function createAuthenticationFlows(deps: WalletDeps, core: WalletCore) {
  const { database, clock, keys } = deps;

  /** 429 with Retry-After when the credential had CHALLENGE_BURST challenges in the window. */
  async function checkRate(trx: Parameters<typeof repo.recentChallengeTimes>[0], platform: Platform, credentialId: string): Promise<void> {
    const now = clock.now(platform);
    const windowMs = CHALLENGE_WINDOW_SECONDS * 1000;
    const recent = await repo.recentChallengeTimes(trx, credentialId, new Date(now.getTime() - windowMs));
    if (recent.length < CHALLENGE_BURST) return;
    const waitMs = recent[recent.length - CHALLENGE_BURST].getTime() + windowMs - now.getTime();
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ServiceError('RATE_LIMITED', `too many challenges for this credential; retry in ${retryAfter} seconds`, {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  /** 429 with Retry-After once the credential's codes saw OTP_DAILY_FAILURES wrong tries in a day. */
  async function refuseAfterDailyFailures(ex: Executor, credentialId: string, now: Date): Promise<void> {
    const { failures, oldest } = await repo.otpFailuresSince(ex, credentialId, new Date(now.getTime() - OTP_FAILURE_WINDOW_MS));
    if (failures < OTP_DAILY_FAILURES || !oldest) return;
    const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + OTP_FAILURE_WINDOW_MS - now.getTime()) / 1000));
    throw new ServiceError('RATE_LIMITED', `too many wrong codes for this credential today; retry in ${retryAfter} seconds`, {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  async function passkeyChallenge(ctx: WalletContext, credential: CredentialRow, clientPublicKey: string | undefined): Promise<CredentialChallengeResponse> {
    if (!clientPublicKey) throw invalidInput('clientPublicKey', 'clientPublicKey is required to challenge a PASSKEY credential', 'required');
    clientKey(clientPublicKey);
    const { platform } = ctx;
    return ctx.tx(async (trx) => {
      const locked = await repo.lockCredential(trx, platform.id, credential.id);
      if (!locked) throw new ServiceError('NOT_FOUND', 'authentication credential not found');
      await checkRate(trx, platform, credential.id);
      const now = clock.now(platform);
      const requestId = uuidv7(clock.realNowMs());
      const expiresAt = new Date(now.getTime() + PASSKEY_CHALLENGE_SECONDS * 1000);
      // The challenge commits to the client key the session will be sealed to.
      const challenge = createHash('sha256')
        .update(JSON.stringify({ requestId, credentialId: credential.id, clientPublicKey: clientPublicKey.toLowerCase(), nonce: randomBytes(16).toString('hex'), expiresAt }))
        .digest('base64url');
      await repo.insertAuthChallenge(trx, {
        id: requestId,
        platform_id: platform.id,
        credential_id: credential.id,
        kind: 'PASSKEY',
        challenge,
        client_public_key: clientPublicKey.toLowerCase(),
        otp_hash: null,
        attempts: 0,
        expires_at: expiresAt,
        consumed_at: null,
        created_at: now,
      });
      return { ...presentCredential(credential), challenge, requestId, expiresAt: expiresAt.toISOString() };
    });
  }

  /** POST /auth/credentials/{id}/challenge: a WebAuthn challenge (PASSKEY) or a fresh emailed code (EMAIL_OTP). */
  async function challenge(ctx: WalletContext, id: string, body: { clientPublicKey?: string } | undefined): Promise<CredentialChallengeResponse> {
    const credential = await core.requireCredential(ctx.platform, id);
    if (credential.type === 'PASSKEY') return passkeyChallenge(ctx, credential, body?.clientPublicKey);
    if (credential.type === 'OAUTH') return presentCredential(credential); // nothing to issue: verify with a fresh token
    deps.mailer.refuseWithoutDelivery(ctx.platform.mode);
    let email: OtpEmail | undefined;
    const view = await ctx.tx(async (trx) => {
      const locked = await repo.lockCredential(trx, ctx.platform.id, credential.id);
      if (!locked) throw new ServiceError('NOT_FOUND', 'authentication credential not found');
      await checkRate(trx, ctx.platform, credential.id);
      email = await core.issueCode(trx, ctx.platform, locked);
      // A challenge leaves the AuthMethod as it was (SPEC 4.1): its updatedAt does not move.
      return presentCredential(locked);
    });
    if (email) await deps.mailer.deliver(email, ctx.platform.mode);
    return view;
  }

  /**
   * Checks an emailed code; returns the id of the code to consume with the session. A wrong code
   * counts an attempt (committed here, so it sticks); the fifth burns the code.
   */
  async function checkOtp(platform: Platform, credential: CredentialRow, otp: string): Promise<string | null> {
    if (platform.mode === 'SANDBOX' && otp === SANDBOX_OTP) return null;
    const invalid = (why: string) => unauthorized(`the code is not valid: ${why}`, INVALID_OTP_REASON);
    const outcome = await transact(database.db, async (trx) => {
      const code = await repo.lockOpenCode(trx, credential.id);
      const now = clock.now(platform);
      await refuseAfterDailyFailures(trx, credential.id, now);
      if (!code) return { error: 'no code is pending (it was used, replaced or burned); ask for a new one' };
      if (code.expires_at <= now) return { error: 'it expired; ask for a new one' };
      if (/^\d{6}$/.test(otp) && safeEqual(keys.otpHash(code.id, otp), code.otp_hash!)) return { id: code.id };
      const attempts = code.attempts + 1;
      await repo.recordFailedAttempt(trx, code.id, attempts, attempts >= OTP_MAX_ATTEMPTS ? now : null);
      return { error: attempts >= OTP_MAX_ATTEMPTS ? 'too many wrong tries; the code is burned, ask for a new one' : 'wrong code' };
    });
    if ('error' in outcome) throw invalid(outcome.error!);
    return outcome.id;
  }

  async function checkOidc(platform: Platform, credential: CredentialRow, token: string): Promise<void> {
    if (platform.mode === 'SANDBOX' && token === SANDBOX_OIDC_TOKEN) return;
    const issuer = platform.embeddedWallets.oidcIssuers.find((i) => i.issuer === credential.oidc_issuer);
    if (!issuer) throw invalidOidc(`the credential's issuer ${credential.oidc_issuer} is not in embeddedWallets.oidcIssuers`);
    let identity;
    try {
      identity = await deps.oidc.verify(token, issuer, platform);
    } catch (error) {
      throw invalidOidc(`the OIDC token does not verify: ${(error as OidcError).message}`);
    }
    if (identity.subject !== credential.oidc_subject || !identity.audiences.includes(credential.oidc_audience ?? '')) {
      throw invalidOidc('the OIDC token identifies another user than this credential');
    }
  }

  /** The pending passkey challenge named by Request-Id, its assertion checked; returns the client key and new counter. */
  async function checkPasskey(platform: Platform, credential: CredentialRow, input: Extract<CredentialVerify, { type: 'PASSKEY' }>, requestId?: string) {
    if (!requestId) throw unauthorized('the Request-Id header (from /challenge) is required to verify a PASSKEY', INVALID_PASSKEY_REASON);
    const pending = await repo.findPasskeyChallenge(database.db, credential.id, requestId);
    if (!pending || pending.consumed_at || pending.expires_at <= clock.now(platform)) {
      throw unauthorized('Request-Id does not name an open challenge of this credential; call /challenge again', INVALID_PASSKEY_REASON);
    }
    if (input.clientPublicKey && input.clientPublicKey.toLowerCase() !== pending.client_public_key) {
      throw invalidInput('clientPublicKey', 'clientPublicKey differs from the key sent to /challenge', 'mismatch');
    }
    const sandboxMagic = platform.mode === 'SANDBOX' && input.assertion.signature === SANDBOX_PASSKEY_SIGNATURE;
    const counter = sandboxMagic ? null : await verifyAssertion(platform, credential, input.assertion, pending.challenge!);
    return { challengeId: pending.id, client: clientKey(pending.client_public_key!), counter };
  }

  /** POST /auth/credentials/{id}/verify: checks the proof and opens a session sealed to the client key. */
  async function verify(ctx: WalletContext, id: string, input: CredentialVerify, requestId?: string): Promise<AuthSessionView> {
    const { platform } = ctx;
    const credential = await core.requireCredential(platform, id);
    if (input.type !== credential.type) throw invalidInput('type', `this is a ${credential.type} credential`, 'mismatch');
    let client: Uint8Array;
    let consume: string | null = null;
    let counter: number | null = null;
    if (input.type === 'EMAIL_OTP') {
      client = clientKey(input.clientPublicKey);
      consume = await checkOtp(platform, credential, input.otp);
    } else if (input.type === 'OAUTH') {
      client = clientKey(input.clientPublicKey);
      await checkOidc(platform, credential, input.oidcToken);
    } else {
      ({ client, counter, challengeId: consume } = await checkPasskey(platform, credential, input, requestId));
    }
    const session = await core.newSession(platform, credential, client);
    return ctx.tx(async (trx) => {
      // Locked first: a revocation either committed before (404 here) or waits for this commit
      // and then revokes the new session with the credential's others.
      if (!(await repo.lockCredential(trx, platform.id, credential.id))) throw credentialNotFound();
      const now = clock.now(platform);
      if (consume && !(await repo.consumeAuthChallenge(trx, consume, now))) {
        const reason = input.type === 'EMAIL_OTP' ? INVALID_OTP_REASON : INVALID_PASSKEY_REASON;
        throw unauthorized('this proof has already been used', reason);
      }
      if (counter !== null && !(await repo.advancePasskeyCounter(trx, credential.id, credential.passkey_counter ?? 0, counter, now))) {
        throw unauthorized('the passkey counter moved meanwhile: the assertion looks replayed', INVALID_PASSKEY_REASON);
      }
      await repo.insertSession(trx, session.row);
      return session.view;
    });
  }

  return { challenge, verify };
}
