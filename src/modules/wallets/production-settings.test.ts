import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp } from '../../../test/support/app.js';
import { smtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import type { ApiResponse } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/quotes.js';
import { newWallet, walletPlatform } from '../../../test/support/wallets.js';

// What a production platform refuses when the operator left a development setting in place. Each
// server here shares the test database, so one can make what another is then asked to use.
let sink: SmtpSink;
let withSmtp: TestApp;
let withoutSmtp: TestApp;
let withoutWalletKey: TestApp;

beforeAll(async () => {
  sink = await smtpSink();
  withSmtp = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${sink.port}` });
  withoutSmtp = await startTestApp({ smtpUrl: undefined });
  withoutWalletKey = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, walletEncryptionKey: undefined });
});
afterAll(async () => {
  await Promise.all([withSmtp.close(), withoutSmtp.close(), withoutWalletKey.close()]);
  sink.server.close();
});

function refused(res: ApiResponse, status: number, code: string, message: string): void {
  expectError(res, status, code);
  expect(res.body.message).toBe(message);
}

const NO_SMTP = 'this server has no SMTP_URL, so it cannot email one-time passwords for production platforms; the operator must set it';
const NO_WALLET_KEY = 'this server has no WALLET_ENCRYPTION_KEY: production secrets are not made with the development key, which anyone can read; the operator must set it';

describe('without SMTP_URL', () => {
  it('refuses a production EMAIL_OTP credential before making it, and logs no code', async () => {
    const wallet = await newWallet(await walletPlatform(withoutSmtp, 'PRODUCTION'));
    refused(await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId }), 503, 'SERVICE_UNAVAILABLE', NO_SMTP);
    expect((await wallet.api.get('/auth/credentials', { accountId: wallet.accountId })).body.data).toEqual([]);
    expect(withoutSmtp.corridor.services.wallets.outbox(wallet.tp.platform.id)).toEqual([]);
    expect(withoutSmtp.logs.filter((line) => line.includes('development outbox'))).toEqual([]);
  });

  it('refuses to issue a new code for a production credential made while it was set', async () => {
    const wallet = await newWallet(await walletPlatform(withSmtp, 'PRODUCTION'));
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(created.status).toBe(201);
    const sameTenantElsewhere = apiClient(withoutSmtp.corridor, wallet.tp.credentials);
    refused(await sameTenantElsewhere.post(`/auth/credentials/${created.body.id}/challenge`, {}), 503, 'SERVICE_UNAVAILABLE', NO_SMTP);
    expect((await wallet.api.post(`/auth/credentials/${created.body.id}/challenge`, {})).status).toBe(200);
  });

  it('keeps sandbox codes in the development outbox', async () => {
    const wallet = await newWallet(await walletPlatform(withoutSmtp, 'SANDBOX'));
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(created.status).toBe(201);
    expect(withoutSmtp.corridor.services.wallets.outbox(wallet.tp.platform.id)[0]).toMatchObject({ credentialId: created.body.id });
  });
});

describe('without WALLET_ENCRYPTION_KEY', () => {
  it('refuses a new production wallet its secret (so its first credential), and sends no code', async () => {
    const wallet = await newWallet(await walletPlatform(withoutWalletKey, 'PRODUCTION'));
    const before = sink.messages.length;
    refused(await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId }), 503, 'SERVICE_UNAVAILABLE', NO_WALLET_KEY);
    expect((await wallet.api.get('/auth/credentials', { accountId: wallet.accountId })).body.data).toEqual([]);
    expect(sink.messages.length).toBe(before);
  });

  it('still makes sandbox wallets, with the development key', async () => {
    const wallet = await newWallet(await walletPlatform(withoutWalletKey, 'SANDBOX'));
    expect((await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId })).status).toBe(201);
  });

  it('refuses a production platform a new UMA signing key until the key is set', async () => {
    const pubkey = async (t: TestApp) => {
      const tp = await t.createPlatform({ mode: 'PRODUCTION' });
      const umaDomain = `${tp.platform.id.slice(-12)}.example.com`;
      expect((await tp.api.patch('/config', { umaDomain })).status).toBe(200);
      const res = await t.corridor.app.inject({ method: 'GET', url: '/.well-known/lnurlpubkey', headers: { host: umaDomain } });
      return { status: res.statusCode, body: res.json() };
    };
    expect(await pubkey(withoutWalletKey)).toMatchObject({ status: 503, body: { status: 'ERROR', code: 'SERVICE_UNAVAILABLE', reason: NO_WALLET_KEY } });
    expect((await pubkey(withSmtp)).status).toBe(200);
  });
});
