import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { OidcIssuer } from '../../../test/support/oidc-issuer.js';
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
  walletPlatform,
} from '../../../test/support/wallets.js';
import { decryptWalletExport, generateClientKeyPair } from '../../wallet-client/index.js';

let t: TestApp;
let issuer: OidcIssuer;

// Debug level: request lines are logged too, so the check covers everything the server can log.
beforeAll(async () => {
  t = await startTestApp({ logLevel: 'debug' });
  issuer = await OidcIssuer.start();
});
afterAll(async () => {
  await t.close();
  await issuer.close();
});

describe('secrets in logs', () => {
  it('never logs codes (outside the development outbox), tokens, keys, mnemonics or client secrets', async () => {
    const tp = await walletPlatform(t, 'SANDBOX', { oidcIssuers: [{ issuer: issuer.issuer, audiences: ['corridor-test-client'] }] });
    const wallet = await newWallet(tp);
    const email = await emailSession(t, wallet);
    await wallet.api.post(`/auth/credentials/${email.credentialId}/challenge`, {});
    const code = latestCode(t, email.credentialId);
    const wrongCode = code === '999999' ? '888888' : '999999';
    expectRefused(
      await wallet.api.post(`/auth/credentials/${email.credentialId}/verify`, { type: 'EMAIL_OTP', otp: wrongCode, clientPublicKey: generateClientKeyPair().publicKey }),
      401,
      'UNAUTHORIZED',
    );
    const token = await issuer.token({ sub: 'log-user', email: 'log@example.com' });
    const oauth = await signedRequest(wallet.api, 'POST', '/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken: token }, email.key);
    expect(oauth.response.status).toBe(201);
    const authenticator = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const passkey = await signedRequest(wallet.api, 'POST', '/auth/credentials', passkeyBody(wallet.accountId, authenticator), email.key);
    const passkeyKey = (await passkeySession(wallet.api, passkey.response.body.id, authenticator)).key;
    const client = generateClientKeyPair();
    const exported = await signedRequest(wallet.api, 'POST', `/internal-accounts/${wallet.accountId}/export`, { clientPublicKey: client.publicKey }, passkeyKey);
    const mnemonic = await decryptWalletExport(exported.response.body.encryptedWalletCredentials, client.privateKey);

    const codes = t.corridor.services.wallets.outbox(tp.platform.id).map((e) => e.code);
    expect(codes.length).toBeGreaterThanOrEqual(2);
    const lines = t.logs.map((line) => JSON.parse(line));
    expect(lines.some((l) => l.req?.url?.includes('/auth/credentials'))).toBe(true);
    const secrets = [email.key.privateKey, passkeyKey.privateKey, client.privateKey, token, mnemonic.split(' ').slice(0, 3).join(' '), tp.credentials.clientSecret, `"${wrongCode}"`];
    for (const line of t.logs) for (const secret of secrets) expect(line).not.toContain(secret);
    // Codes are short: look for them as JSON strings, not inside timestamps.
    const carrying = lines.filter((l) => codes.some((c) => JSON.stringify(l).includes(`"${c}"`)));
    // A code appears only in the outbox line that carries it.
    expect(carrying.length).toBeGreaterThanOrEqual(codes.length);
    for (const line of carrying) expect(line.outbox).toBe('otp');
  });
});
