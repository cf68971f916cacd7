import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle } from '@turnkey/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { SoftwareAuthenticator } from '../../../test/support/webauthn-authenticator.js';
import {
  emailSession,
  expectRefused,
  latestCode,
  newWallet,
  ORIGIN,
  passkeyBody,
  passkeySession,
  RP_ID,
  signedRequest,
  unsignedGoogleToken,
  verifyEmail,
  walletPlatform,
} from '../../../test/support/wallets.js';
import { decryptSessionKey, generateClientKeyPair, signedRetryHeaders } from '../../wallet-client/index.js';
import { OTP_DAILY_FAILURES, OTP_MAX_ATTEMPTS } from './otp.js';
import { revokeCredential } from './repository.js';

let t: TestApp;
let sandbox: TestPlatform;
let other: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  sandbox = await walletPlatform(t, 'SANDBOX');
  other = await walletPlatform(t, 'SANDBOX');
});
afterAll(() => t.close());

describe('embedded wallet accounts', () => {
  it('every customer gets one per configured currency, also when the setting grows', async () => {
    const wallet = await newWallet(sandbox);
    const patched = await sandbox.api.patch('/config', { embeddedWallets: { currencies: ['USD', 'EUR'] } });
    expect(patched.body.embeddedWallets).toMatchObject({ currencies: ['USD', 'EUR'], oidcIssuers: [], exportSignerPublicKey: expect.stringMatching(/^04[0-9a-f]{128}$/) });
    const accounts = await sandbox.api.get('/customers/internal-accounts', { customerId: wallet.customerId, type: 'EMBEDDED_WALLET' });
    expect(accounts.body.data.map((a: any) => a.balance.currency.code).sort()).toEqual(['EUR', 'USD']);
    await sandbox.api.patch('/config', { embeddedWallets: { currencies: ['USD'] } });
  });

  it('refuses settings it cannot honour', async () => {
    const cases = [
      [{ currencies: ['JPY'] }, 'embeddedWallets.currencies.0'],
      [{ oidcIssuers: [{ issuer: 'http://idp.example.com', audiences: ['x'] }] }, 'embeddedWallets.oidcIssuers.0.issuer'],
      [{ passkey: { rpId: 'example.com', rpName: 'X', origins: ['https://evil.test'] } }, 'embeddedWallets.passkey.origins.0'],
      [{ passkey: { rpId: 'example.com', rpName: 'X', origins: ['https://example.com/path'] } }, 'embeddedWallets.passkey.origins.0'],
    ] as const;
    for (const [settings, field] of cases) {
      const res = await sandbox.api.patch('/config', { embeddedWallets: settings });
      expectRefused(res, 400, 'INVALID_INPUT');
      expect(res.body.details.errors.map((e: any) => e.field)).toContain(field);
    }
  });
});

describe('EMAIL_OTP on a sandbox platform', () => {
  it('creates the first credential at once, emails a code, and opens a session with it', async () => {
    const wallet = await newWallet(sandbox);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^AuthMethod:/),
      accountId: wallet.accountId,
      type: 'EMAIL_OTP',
      nickname: wallet.email,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await wallet.api.get('/auth/sessions', { accountId: wallet.accountId })).body.data).toEqual([]);
    const code = latestCode(t, created.body.id);
    expect(code).toMatch(/^\d{6}$/);
    const session = await verifyEmail(t, wallet.api, created.body.id, code);
    expect(session.response.body).toMatchObject({ id: expect.stringMatching(/^Session:/), accountId: wallet.accountId, type: 'EMAIL_OTP', expiresAt: expect.any(String) });
    const expiresIn = Date.parse(session.response.body.expiresAt) - Date.parse(session.response.body.createdAt);
    expect(expiresIn).toBe(15 * 60_000);
    const listed = await wallet.api.get('/auth/sessions', { accountId: wallet.accountId });
    expect(listed.body.data).toEqual([{ ...session.response.body, encryptedSessionSigningKey: undefined }].map(({ encryptedSessionSigningKey, ...s }) => s));
  });

  it('accepts the magic code 000000 and returns a key @turnkey/crypto opens', async () => {
    const wallet = await newWallet(sandbox);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId, email: 'other@example.com' });
    expect(created.body.nickname).toBe('other@example.com');
    const client = generateClientKeyPair();
    const res = await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'EMAIL_OTP', otp: '000000', clientPublicKey: client.publicKey });
    expect(res.status).toBe(200);
    const hex = decryptCredentialBundle(res.body.encryptedSessionSigningKey, client.privateKey);
    expect((await decryptSessionKey(res.body.encryptedSessionSigningKey, client.privateKey)).privateKey).toBe(hex);
  });

  it('answers a wrong code with 401 and the SPEC reason', async () => {
    const wallet = await newWallet(sandbox);
    const { credentialId } = await emailSession(t, wallet);
    const res = await wallet.api.post(`/auth/credentials/${credentialId}/verify`, { type: 'EMAIL_OTP', otp: '123456', clientPublicKey: generateClientKeyPair().publicKey });
    expectRefused(res, 401, 'UNAUTHORIZED', 'Invalid OTP code');
  });

  it('sends a fresh code on /challenge, retires the old one, and rate limits re-issue', async () => {
    const wallet = await newWallet(sandbox);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    const first = latestCode(t, created.body.id);
    const again = await wallet.api.request({ method: 'POST', path: `/auth/credentials/${created.body.id}/challenge` });
    expect(again.status).toBe(200);
    // The AuthMethod is left as it was (SPEC 4.1), updatedAt included.
    expect(again.body).toEqual(created.body);
    const listed = await wallet.api.get('/auth/credentials', { accountId: wallet.accountId });
    expect(listed.body.data.find((c: { id: string }) => c.id === created.body.id)).toEqual(created.body);
    const second = latestCode(t, created.body.id);
    if (first !== second) {
      const stale = await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'EMAIL_OTP', otp: first, clientPublicKey: generateClientKeyPair().publicKey });
      expectRefused(stale, 401, 'UNAUTHORIZED', 'Invalid OTP code');
    }
    expect((await wallet.api.post(`/auth/credentials/${created.body.id}/challenge`, {})).status).toBe(200);
    const limited = await wallet.api.post(`/auth/credentials/${created.body.id}/challenge`, {});
    expectRefused(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(90);
    await sandbox.api.post('/sandbox/clock/advance', { seconds: 91 });
    expect((await wallet.api.post(`/auth/credentials/${created.body.id}/challenge`, {})).status).toBe(200);
  });

  it('refuses an expired code (test clock)', async () => {
    const wallet = await newWallet(sandbox);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    const code = latestCode(t, created.body.id);
    await sandbox.api.post('/sandbox/clock/advance', { seconds: 601 });
    const res = await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'EMAIL_OTP', otp: code, clientPublicKey: generateClientKeyPair().publicKey });
    expectRefused(res, 401, 'UNAUTHORIZED', 'Invalid OTP code');
    expect(res.body.message).toMatch(/expired/);
  });

  it('needs an email when the customer has none', async () => {
    const customer = await sandbox.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'No Mail' });
    const accounts = await sandbox.api.get('/customers/internal-accounts', { customerId: customer.body.id, type: 'EMBEDDED_WALLET' });
    const res = await sandbox.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: accounts.body.data[0].id });
    expectRefused(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].field).toBe('email');
  });
});

describe('wrong email codes over a day', () => {
  const advance = (seconds: number) => sandbox.api.post('/sandbox/clock/advance', { seconds });

  it(`after ${OTP_DAILY_FAILURES} wrong codes in a day, even the right code is refused until the first of them is a day old`, async () => {
    const wallet = await newWallet(sandbox);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    const credentialId = created.body.id as string;
    const verify = (otp: string) => wallet.api.post(`/auth/credentials/${credentialId}/verify`, { type: 'EMAIL_OTP', otp, clientPublicKey: generateClientKeyPair().publicKey });
    const wrongFor = (code: string) => (code === '111111' ? '222222' : '111111');

    for (let round = 0; round < OTP_DAILY_FAILURES / OTP_MAX_ATTEMPTS; round++) {
      if (round > 0) {
        await advance(91); // past the re-issue limit
        expect((await wallet.api.post(`/auth/credentials/${credentialId}/challenge`, {})).status).toBe(200);
      }
      const code = latestCode(t, credentialId);
      for (let i = 0; i < OTP_MAX_ATTEMPTS; i++) expectRefused(await verify(wrongFor(code)), 401, 'UNAUTHORIZED', 'Invalid OTP code');
    }
    await advance(91);
    expect((await wallet.api.post(`/auth/credentials/${credentialId}/challenge`, {})).status).toBe(200);
    const limited = await verify(latestCode(t, credentialId));
    expectRefused(limited, 429, 'RATE_LIMITED');
    const wait = Number(limited.headers['retry-after']);
    expect(wait).toBeGreaterThan(86_400 - 4 * 91 - 10);
    expect(wait).toBeLessThanOrEqual(86_400);

    await advance(wait);
    expect((await wallet.api.post(`/auth/credentials/${credentialId}/challenge`, {})).status).toBe(200);
    await verifyEmail(t, wallet.api, credentialId);
  });
});

describe('additional credentials (signed retry)', () => {
  it('adds OAUTH, then PASSKEY, each after a 202 challenge, with both signature encodings', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const oauth = { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() };
    const { challenge, response } = await signedRequest(wallet.api, 'POST', '/auth/credentials', oauth, email.key, 'signature');
    expect(challenge.body).toEqual({ type: 'OAUTH', payloadToSign: expect.any(String), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), expiresAt: expect.any(String) });
    expect(JSON.parse(challenge.body.payloadToSign)).toMatchObject({ requestId: challenge.body.requestId, type: 'OAUTH', accountId: wallet.accountId, expiresAt: challenge.body.expiresAt });
    expect(Date.parse(challenge.body.expiresAt) - Date.now()).toBeGreaterThan(290_000);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ type: 'OAUTH', nickname: 'g.user@example.com' });

    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const passkey = passkeyBody(wallet.accountId, authenticator, 'Laptop');
    const added = await signedRequest(wallet.api, 'POST', '/auth/credentials', passkey, email.key, 'stamp');
    expect(added.response.status).toBe(201);
    expect(added.response.body).toMatchObject({ type: 'PASSKEY', nickname: 'Laptop' });
    const session = await passkeySession(wallet.api, added.response.body.id, authenticator);
    expect(session.response.body.type).toBe('PASSKEY');
    const listed = await wallet.api.get('/auth/credentials', { accountId: wallet.accountId });
    expect(listed.body.data.map((c: any) => c.type)).toEqual(['EMAIL_OTP', 'OAUTH', 'PASSKEY']);
  });

  it('accepts a stamp made by @turnkey/api-key-stamper, and the sandbox magic signature', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const body = { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() };
    const challenge = await wallet.api.post('/auth/credentials', body);
    const stamper = new ApiKeyStamper({ apiPublicKey: email.key.publicKey, apiPrivateKey: email.key.privateKey });
    const { stampHeaderValue } = await stamper.stamp(challenge.body.payloadToSign);
    const signed = await wallet.api.post('/auth/credentials', body, { 'service-wallet-signature': stampHeaderValue, 'request-id': challenge.body.requestId });
    expect(signed.status).toBe(201);

    const passkey = passkeyBody(wallet.accountId, new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN }));
    const second = await wallet.api.post('/auth/credentials', passkey);
    const magic = await wallet.api.post('/auth/credentials', passkey, { 'service-wallet-signature': 'sandbox-valid-signature', 'request-id': second.body.requestId });
    expect(magic.status).toBe(201);
  });

  it('answers a wrong signature with 401 and the SPEC reason', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const body = { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() };
    const challenge = await wallet.api.post('/auth/credentials', body);
    const res = await wallet.api.post('/auth/credentials', body, { 'service-wallet-signature': 'bm90IGEgc2lnbmF0dXJl', 'request-id': challenge.body.requestId });
    expectRefused(res, 401, 'UNAUTHORIZED', 'Invalid Grid-Wallet-Signature');
    const stillValid = await wallet.api.post('/auth/credentials', body, signedRetryHeaders(challenge.body, email.key));
    expect(stillValid.status).toBe(201);
  });

  it('keeps one credential per type', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    expectRefused(await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId }), 400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS');
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    expect((await signedRequest(wallet.api, 'POST', '/auth/credentials', passkeyBody(wallet.accountId, authenticator), email.key)).response.status).toBe(201);
    expectRefused(await wallet.api.post('/auth/credentials', passkeyBody(wallet.accountId, authenticator)), 400, 'PASSKEY_CREDENTIAL_ALREADY_EXISTS');
  });

  it('refuses a passkey registration whose challenge does not match, and a reused registration challenge', async () => {
    const wallet = await newWallet(sandbox);
    const body = passkeyBody(wallet.accountId, new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN }));
    const mismatched = await wallet.api.post('/auth/credentials', { ...body, challenge: 'b3RoZXItY2hhbGxlbmdl' });
    expectRefused(mismatched, 400, 'INVALID_INPUT');
    expect(mismatched.body.details.errors[0].field).toBe('attestation');
    expect((await wallet.api.post('/auth/credentials', body)).status).toBe(201);
    const elsewhere = await newWallet(sandbox);
    const reused = await elsewhere.api.post('/auth/credentials', { ...body, accountId: elsewhere.accountId });
    expectRefused(reused, 400, 'INVALID_INPUT');
    expect(reused.body.details.errors[0].field).toBe('challenge');
  });

  it('refuses an OAUTH token that is not a JWT or comes from an unknown issuer', async () => {
    const wallet = await newWallet(sandbox);
    expectRefused(await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: 'sandbox-valid-oidc-token' }), 400, 'INVALID_INPUT');
    const unknown = await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken({ iss: 'https://idp.unknown.test' }) });
    expectRefused(unknown, 400, 'INVALID_INPUT');
  });

  it('verifies OAUTH with the magic token and PASSKEY with the magic signature on sandbox only', async () => {
    const wallet = await newWallet(sandbox);
    const oauth = await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() });
    expect(oauth.status).toBe(201);
    const client = generateClientKeyPair();
    const verified = await wallet.api.post(`/auth/credentials/${oauth.body.id}/verify`, { type: 'OAUTH', oidcToken: 'sandbox-valid-oidc-token', clientPublicKey: client.publicKey });
    expect(verified.status).toBe(200);
    const wrong = await wallet.api.post(`/auth/credentials/${oauth.body.id}/verify`, { type: 'OAUTH', oidcToken: unsignedGoogleToken(), clientPublicKey: generateClientKeyPair().publicKey });
    expectRefused(wrong, 401, 'UNAUTHORIZED', 'Invalid OIDC token');

    const key = await decryptSessionKey(verified.body.encryptedSessionSigningKey, client.privateKey);
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const passkey = (await signedRequest(wallet.api, 'POST', '/auth/credentials', passkeyBody(wallet.accountId, authenticator), key)).response.body;
    const challenged = await wallet.api.post(`/auth/credentials/${passkey.id}/challenge`, { clientPublicKey: generateClientKeyPair().publicKey });
    const assertion = { ...authenticator.assert(challenged.body.challenge), signature: 'c2lnbmF0dXJl' };
    const refused = await wallet.api.post(`/auth/credentials/${passkey.id}/verify`, { type: 'PASSKEY', assertion }, { 'request-id': challenged.body.requestId });
    expectRefused(refused, 401, 'UNAUTHORIZED', 'Invalid passkey signature');
    const magic = { ...assertion, signature: 'sandbox-valid-passkey-signature' };
    for (const malformed of [{ userHandle: 'not base64url!' }, { userHandle: '' }, { signature: 'c2ln+bmF0dXJl' }]) {
      const res = await wallet.api.post(`/auth/credentials/${passkey.id}/verify`, { type: 'PASSKEY', assertion: { ...magic, ...malformed } }, { 'request-id': challenged.body.requestId });
      expectRefused(res, 400, 'INVALID_INPUT');
      expect(JSON.stringify(res.body)).toContain(`assertion.${Object.keys(malformed)[0]}`);
    }
    const accepted = await wallet.api.post(`/auth/credentials/${passkey.id}/verify`, { type: 'PASSKEY', assertion: magic }, { 'request-id': challenged.body.requestId });
    expect(accepted.status).toBe(200);
    const noRequestId = await wallet.api.post(`/auth/credentials/${passkey.id}/verify`, { type: 'PASSKEY', assertion: magic });
    expectRefused(noRequestId, 401, 'UNAUTHORIZED', 'Invalid passkey signature');
  });
});

describe('revoking a credential', () => {
  it('needs a session of another credential and keeps the last one', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    expectRefused(await wallet.api.delete(`/auth/credentials/${email.credentialId}`), 400, 'LAST_CREDENTIAL');
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const passkey = (await signedRequest(wallet.api, 'POST', '/auth/credentials', passkeyBody(wallet.accountId, authenticator), email.key)).response.body;
    const passkeyKey = (await passkeySession(wallet.api, passkey.id, authenticator)).key;

    const ownSession = await signedRequest(wallet.api, 'DELETE', `/auth/credentials/${email.credentialId}`, undefined, email.key);
    expect(ownSession.challenge.body.type).toBe('EMAIL_OTP');
    expectRefused(ownSession.response, 401, 'UNAUTHORIZED', 'Invalid Grid-Wallet-Signature');

    const revoked = await signedRequest(wallet.api, 'DELETE', `/auth/credentials/${email.credentialId}`, undefined, passkeyKey);
    expect(revoked.response.status).toBe(204);
    expect((await wallet.api.get('/auth/credentials', { accountId: wallet.accountId })).body.data.map((c: any) => c.type)).toEqual(['PASSKEY']);
    // The revoked credential's sessions ended with it.
    expect((await wallet.api.get('/auth/sessions', { accountId: wallet.accountId })).body.data.map((s: any) => s.type)).toEqual(['PASSKEY']);
    expectRefused(await wallet.api.delete(`/auth/credentials/${passkey.id}`), 400, 'LAST_CREDENTIAL');
    expectRefused(await wallet.api.delete(`/auth/credentials/${email.credentialId}`), 404, 'NOT_FOUND');
  });
});

describe('a credential revoked while it opens a session', () => {
  /** A wallet with an EMAIL_OTP credential (and its session) and an OAUTH one. */
  async function twoCredentials() {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    const oauth = { type: 'OAUTH', accountId: wallet.accountId, oidcToken: unsignedGoogleToken() };
    const created = await signedRequest(wallet.api, 'POST', '/auth/credentials', oauth, email.key);
    expect(created.response.status).toBe(201);
    return { wallet, email, oauthId: created.response.body.id as string };
  }
  const verifyOauth = (wallet: { api: TestPlatform['api'] }, id: string, client = generateClientKeyPair()) =>
    wallet.api.post(`/auth/credentials/${id}/verify`, { type: 'OAUTH', oidcToken: 'sandbox-valid-oidc-token', clientPublicKey: client.publicKey });

  // PostgreSQL only: the revocation's transaction stays open while the verify runs, and PGlite has one connection.
  it.skipIf(!process.env.TEST_DATABASE_URL)('a verify racing the revocation waits for it and is refused: no session outlives the credential', async () => {
    const { wallet, oauthId } = await twoCredentials();
    const { db } = t.corridor.database;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let revoked!: () => void;
    const revoking = new Promise<void>((resolve) => (revoked = resolve));
    // The revocation's statements have run, not yet committed: its UPDATE of the sessions is done.
    const revocation = db.transaction().execute(async (trx) => {
      await revokeCredential(trx, oauthId, new Date());
      revoked();
      await released;
    });
    await revoking;
    const verify = verifyOauth(wallet, oauthId);
    const early = await Promise.race([verify, new Promise<null>((resolve) => setTimeout(() => resolve(null), 300))]);
    release();
    await revocation;
    expectRefused(early ?? (await verify), 404, 'NOT_FOUND');
    const left = await db.selectFrom('wallet_sessions').select('id').where('credential_id', '=', oauthId).where('revoked_at', 'is', null).execute();
    expect(left).toEqual([]);
  });

  it('a session whose credential is revoked is not active: not listed, and cannot sign', async () => {
    const { wallet, email, oauthId } = await twoCredentials();
    const client = generateClientKeyPair();
    const opened = await verifyOauth(wallet, oauthId, client);
    expect(opened.status).toBe(200);
    const key = await decryptSessionKey(opened.body.encryptedSessionSigningKey, client.privateKey);
    // As if a session had slipped past its credential's revocation.
    await t.corridor.database.db.updateTable('wallet_credentials').set({ revoked_at: new Date() }).where('id', '=', oauthId).execute();
    const listed = await wallet.api.get('/auth/sessions', { accountId: wallet.accountId });
    expect(listed.body.data.map((s: any) => s.id)).toEqual([email.id]);
    const exported = await signedRequest(wallet.api, 'POST', `/internal-accounts/${wallet.accountId}/export`, { clientPublicKey: generateClientKeyPair().publicKey }, key);
    expectRefused(exported.response, 401, 'UNAUTHORIZED', 'Invalid Grid-Wallet-Signature');
  });
});

describe('ids, tenancy and input', () => {
  it('names a bad accountId of the lists as the query-string field it is', async () => {
    for (const path of ['/auth/credentials', '/auth/sessions']) {
      const refused = await sandbox.api.get(path, { accountId: 'Customer:not-an-account' });
      expectRefused(refused, 400, 'INVALID_INPUT');
      expect(refused.body.details.errors[0]).toMatchObject({ field: 'querystring.accountId', constraint: 'format' });
    }
  });

  it('hides other platforms\' wallets and credentials', async () => {
    const wallet = await newWallet(sandbox);
    const email = await emailSession(t, wallet);
    expectRefused(await other.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId }), 404, 'NOT_FOUND');
    expect((await other.api.get('/auth/credentials', { accountId: wallet.accountId })).body).toEqual({ data: [] });
    expect((await other.api.get('/auth/sessions', { accountId: wallet.accountId })).body).toEqual({ data: [] });
    expectRefused(await other.api.post(`/auth/credentials/${email.credentialId}/challenge`, {}), 404, 'NOT_FOUND');
    expectRefused(await other.api.post(`/auth/credentials/${email.credentialId}/verify`, { type: 'EMAIL_OTP', otp: '000000', clientPublicKey: generateClientKeyPair().publicKey }), 404, 'NOT_FOUND');
    expectRefused(await other.api.delete(`/auth/sessions/${email.id}`), 404, 'NOT_FOUND');
    expectRefused(await other.api.post(`/internal-accounts/${wallet.accountId}/export`, { clientPublicKey: generateClientKeyPair().publicKey }), 404, 'NOT_FOUND');
  });

  it('validates bodies, account kinds and ids', async () => {
    const wallet = await newWallet(sandbox);
    const fiat = (await sandbox.api.get('/customers/internal-accounts', { customerId: wallet.customerId, type: 'INTERNAL_FIAT' })).body.data[0];
    expectRefused(await sandbox.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: fiat.id }), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.post('/auth/credentials', { type: 'SMS', accountId: wallet.accountId }), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId, extra: 1 }), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.get('/auth/credentials', { accountId: 'nope' }), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.get('/auth/sessions', {}), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.post('/auth/credentials/AuthMethod:0193a1b2-0000-7000-8000-000000000000/challenge', {}), 404, 'NOT_FOUND');
    expectRefused(await sandbox.api.delete('/auth/sessions/Session:0193a1b2-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    const { credentialId } = await emailSession(t, wallet);
    const notOnCurve = `04${'1'.repeat(128)}`;
    expectRefused(await sandbox.api.post(`/auth/credentials/${credentialId}/verify`, { type: 'EMAIL_OTP', otp: '000000', clientPublicKey: notOnCurve }), 400, 'INVALID_INPUT');
    expectRefused(await sandbox.api.post(`/auth/credentials/${credentialId}/verify`, { type: 'OAUTH', oidcToken: 'x.y.z', clientPublicKey: generateClientKeyPair().publicKey }), 400, 'INVALID_INPUT');
    expectRefused(await t.anonymous.get('/2025-10-13/auth/credentials', { accountId: wallet.accountId }), 401, 'UNAUTHORIZED');
  });
});
