import { createHash } from 'node:crypto';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { isIdOf, newId } from '../../core/ids.js';
import { isUniqueViolation } from '../../db/database.js';
import type { InternalAccount } from '../accounts/service.js';
import type { Platform } from '../platform/service.js';
import { alreadyExists, presentCredential, type WalletContext, type WalletCore, type WalletDeps } from './core.js';
import { decodeToken, identityOf, OidcError, WELL_KNOWN_ISSUERS, type OidcIdentity } from './oidc.js';
import type { OtpEmail } from './otp.js';
import { verifyRegistration, type RegisteredPasskey } from './passkeys.js';
import * as repo from './repository.js';
import type { CredentialRow } from './repository.js';
import type { AuthMethodView, CredentialCreate } from './schemas.js';
import type { IssuedChallenge, SignedRetryHeaders, VerifiedSignature } from './signed-retry.js';

export const INVALID_OIDC_REASON = 'Invalid OIDC token';

/** Either the created credential (201) or the challenge to sign first (202). */
export type CreateOutcome = { status: 201; body: AuthMethodView } | { status: 202; body: IssuedChallenge };

type Proof =
  | { type: 'EMAIL_OTP'; email: string }
  | { type: 'OAUTH'; identity: OidcIdentity }
  | { type: 'PASSKEY'; passkey: RegisteredPasskey; nickname: string; challengeHash: string };

export function invalidOidc(message: string): ServiceError {
  return new ServiceError('UNAUTHORIZED', message, { extra: { reason: INVALID_OIDC_REASON } });
}

export function createCredentialFlows(deps: WalletDeps, core: WalletCore) {
  const { database, clock, engine } = deps;

  /**
   * An OIDC token on create: production platforms verify it fully against an allow-listed issuer.
   * Sandbox platforms need a structurally valid JWT whose `iss` they recognize: tokens of a
   * configured issuer are verified like production, tokens of a well-known one only decoded.
   */
  async function oidcIdentity(platform: Platform, token: string): Promise<OidcIdentity> {
    const claims = decodeToken(token);
    if (!claims) throw invalidInput('oidcToken', 'oidcToken is not a JWT (header.payload.signature)', 'format');
    const issuer = platform.embeddedWallets.oidcIssuers.find((i) => i.issuer === claims.iss);
    if (issuer) {
      try {
        return await deps.oidc.verify(token, issuer, platform);
      } catch (error) {
        throw invalidOidc(`the OIDC token does not verify: ${(error as OidcError).message}`);
      }
    }
    if (platform.mode === 'SANDBOX' && typeof claims.iss === 'string' && WELL_KNOWN_ISSUERS.includes(claims.iss)) {
      try {
        return identityOf(claims);
      } catch (error) {
        throw invalidOidc((error as Error).message);
      }
    }
    throw invalidInput('oidcToken', `the token's issuer ${JSON.stringify(claims.iss ?? null)} is not one of the platform's embeddedWallets.oidcIssuers`, 'issuer');
  }

  async function emailFor(platform: Platform, account: InternalAccount, email: string | undefined): Promise<string> {
    if (email) return email.toLowerCase();
    const customer = account.customerId ? await deps.customers.requireCustomer(database.db, platform.id, account.customerId) : undefined;
    if (!customer?.email) throw invalidInput('email', 'email is required: the account\'s customer has no email address', 'required');
    return customer.email.toLowerCase();
  }

  /** Checks the new credential's proof (external calls happen here, outside any transaction). */
  async function prove(platform: Platform, account: InternalAccount, input: CredentialCreate): Promise<Proof> {
    switch (input.type) {
      case 'EMAIL_OTP':
        return { type: 'EMAIL_OTP', email: await emailFor(platform, account, input.email) };
      case 'OAUTH':
        return { type: 'OAUTH', identity: await oidcIdentity(platform, input.oidcToken) };
      case 'PASSKEY': {
        const passkey = await verifyRegistration(platform, input);
        const challengeHash = createHash('sha256').update(input.challenge).digest('hex');
        return { type: 'PASSKEY', passkey, nickname: input.nickname, challengeHash };
      }
    }
  }

  function newRow(platform: Platform, account: InternalAccount, proof: Proof): CredentialRow {
    const now = clock.now(platform);
    const base: CredentialRow = {
      id: newId('AuthMethod'),
      platform_id: platform.id,
      account_id: account.id,
      type: proof.type,
      nickname: '',
      email: null,
      oidc_issuer: null,
      oidc_audience: null,
      oidc_subject: null,
      passkey_credential_id: null,
      passkey_public_key: null,
      passkey_counter: null,
      passkey_transports: null,
      passkey_origin: null,
      passkey_rp_id: null,
      revoked_at: null,
      created_at: now,
      updated_at: now,
    };
    if (proof.type === 'EMAIL_OTP') return { ...base, nickname: proof.email, email: proof.email };
    if (proof.type === 'OAUTH') {
      const { issuer, audience, subject, email } = proof.identity;
      return { ...base, nickname: email ?? subject, oidc_issuer: issuer, oidc_audience: audience, oidc_subject: subject };
    }
    const { passkey } = proof;
    return {
      ...base,
      nickname: proof.nickname,
      passkey_credential_id: passkey.credentialId,
      passkey_public_key: passkey.publicKey,
      passkey_counter: passkey.counter,
      passkey_transports: passkey.transports,
      passkey_origin: passkey.origin,
      passkey_rp_id: passkey.rpId,
    };
  }

  async function insert(ctx: WalletContext, row: CredentialRow, proof: Proof, signature?: VerifiedSignature) {
    let email: OtpEmail | undefined;
    try {
      const view = await ctx.tx(async (trx) => {
        await core.lockWallet(trx, ctx.platform, row.account_id);
        const live = await repo.listCredentials(trx, ctx.platform.id, row.account_id);
        if (live.length > 0 && !signature) {
          throw new ServiceError('CONFLICT', 'another credential was registered on this account meanwhile; repeat the request');
        }
        if (signature) await engine.consume(trx, ctx.platform, signature);
        if (proof.type === 'PASSKEY') await repo.rememberRegistrationChallenge(trx, ctx.platform.id, proof.challengeHash, row.created_at);
        await repo.insertCredential(trx, row);
        if (row.type === 'EMAIL_OTP') email = await core.issueCode(trx, ctx.platform, row);
        return presentCredential(row);
      });
      return { view, email };
    } catch (error) {
      if (isUniqueViolation(error, repo.UNIQUE_CREDENTIAL_TYPE)) throw alreadyExists(row.type);
      if (isUniqueViolation(error, repo.UNIQUE_REGISTRATION_CHALLENGE)) {
        throw invalidInput('challenge', 'this registration challenge has already been used; issue a new one', 'single-use');
      }
      throw error;
    }
  }

  /** POST /auth/credentials: first credential at once; any later one by signed retry (SPEC §4.1). */
  async function create(ctx: WalletContext, input: CredentialCreate, headers: SignedRetryHeaders): Promise<CreateOutcome> {
    const { platform } = ctx;
    await engine.refuseReplay(platform, headers);
    const account = await core.requireWallet(platform, input.accountId);
    const existing = await repo.listCredentials(database.db, platform.id, account.id);
    if (existing.some((c) => c.type === input.type)) throw alreadyExists(input.type);
    if (input.type === 'EMAIL_OTP') deps.mailer.refuseWithoutDelivery(platform.mode);
    const proof = await prove(platform, account, input);
    let signature: VerifiedSignature | undefined;
    if (existing.length > 0) {
      const spec = { platform, accountId: account.id, action: 'ADD_CREDENTIAL', type: input.type, body: input };
      const outcome = await engine.challengeOrVerify(spec, headers);
      if (outcome.kind === 'challenge') return { status: 202, body: outcome.challenge };
      signature = outcome.signature;
    }
    const { view, email } = await insert(ctx, newRow(platform, account, proof), proof, signature);
    if (email) await deps.mailer.deliver(email, platform.mode);
    return { status: 201, body: view };
  }

  /** GET /auth/credentials?accountId=: every live credential; none for an unknown account. */
  async function list(ctx: WalletContext, accountId: string): Promise<{ data: AuthMethodView[] }> {
    if (!isIdOf('InternalAccount', accountId)) throw invalidInput('querystring.accountId', 'accountId must be an InternalAccount id', 'format');
    const rows = await repo.listCredentials(database.db, ctx.platform.id, accountId);
    return { data: rows.map(presentCredential) };
  }

  function lastCredential(): ServiceError {
    return new ServiceError('LAST_CREDENTIAL', 'this is the account\'s only credential; register another one before revoking it');
  }

  /** DELETE /auth/credentials/{id}: signed by a session of another credential; never the last one. */
  async function revoke(ctx: WalletContext, id: string, headers: SignedRetryHeaders): Promise<{ status: 204 } | { status: 202; body: IssuedChallenge }> {
    const { platform } = ctx;
    await engine.refuseReplay(platform, headers);
    const credential = await core.requireCredential(platform, id);
    const live = await repo.listCredentials(database.db, platform.id, credential.account_id);
    if (live.length <= 1) throw lastCredential();
    const spec = { platform, accountId: credential.account_id, action: 'REVOKE_CREDENTIAL', target: id, type: credential.type, excludeCredentialId: id };
    const outcome = await engine.challengeOrVerify(spec, headers);
    if (outcome.kind === 'challenge') return { status: 202, body: outcome.challenge };
    await ctx.tx(async (trx) => {
      await core.lockWallet(trx, platform, credential.account_id);
      const current = await repo.listCredentials(trx, platform.id, credential.account_id);
      if (!current.some((c) => c.id === id)) throw new ServiceError('NOT_FOUND', 'authentication credential not found');
      if (current.length <= 1) throw lastCredential();
      await engine.consume(trx, platform, outcome.signature);
      await repo.revokeCredential(trx, id, clock.now(platform));
      return null;
    });
    return { status: 204 };
  }

  return { create, list, revoke };
}
