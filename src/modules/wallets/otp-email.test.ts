import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { smtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { expectRefused, newWallet, verifyEmail, walletPlatform } from '../../../test/support/wallets.js';
import { ConfigError, loadConfig } from '../../config.js';

let t: TestApp;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await smtpSink();
  t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, smtpFrom: 'Wallets <wallets@example.com>' });
});
afterAll(async () => {
  await t.close();
  sink.server.close();
});

describe('one-time passwords by SMTP', () => {
  it('emails the code on production platforms, never logging it', async () => {
    const wallet = await newWallet(await walletPlatform(t, 'PRODUCTION'));
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(created.status).toBe(201);
    expect(sink.messages.find((m) => m.includes(wallet.email))).toMatch(/From: Wallets <wallets@example.com>/);
    const code = sink.latestCode(wallet.email);
    expect(t.corridor.services.wallets.outbox(wallet.tp.platform.id)).toEqual([]);
    expect((await verifyEmail(t, wallet.api, created.body.id, code)).response.status).toBe(200);
    for (const line of t.logs) expect(line).not.toContain(`"${code}"`);
  });

  it('keeps sandbox codes in the development outbox', async () => {
    const wallet = await newWallet(await walletPlatform(t, 'SANDBOX'));
    const before = sink.messages.length;
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(sink.messages.length).toBe(before);
    expect(t.corridor.services.wallets.outbox(wallet.tp.platform.id)[0]).toMatchObject({ credentialId: created.body.id, to: wallet.email });
    expectRefused(await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId }), 400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS');
  });
});

describe('wallet configuration variables', () => {
  it('reads and checks them', () => {
    const config = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', SMTP_FROM: 'a@example.com', SESSION_LIFETIME_SECONDS: '600', WALLET_ENCRYPTION_KEY: 'AB'.repeat(32) });
    expect(config).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example.com:465', smtpFrom: 'a@example.com', sessionLifetimeSeconds: 600, walletEncryptionKey: 'ab'.repeat(32) });
    expect(loadConfig({})).toMatchObject({ sessionLifetimeSeconds: 900, smtpUrl: undefined, walletEncryptionKey: undefined });
    for (const [env, variable] of [
      [{ SMTP_URL: 'http://mail' }, 'SMTP_URL'],
      [{ SMTP_FROM: 'not an address' }, 'SMTP_FROM'],
      [{ SESSION_LIFETIME_SECONDS: '10' }, 'SESSION_LIFETIME_SECONDS'],
      [{ WALLET_ENCRYPTION_KEY: 'abc' }, 'WALLET_ENCRYPTION_KEY'],
    ] as const) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(variable);
    }
  });
});
