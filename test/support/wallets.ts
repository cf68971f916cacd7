import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Trx } from '../../src/db/database.js';
import {
  decryptSessionKey,
  generateClientKeyPair,
  signedRetryHeaders,
  type SessionKey,
} from '../../src/wallet-client/index.js';
import type { ApiClient, ApiResponse, TestApp, TestPlatform } from './app.js';
import { expectError } from './errors.js';
import { newRegistrationChallenge, SoftwareAuthenticator } from './webauthn-authenticator.js';

/**
 * Embedded-wallet flows for tests, built on the shipped client helpers: register credentials,
 * open sessions, and run signed retries the way a client would.
 */

export const RP_ID = 'wallet.example.test';
export const ORIGIN = `https://${RP_ID}`;

let seq = 0;

export interface Wallet {
  tp: TestPlatform;
  api: ApiClient;
  customerId: string;
  accountId: string;
  email: string;
}

/** A platform whose customers get a USD embedded wallet; `settings` are merged into `embeddedWallets`. */
export async function walletPlatform(t: TestApp, mode: 'SANDBOX' | 'PRODUCTION', settings: Record<string, unknown> = {}): Promise<TestPlatform> {
  const tp = await t.createPlatform({ mode });
  const patched = await tp.api.patch('/config', { embeddedWallets: { currencies: ['USD'], ...settings } });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  return tp;
}

/** A new customer of `tp` and its embedded wallet account. */
export async function newWallet(tp: TestPlatform): Promise<Wallet> {
  const email = `user${++seq}.${Date.now()}@example.com`;
  const customer = await tp.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Wallet User', email });
  expect(customer.status, JSON.stringify(customer.body)).toBe(201);
  const accounts = await tp.api.get('/customers/internal-accounts', { customerId: customer.body.id, type: 'EMBEDDED_WALLET' });
  expect(accounts.body.data).toHaveLength(1);
  return { tp, api: tp.api, customerId: customer.body.id, accountId: accounts.body.data[0].id, email };
}

/** The newest code the development outbox holds for a credential. */
export function latestCode(t: TestApp, credentialId: string): string {
  const entry = t.corridor.services.wallets.outbox().find((e) => e.credentialId === credentialId);
  if (!entry) throw new Error(`no code in the outbox for ${credentialId}`);
  return entry.code;
}

export interface OpenedSession {
  id: string;
  key: SessionKey;
  response: ApiResponse;
}

/** Verifies an EMAIL_OTP credential with the code from the outbox (or `otp`) and decrypts the session key. */
export async function verifyEmail(t: TestApp, api: ApiClient, credentialId: string, otp?: string): Promise<OpenedSession> {
  const client = generateClientKeyPair();
  const response = await api.post(`/auth/credentials/${credentialId}/verify`, { type: 'EMAIL_OTP', otp: otp ?? latestCode(t, credentialId), clientPublicKey: client.publicKey });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { id: response.body.id, key: await decryptSessionKey(response.body.encryptedSessionSigningKey, client.privateKey), response };
}

/**
 * Registers the wallet's first credential (EMAIL_OTP) and opens a session with it. The code comes
 * from the development outbox, or from `mailbox` (production platforms only ever email it).
 */
export async function emailSession(t: TestApp, wallet: Wallet, mailbox?: { latestCode(to: string): string }): Promise<OpenedSession & { credentialId: string }> {
  const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId, email: wallet.email });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { ...(await verifyEmail(t, wallet.api, created.body.id, mailbox?.latestCode(wallet.email))), credentialId: created.body.id };
}

/** Runs a protected request: expects the 202, signs its payload with `session`, repeats it signed. */
export async function signedRequest(
  api: ApiClient,
  method: 'POST' | 'DELETE',
  path: string,
  body: unknown,
  session: SessionKey,
  format: 'stamp' | 'signature' = 'stamp',
): Promise<{ challenge: ApiResponse; response: ApiResponse }> {
  const challenge = await api.request({ method, path, body });
  expect(challenge.status, JSON.stringify(challenge.body)).toBe(202);
  const response = await api.request({ method, path, body, headers: signedRetryHeaders(challenge.body, session, format) });
  return { challenge, response };
}

export /** An unsigned JWT from a well-known issuer: what a sandbox create accepts. */
function unsignedGoogleToken(claims: Record<string, unknown> = {}) {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const payload = { iss: 'https://accounts.google.com', sub: '1122', aud: 'client.apps', email: 'g.user@example.com', iat: Math.floor(Date.now() / 1000), ...claims };
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(payload)}.c2lnbmF0dXJl`;
}

/**
 * PostgreSQL only: runs `hold` in a transaction of its own and keeps that open, its locks held,
 * until `release()`. `waiters(n)` resolves once n other sessions wait for its locks (directly or in line) (false
 * after `timeoutMs`): race it with the request that should wait.
 */
export async function holdTransaction(t: TestApp, hold: (trx: Trx) => Promise<void>) {
  const { db } = t.corridor.database;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: (pid: number) => void;
  const holder = new Promise<number>((resolve) => (started = resolve));
  const done = db.transaction().execute(async (trx) => {
    await hold(trx);
    started((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0].pid);
    await released;
  });
  const pid = await holder;
  return {
    async waiters(n: number, timeoutMs = 30_000): Promise<boolean> {
      for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
        // Waiters queue behind each other for a row: count the whole chain.
        const { rows } = await sql<{ n: number }>`
          with recursive w(pid) as (
            select pid from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid))
            union select a.pid from pg_stat_activity a join w on w.pid = any(pg_blocking_pids(a.pid))
          ) select count(*)::int as n from w`.execute(db);
        if (rows[0].n >= n) return true;
      }
      return false;
    },
    async release(): Promise<void> {
      release();
      await done;
    },
  };
}

/** A passkey registration body for `authenticator`. */
export function passkeyBody(accountId: string, authenticator: SoftwareAuthenticator, nickname = 'Test key') {
  const challenge = newRegistrationChallenge();
  return { type: 'PASSKEY', accountId, nickname, challenge, attestation: authenticator.register(challenge) };
}

/** /challenge then /verify for a passkey credential; returns the decrypted session. */
export async function passkeySession(api: ApiClient, credentialId: string, authenticator: SoftwareAuthenticator): Promise<OpenedSession> {
  const client = generateClientKeyPair();
  const challenged = await api.post(`/auth/credentials/${credentialId}/challenge`, { clientPublicKey: client.publicKey });
  expect(challenged.status, JSON.stringify(challenged.body)).toBe(200);
  const response = await api.post(
    `/auth/credentials/${credentialId}/verify`,
    { type: 'PASSKEY', assertion: authenticator.assert(challenged.body.challenge) },
    { 'request-id': challenged.body.requestId },
  );
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { id: response.body.id, key: await decryptSessionKey(response.body.encryptedSessionSigningKey, client.privateKey), response };
}

/** The error envelope, and for wallet refusals the exact `reason` text the spec fixes. */
export function expectRefused(res: ApiResponse, status: number, code: string, reason?: string) {
  expectError(res, status, code);
  if (reason) expect(res.body.reason).toBe(reason);
}

/**
 * A SENDING-locked quote paid from the wallet's account to `destination`, made through `api` at
 * `path` (`/quotes` for the platform, `/agents/me/quotes` for an agent), with the payload its
 * execution must be signed over.
 */
export async function walletQuote(api: ApiClient, path: string, accountId: string, destination: string, amount: number) {
  const quote = await api.post(path, {
    source: { sourceType: 'ACCOUNT', accountId },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  });
  expect(quote.status, JSON.stringify(quote.body)).toBe(201);
  const payloadToSign: string = quote.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign;
  expect(typeof payloadToSign).toBe('string');
  return { quote: quote.body, payloadToSign };
}
