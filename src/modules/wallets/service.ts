import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';
import type { AccountService } from '../accounts/service.js';
import type { CustomerService } from '../customers/service.js';
import { createAuthenticationFlows } from './authentication.js';
import { createWalletCore, type WalletDeps } from './core.js';
import { createCredentialFlows } from './credentials.js';
import type { WalletKeys } from './crypto/secrets.js';
import { createExportFlow } from './export.js';
import { createOidcVerifier } from './oidc.js';
import { createOtpMailer } from './otp.js';
import { createSessionFlows } from './sessions.js';
import { createSignedRetryEngine } from './signed-retry.js';

export interface WalletServiceDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'smtpUrl' | 'smtpFrom' | 'sessionLifetimeSeconds' | 'oidcAllowPrivateIssuers'>;
  keys: WalletKeys;
  accounts: Pick<AccountService, 'getAccount'>;
  customers: Pick<CustomerService, 'requireCustomer'>;
}

/**
 * Embedded wallets: credentials (EMAIL_OTP, OAUTH, PASSKEY), sessions, wallet export, and the
 * signed-retry engine that every protected operation (quote execution included) goes through.
 */
export function createWalletService(deps: WalletServiceDeps) {
  const { database, clock, log, config, keys } = deps;
  if (keys.isDevelopmentKey) log.warn('WALLET_ENCRYPTION_KEY is not set: sandbox wallet secrets are encrypted with a development key, and production platforms get no new wallet secret or UMA key until it is set');
  const engine = createSignedRetryEngine({ database, clock });
  const mailer = createOtpMailer({ smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom, log });
  const walletDeps: WalletDeps = {
    database,
    clock,
    log,
    accounts: deps.accounts,
    customers: deps.customers,
    keys,
    engine,
    mailer,
    oidc: createOidcVerifier({ allowPrivateIssuers: config.oidcAllowPrivateIssuers }),
    sessionLifetimeSeconds: config.sessionLifetimeSeconds,
  };
  const core = createWalletCore(walletDeps);

  return {
    /** The signed-retry engine (SPEC §3.1) for other modules' protected operations. */
    signedRetry: engine,
    credentials: createCredentialFlows(walletDeps, core),
    authentication: createAuthenticationFlows(walletDeps, core),
    sessions: createSessionFlows(walletDeps, core),
    exports: createExportFlow(walletDeps, core),
    /** The development outbox of one-time passwords, newest first (for the dashboard). */
    outbox: mailer.outbox,
    exportSignerPublicKey: keys.exportSigner.publicKeyHex,
    close: () => mailer.close(),
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
