import { decryptExportBundle } from '@turnkey/crypto';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { SoftwareAuthenticator } from '../../../test/support/webauthn-authenticator.js';
import {
  emailSession,
  expectRefused,
  holdTransaction,
  newWallet,
  ORIGIN,
  passkeyBody,
  passkeySession,
  RP_ID,
  signedRequest,
  unsignedGoogleToken,
  verifyEmail,
  walletPlatform,
  type Wallet,
} from '../../../test/support/wallets.js';
import { buildStamp, decryptWalletExport, generateClientKeyPair, signedRetryHeaders, signPayload } from '../../wallet-client/index.js';
import { createWalletKeys } from './crypto/secrets.js';
import { lockWallet, revokeCredential } from './repository.js';

let t: TestApp;
let sandbox: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  sandbox = await walletPlatform(t, 'SANDBOX');
});
afterAll(() => t.close());

const exportPath = (w: Wallet) => `/internal-accounts/${w.accountId}/export`;

describe('signed retries', () => {
  it('refuses a tampered payload, another account\'s session, a changed body and a reused or unknown requestId', async () => {
    const wallet = await newWallet(sandbox);
    const mine = await emailSession(t, wallet);
    const stranger = await emailSession(t, await newWallet(sandbox));
    const body = { clientPublicKey: generateClientKeyPair().publicKey };
    const challenge = await wallet.api.post(exportPath(wallet), body);
    expect(challenge.status).toBe(202);
    expect(challenge.body).toEqual({ payloadToSign: expect.any(String), requestId: expect.any(String), expiresAt: expect.any(String) });
    expect(JSON.parse(challenge.body.payloadToSign)).toMatchObject({ accountId: wallet.accountId, clientPublicKey: body.clientPublicKey.toLowerCase() });
    const reason = 'Invalid Grid-Wallet-Signature';
    const headers = (signature: string, requestId = challenge.body.requestId) => ({ 'service-wallet-signature': signature, 'request-id': requestId });
    const tampered = challenge.body.payloadToSign.replace('EXPORT_WALLET', 'EXPORT_WALLEt');
    expectRefused(await wallet.api.post(exportPath(wallet), body, headers(signPayload(tampered, mine.key))), 401, 'UNAUTHORIZED', reason);
    expectRefused(await wallet.api.post(exportPath(wallet), body, headers(buildStamp(challenge.body.payloadToSign, stranger.key))), 401, 'UNAUTHORIZED', reason);
    const otherKey = { clientPublicKey: generateClientKeyPair().publicKey };
    expectRefused(await wallet.api.post(exportPath(wallet), otherKey, headers(buildStamp(challenge.body.payloadToSign, mine.key))), 401, 'UNAUTHORIZED');
    expectRefused(await wallet.api.post(exportPath(wallet), body, headers(buildStamp(challenge.body.payloadToSign, mine.key), '0193a1b2-0000-7000-8000-000000000000')), 401, 'UNAUTHORIZED');
    expectRefused(await wallet.api.post(exportPath(wallet), body, { 'request-id': challenge.body.requestId }), 401, 'UNAUTHORIZED');

    const ok = await wallet.api.post(exportPath(wallet), body, headers(buildStamp(challenge.body.payloadToSign, mine.key)));
    expect(ok.status).toBe(200);
    const reused = await wallet.api.post(exportPath(wallet), body, headers(buildStamp(challenge.body.payloadToSign, mine.key)));
    expectRefused(reused, 401, 'UNAUTHORIZED');
    expect(reused.body.message).toMatch(/already been used/);
  });

  it('answers a signed retry sent again with 401, also where its operation could not run again', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const sentTwice = async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
      const challenge = await wallet.api.request({ method, path, body });
      expect(challenge.status).toBe(202);
      const headers = signedRetryHeaders(challenge.body, email.key);
      const first = await wallet.api.request({ method, path, body, headers });
      expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
      const again = await wallet.api.request({ method, path, body, headers });
      expectRefused(again, 401, 'UNAUTHORIZED');
      expect(again.body.message).toMatch(/already been used/);
    };
    // The credential it added exists now; the session and the credential it revoked are gone.
    await sentTwice('POST', '/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() });
    await wallet.api.post(`/auth/credentials/${email.credentialId}/challenge`, {});
    await sentTwice('DELETE', `/auth/sessions/${(await verifyEmail(t, wallet.api, email.credentialId)).id}`);
    const credentials = (await wallet.api.get('/auth/credentials', { accountId: wallet.accountId })).body.data;
    await sentTwice('DELETE', `/auth/credentials/${credentials.find((c: { type: string }) => c.type === 'OAUTH').id}`);
    await sentTwice('POST', exportPath(wallet), { clientPublicKey: generateClientKeyPair().publicKey });
  });

  it('refuses a retry after expiresAt (test clock) and a challenge issued for another operation', async () => {
    const wallet = await newWallet(sandbox);
    const session = await emailSession(t, wallet);
    const body = { clientPublicKey: generateClientKeyPair().publicKey };
    const challenge = await wallet.api.post(exportPath(wallet), body);
    const revoke = await wallet.api.delete(`/auth/sessions/${session.id}`);
    const crossed = await wallet.api.request({ method: 'DELETE', path: `/auth/sessions/${session.id}`, headers: signedRetryHeaders(challenge.body, session.key) });
    expectRefused(crossed, 401, 'UNAUTHORIZED');
    await sandbox.api.post('/sandbox/clock/advance', { seconds: 301 });
    const late = await wallet.api.post(exportPath(wallet), body, signedRetryHeaders(challenge.body, session.key));
    expectRefused(late, 401, 'UNAUTHORIZED');
    expect(late.body.message).toMatch(/expired/);
    expect(revoke.status).toBe(202);
  });

  it('answers 401 when the account has no session to sign with', async () => {
    const wallet = await newWallet(sandbox);
    await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expectRefused(await wallet.api.post(exportPath(wallet), { clientPublicKey: generateClientKeyPair().publicKey }), 401, 'UNAUTHORIZED');
  });

  it('leaves an Idempotency-Key free for the signed retry, and replays the signed result', async () => {
    const wallet = await newWallet(sandbox);
    const session = await emailSession(t, wallet);
    const body = { clientPublicKey: generateClientKeyPair().publicKey };
    const key = { 'idempotency-key': `export-${Date.now()}` };
    const challenge = await wallet.api.post(exportPath(wallet), body, key);
    expect(challenge.status).toBe(202);
    const signed = await wallet.api.post(exportPath(wallet), body, { ...key, ...signedRetryHeaders(challenge.body, session.key) });
    expect(signed.status).toBe(200);
    const replay = await wallet.api.post(exportPath(wallet), body, { ...key, ...signedRetryHeaders(challenge.body, session.key) });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(signed.body);
  });
});

describe('sessions', () => {
  it('expire with the test clock; the client then re-authenticates', async () => {
    const wallet = await newWallet(sandbox);
    const session = await emailSession(t, wallet);
    expect((await wallet.api.get('/auth/sessions', { accountId: wallet.accountId })).body.data).toHaveLength(1);
    await sandbox.api.post('/sandbox/clock/advance', { seconds: 15 * 60 + 1 });
    expect((await wallet.api.get('/auth/sessions', { accountId: wallet.accountId })).body.data).toEqual([]);
    expectRefused(await wallet.api.delete(`/auth/sessions/${session.id}`), 404, 'NOT_FOUND');
    expectRefused(await wallet.api.post(exportPath(wallet), { clientPublicKey: generateClientKeyPair().publicKey }), 401, 'UNAUTHORIZED');
    // EMAIL_OTP re-authentication: /challenge, then /verify with the new code and a fresh key.
    expect((await wallet.api.post(`/auth/credentials/${session.credentialId}/challenge`, {})).status).toBe(200);
    const again = await verifyEmail(t, wallet.api, session.credentialId);
    expect((await signedRequest(wallet.api, 'POST', exportPath(wallet), { clientPublicKey: generateClientKeyPair().publicKey }, again.key)).response.status).toBe(200);
  });

  it('are revoked by signed retry (self-logout included), after which their key signs nothing', async () => {
    const wallet = await newWallet(sandbox);
    const first = await emailSession(t, wallet);
    await wallet.api.post(`/auth/credentials/${first.credentialId}/challenge`, {});
    const second = await verifyEmail(t, wallet.api, first.credentialId);
    const revoked = await signedRequest(wallet.api, 'DELETE', `/auth/sessions/${first.id}`, undefined, second.key);
    expect(revoked.challenge.body.type).toBe('EMAIL_OTP');
    expect(revoked.response.status).toBe(204);
    expect((await wallet.api.get('/auth/sessions', { accountId: wallet.accountId })).body.data.map((s: any) => s.id)).toEqual([second.id]);
    const body = { clientPublicKey: generateClientKeyPair().publicKey };
    const challenge = await wallet.api.post(exportPath(wallet), body);
    expectRefused(await wallet.api.post(exportPath(wallet), body, signedRetryHeaders(challenge.body, first.key)), 401, 'UNAUTHORIZED', 'Invalid Grid-Wallet-Signature');
    const self = await signedRequest(wallet.api, 'DELETE', `/auth/sessions/${second.id}`, undefined, second.key);
    expect(self.response.status).toBe(204);
    expectRefused(await wallet.api.delete(`/auth/sessions/${second.id}`), 404, 'NOT_FOUND');
  });
});

describe('wallet export', () => {
  it('returns the wallet mnemonic sealed to the client key, the same on every export', async () => {
    const wallet = await newWallet(sandbox);
    const session = await emailSession(t, wallet);
    const config = await sandbox.api.get('/config');
    const signer = config.body.embeddedWallets.exportSignerPublicKey;
    const mnemonics: string[] = [];
    for (let i = 0; i < 2; i++) {
      const client = generateClientKeyPair();
      const { response } = await signedRequest(wallet.api, 'POST', exportPath(wallet), { clientPublicKey: client.publicKey }, session.key);
      expect(response.status).toBe(200);
      expect(response.body.id).toBe(wallet.accountId);
      const mnemonic = await decryptWalletExport(response.body.encryptedWalletCredentials, client.privateKey, { signerPublicKey: signer, organizationId: wallet.accountId });
      const viaTurnkey = await decryptExportBundle({
        exportBundle: response.body.encryptedWalletCredentials,
        embeddedKey: client.privateKey,
        organizationId: wallet.accountId,
        dangerouslyOverrideSignerPublicKey: signer,
        returnMnemonic: true,
      });
      expect(viaTurnkey).toBe(mnemonic);
      mnemonics.push(mnemonic);
    }
    expect(mnemonics[0].split(' ')).toHaveLength(24);
    expect(validateMnemonic(mnemonics[0], wordlist)).toBe(true);
    expect(mnemonics[1]).toBe(mnemonics[0]);
  });

  it('answers 503, not 500, for a wallet sealed under another WALLET_ENCRYPTION_KEY', async () => {
    const wallet = await newWallet(sandbox);
    const session = await emailSession(t, wallet);
    // As after the operator changed the key: the stored mnemonic was sealed under another one.
    const sealed = createWalletKeys('22'.repeat(32)).encrypt(`${'abandon '.repeat(23)}art`, wallet.accountId);
    const updated = await t.corridor.database.db.updateTable('wallet_secrets').set({ encrypted_mnemonic: sealed }).where('account_id', '=', wallet.accountId).executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(1n);
    const { response } = await signedRequest(wallet.api, 'POST', exportPath(wallet), { clientPublicKey: generateClientKeyPair().publicKey }, session.key);
    expectRefused(response, 503, 'SERVICE_UNAVAILABLE');
    expect(response.body.message).toMatch(/WALLET_ENCRYPTION_KEY/);
  });

  it('is only for embedded wallets', async () => {
    const wallet = await newWallet(sandbox);
    const fiat = (await sandbox.api.get('/customers/internal-accounts', { customerId: wallet.customerId, type: 'INTERNAL_FIAT' })).body.data[0];
    expectRefused(await sandbox.api.post(`/internal-accounts/${fiat.id}/export`, { clientPublicKey: generateClientKeyPair().publicKey }), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.post('/internal-accounts/InternalAccount:0193a1b2-0000-7000-8000-000000000000/export', { clientPublicKey: generateClientKeyPair().publicKey }), 404, 'NOT_FOUND');
    expectRefused(await sandbox.api.post(exportPath(wallet), { clientPublicKey: 'abc' }), 400, 'INVALID_INPUT');
  });
});

// PostgreSQL only: a second transaction holds the wallet's lock while the signed requests wait,
// and PGlite has one connection.
describe.skipIf(!process.env.TEST_DATABASE_URL)('a signing session revoked while its request waits for the wallet', () => {
  const holdWallet = (wallet: Wallet, then: (trx: Parameters<typeof revokeCredential>[0]) => Promise<void> = async () => {}) =>
    holdTransaction(t, async (trx) => {
      await lockWallet(trx, sandbox.platform.id, wallet.accountId, () => 'unused', new Date());
      await then(trx);
    });

  it('two credentials revoking each other, each signed by the other\'s session: only the first succeeds', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const passkey = (await signedRequest(wallet.api, 'POST', '/auth/credentials', passkeyBody(wallet.accountId, authenticator), email.key)).response.body;
    const passkeyKey = (await passkeySession(wallet.api, passkey.id, authenticator)).key;
    const oauth = { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() };
    expect((await signedRequest(wallet.api, 'POST', '/auth/credentials', oauth, email.key)).response.status).toBe(201);

    const revokePasskey = await wallet.api.delete(`/auth/credentials/${passkey.id}`);
    const revokeEmail = await wallet.api.delete(`/auth/credentials/${email.credentialId}`);
    const held = await holdWallet(wallet);
    const both = Promise.all([
      wallet.api.delete(`/auth/credentials/${passkey.id}`, signedRetryHeaders(revokePasskey.body, email.key)),
      wallet.api.delete(`/auth/credentials/${email.credentialId}`, signedRetryHeaders(revokeEmail.body, passkeyKey)),
    ]);
    // Both signatures checked before either revocation commits: both wait for the wallet.
    expect(await held.waiters(2)).toBe(true);
    await held.release();
    const statuses = (await both).map((r) => r.status).sort();
    expect(statuses).toEqual([204, 401]);
    expect((await wallet.api.get('/auth/credentials', { accountId: wallet.accountId })).body.data).toHaveLength(2);
  });

  it('an export whose session is revoked while it waits is refused', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const body = { clientPublicKey: generateClientKeyPair().publicKey };
    const challenge = await wallet.api.post(exportPath(wallet), body);
    // A revocation of the session's credential, in progress: it holds the wallet's lock.
    const held = await holdWallet(wallet, (trx) => revokeCredential(trx, email.credentialId, new Date()));
    const exported = wallet.api.post(exportPath(wallet), body, signedRetryHeaders(challenge.body, email.key));
    expect(await Promise.race([exported.then(() => false), held.waiters(1)])).toBe(true);
    await held.release();
    expectRefused(await exported, 401, 'UNAUTHORIZED', 'Invalid Grid-Wallet-Signature');
  });
});
