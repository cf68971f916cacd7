import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { OidcIssuer } from '../../../test/support/oidc-issuer.js';
import { smtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { SoftwareAuthenticator } from '../../../test/support/webauthn-authenticator.js';
import {
  emailSession,
  expectRefused,
  newWallet,
  ORIGIN,
  passkeyBody,
  passkeySession,
  RP_ID,
  signedRequest,
  walletPlatform,
} from '../../../test/support/wallets.js';
import { decryptSessionKey, generateClientKeyPair } from '../../wallet-client/index.js';

let t: TestApp;
let issuer: OidcIssuer;
let production: TestPlatform;
let sink: SmtpSink;
const AUDIENCE = 'corridor-test-client';
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  // The test issuer runs on loopback, which production platforms may use only with this switch.
  // Production codes are only ever emailed: they arrive at a loopback SMTP server.
  sink = await smtpSink();
  t = await startTestApp({ oidcAllowPrivateIssuers: true, smtpUrl: `smtp://127.0.0.1:${sink.port}` });
  issuer = await OidcIssuer.start();
  production = await walletPlatform(t, 'PRODUCTION', {
    passkey: { rpId: RP_ID, rpName: 'Wallet Test', origins: [ORIGIN] },
    oidcIssuers: [{ issuer: issuer.issuer, audiences: [AUDIENCE] }],
  });
});
afterAll(async () => {
  await t.close();
  await issuer.close();
  sink.server.close();
});

describe('production EMAIL_OTP', () => {
  it('opens a session with the emailed code, once', async () => {
    const wallet = await newWallet(production);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    const code = sink.latestCode(wallet.email);
    const body = (otp: string) => ({ type: 'EMAIL_OTP', otp, clientPublicKey: generateClientKeyPair().publicKey });
    expectRefused(await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, body('000000')), 401, 'UNAUTHORIZED', 'Invalid OTP code');
    expect((await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, body(code))).status).toBe(200);
    expectRefused(await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, body(code)), 401, 'UNAUTHORIZED', 'Invalid OTP code');
  });

  it('burns the code after five wrong tries', async () => {
    const wallet = await newWallet(production);
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    const code = sink.latestCode(wallet.email);
    const wrong = code === '111111' ? '222222' : '111111';
    for (let i = 0; i < 5; i++) {
      const res = await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'EMAIL_OTP', otp: wrong, clientPublicKey: generateClientKeyPair().publicKey });
      expectRefused(res, 401, 'UNAUTHORIZED', 'Invalid OTP code');
    }
    const late = await wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'EMAIL_OTP', otp: code, clientPublicKey: generateClientKeyPair().publicKey });
    expectRefused(late, 401, 'UNAUTHORIZED', 'Invalid OTP code');
    expect(late.body.message).toMatch(/no code is pending/);
  });
});

describe('production OAUTH', () => {
  it('binds the credential to (iss, aud, sub) and verifies fresh tokens', async () => {
    const wallet = await newWallet(production);
    const created = await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: await issuer.token({ sub: 'alice', email: 'alice@example.com' }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.nickname).toBe('alice@example.com');
    const client = generateClientKeyPair();
    const verify = (oidcToken: string, clientPublicKey = client.publicKey) => wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'OAUTH', oidcToken, clientPublicKey });
    const ok = await verify(await issuer.token({ sub: 'alice' }));
    expect(ok.status).toBe(200);
    expect((await decryptSessionKey(ok.body.encryptedSessionSigningKey, client.privateKey)).publicKey).toMatch(/^0[23]/);

    const reason = 'Invalid OIDC token';
    expectRefused(await verify('sandbox-valid-oidc-token'), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(await issuer.token({ sub: 'alice', iat: now() - 120 })), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(await issuer.token({ sub: 'mallory' })), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(await issuer.token({ sub: 'alice', aud: 'another-client' })), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(await issuer.token({ sub: 'alice' }, await OidcIssuer.foreignKey())), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(await issuer.token({ sub: 'alice', iss: 'https://accounts.google.com' })), 401, 'UNAUTHORIZED', reason);
  });

  it('matches a token with several audiences by any configured one, whatever their order in the token', async () => {
    const two = await walletPlatform(t, 'PRODUCTION', { oidcIssuers: [{ issuer: issuer.issuer, audiences: ['client-a', 'client-b'] }] });
    const wallet = await newWallet(two);
    const created = await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: await issuer.token({ sub: 'ann', aud: 'client-b' }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const verify = async (aud: string | string[]) =>
      wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'OAUTH', oidcToken: await issuer.token({ sub: 'ann', aud }), clientPublicKey: generateClientKeyPair().publicKey });
    expect((await verify(['client-a', 'client-b'])).status).toBe(200);
    expect((await verify(['client-b', 'client-a'])).status).toBe(200);
    expectRefused(await verify('client-a'), 401, 'UNAUTHORIZED', 'Invalid OIDC token');
  });

  it('refuses stale tokens and unlisted issuers on create', async () => {
    const wallet = await newWallet(production);
    const stale = await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: await issuer.token({ iat: now() - 61 - 5 }) });
    expectRefused(stale, 401, 'UNAUTHORIZED', 'Invalid OIDC token');
    const google = await wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: await issuer.token({ iss: 'https://accounts.google.com' }) });
    expectRefused(google, 400, 'INVALID_INPUT');
  });
});

describe('production PASSKEY', () => {
  it('registers and authenticates a real passkey, moving its counter, refusing replays', async () => {
    const wallet = await newWallet(production);
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const created = await wallet.api.post('/auth/credentials', passkeyBody(wallet.accountId, authenticator, 'Phone'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await passkeySession(wallet.api, created.body.id, authenticator);

    const client = generateClientKeyPair();
    const challenged = await wallet.api.post(`/auth/credentials/${created.body.id}/challenge`, { clientPublicKey: client.publicKey });
    expect(challenged.body).toMatchObject({ id: created.body.id, type: 'PASSKEY', challenge: expect.any(String), requestId: expect.any(String), expiresAt: expect.any(String) });
    const assertion = authenticator.assert(challenged.body.challenge);
    const verify = (a: object, requestId = challenged.body.requestId) =>
      wallet.api.post(`/auth/credentials/${created.body.id}/verify`, { type: 'PASSKEY', assertion: a }, { 'request-id': requestId });
    const reason = 'Invalid passkey signature';
    expectRefused(await verify({ ...assertion, signature: 'sandbox-valid-passkey-signature' }), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(authenticator.assert(challenged.body.challenge, { origin: 'https://evil.test' })), 401, 'UNAUTHORIZED', reason);
    expectRefused(await verify(authenticator.assert('d3JvbmctY2hhbGxlbmdl')), 401, 'UNAUTHORIZED', reason);
    const ok = await verify(assertion);
    expect(ok.status).toBe(200);
    expect((await decryptSessionKey(ok.body.encryptedSessionSigningKey, client.privateKey)).privateKey).toHaveLength(64);
    // The same assertion again: its request id is used up.
    expectRefused(await verify(assertion), 401, 'UNAUTHORIZED', reason);
    // An old counter on a fresh challenge: a cloned authenticator.
    const fresh = await wallet.api.post(`/auth/credentials/${created.body.id}/challenge`, { clientPublicKey: client.publicKey });
    expectRefused(await verify(authenticator.assert(fresh.body.challenge, { counter: 1 }), fresh.body.requestId), 401, 'UNAUTHORIZED', reason);
  });

  it('requires the relying party settings and a valid origin', async () => {
    const bare = await walletPlatform(t, 'PRODUCTION');
    const wallet = await newWallet(bare);
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    expectRefused(await wallet.api.post('/auth/credentials', passkeyBody(wallet.accountId, authenticator)), 400, 'INVALID_INPUT');
    const elsewhere = new SoftwareAuthenticator({ rpId: RP_ID, origin: 'https://evil.test' });
    const onProduction = await newWallet(production);
    expectRefused(await onProduction.api.post('/auth/credentials', passkeyBody(onProduction.accountId, elsewhere)), 400, 'INVALID_INPUT');
  });

  it('refuses the sandbox signature on signed retries', async () => {
    const wallet = await newWallet(production);
    const email = await emailSession(t, wallet, sink);
    const body = passkeyBody(wallet.accountId, new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN }));
    const challenge = await wallet.api.post('/auth/credentials', body);
    expect(challenge.status).toBe(202);
    const magic = await wallet.api.post('/auth/credentials', body, { 'service-wallet-signature': 'sandbox-valid-signature', 'request-id': challenge.body.requestId });
    expectRefused(magic, 401, 'UNAUTHORIZED', 'Invalid Grid-Wallet-Signature');
    expect((await signedRequest(wallet.api, 'POST', '/auth/credentials', body, email.key)).response.status).toBe(201);
  });
});
