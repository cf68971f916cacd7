import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Database, Trx } from '../../db/database.js';
import type { AccountService, InternalAccount } from '../accounts/service.js';
import type { CustomerService } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import { sealCredentialBundle } from './crypto/hpke.js';
import { newSessionKeyPair, parseUncompressedPublicKey } from './crypto/keys.js';
import { refuseDevelopmentKeyFor, type WalletKeys } from './crypto/secrets.js';
import type { OidcVerifier } from './oidc.js';
import { OTP_LIFETIME_SECONDS, newOtpCode, type OtpEmail, type OtpMailer } from './otp.js';
import * as repo from './repository.js';
import type { CredentialRow } from './repository.js';
import type { AuthMethodType, AuthMethodView, AuthSessionView } from './schemas.js';
import type { SignedRetryEngine } from './signed-retry.js';

/** What every part of the wallets module works with. */
export interface WalletDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  accounts: Pick<AccountService, 'getAccount'>;
  customers: Pick<CustomerService, 'requireCustomer'>;
  keys: WalletKeys;
  engine: SignedRetryEngine;
  mailer: OtpMailer;
  oidc: OidcVerifier;
  sessionLifetimeSeconds: number;
}

export type WalletContext = ServiceContext<Platform>;

export function presentCredential(row: CredentialRow): AuthMethodView {
  return {
    id: row.id,
    accountId: row.account_id,
    type: row.type,
    nickname: row.nickname,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function presentSession(session: repo.SessionRow, credential: { type: AuthMethodType; nickname: string }, key?: string): AuthSessionView {
  return {
    id: session.id,
    accountId: session.account_id,
    type: credential.type,
    nickname: credential.nickname,
    createdAt: session.created_at.toISOString(),
    updatedAt: (session.revoked_at ?? session.created_at).toISOString(),
    ...(key && { encryptedSessionSigningKey: key }),
    expiresAt: session.expires_at.toISOString(),
  };
}

export function alreadyExists(type: AuthMethodType): ServiceError {
  const code = `${type}_CREDENTIAL_ALREADY_EXISTS` as const;
  return new ServiceError(code, `the account already has a ${type} credential; only one of each type is allowed`);
}

export function credentialNotFound(): ServiceError {
  return new ServiceError('NOT_FOUND', 'authentication credential not found');
}

/** A client public key that is a point on P-256; the schema has already checked its shape. */
export function clientKey(hex: string, field = 'clientPublicKey'): Uint8Array {
  const point = parseUncompressedPublicKey(hex);
  if (!point) throw invalidInput(field, `${field} is not a point on P-256`, 'format');
  return point;
}

export function createWalletCore(deps: WalletDeps) {
  const { database, clock, keys } = deps;

  /** The account, which must be an EMBEDDED_WALLET of the platform (404 when it is not the platform's). */
  async function requireWallet(platform: Platform, accountId: string, field = 'accountId'): Promise<InternalAccount> {
    const account = await deps.accounts.getAccount(database.db, platform.id, accountId);
    if (account.type !== 'EMBEDDED_WALLET') throw invalidInput(field, 'the account is not an EMBEDDED_WALLET internal account', 'type');
    return account;
  }

  async function requireCredential(platform: Platform, id: string): Promise<CredentialRow> {
    const row = await repo.findCredential(database.db, platform.id, id);
    if (!row) throw credentialNotFound();
    return row;
  }

  /** Locks the wallet's row (creating it, with a fresh encrypted mnemonic, on first use); returns the encrypted mnemonic. */
  function lockWallet(trx: Trx, platform: Platform, accountId: string): Promise<string> {
    const fresh = () => {
      refuseDevelopmentKeyFor(keys, platform);
      return keys.encrypt(generateMnemonic(wordlist, 256), accountId);
    };
    return repo.lockWallet(trx, platform.id, accountId, fresh, clock.now(platform));
  }

  /** Retires the credential's open code and stores a new one; deliver the returned email after commit. */
  async function issueCode(trx: Trx, platform: Platform, credential: CredentialRow): Promise<OtpEmail> {
    const now = clock.now(platform);
    await repo.retireOpenCodes(trx, credential.id, now);
    const id = newId('Otp');
    const code = newOtpCode();
    const expiresAt = new Date(now.getTime() + OTP_LIFETIME_SECONDS * 1000);
    await repo.insertAuthChallenge(trx, {
      id,
      platform_id: platform.id,
      credential_id: credential.id,
      kind: 'EMAIL_OTP',
      challenge: null,
      client_public_key: null,
      otp_hash: keys.otpHash(id, code),
      attempts: 0,
      expires_at: expiresAt,
      consumed_at: null,
      created_at: now,
    });
    return { platformId: platform.id, accountId: credential.account_id, credentialId: credential.id, to: credential.email!, code, expiresAt };
  }

  /** A new session key pair: its private half sealed to the client key, its public half to store. */
  async function newSession(platform: Platform, credential: CredentialRow, client: Uint8Array) {
    const pair = newSessionKeyPair();
    const sealed = await sealCredentialBundle(client, pair.privateKey);
    pair.privateKey.fill(0);
    const now = clock.now(platform);
    const row: repo.SessionRow = {
      id: newId('Session'),
      platform_id: platform.id,
      account_id: credential.account_id,
      credential_id: credential.id,
      public_key: pair.publicKeyHex,
      expires_at: new Date(now.getTime() + deps.sessionLifetimeSeconds * 1000),
      revoked_at: null,
      created_at: now,
    };
    return { row, view: presentSession(row, credential, sealed) };
  }

  return { requireWallet, requireCredential, lockWallet, issueCode, newSession };
}

export type WalletCore = ReturnType<typeof createWalletCore>;
