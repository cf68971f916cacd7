import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { balances, expectLedgerClean, usdAccount } from '../../../test/support/quotes.js';
import { smtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { emailSession, holdTransaction, newWallet, walletPlatform, walletQuote, type Wallet } from '../../../test/support/wallets.js';
import { revokeCredential } from '../wallets/repository.js';
import { buildStamp, signPayload } from '../../wallet-client/index.js';

let t: TestApp;
let sink: SmtpSink;

beforeAll(async () => {
  // Production codes are only ever emailed: they arrive at a loopback SMTP server.
  sink = await smtpSink();
  t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${sink.port}` });
});
afterAll(async () => {
  await t.close();
  sink.server.close();
});

async function fundedWalletQuote(tp: TestPlatform, wallet: Wallet, amount = 5_000) {
  await tp.api.post(`/sandbox/internal-accounts/${wallet.accountId}/fund`, { amount: 100_000 });
  return walletQuote(tp.api, '/quotes', wallet.accountId, await usdAccount(tp, wallet.customerId), amount);
}

/** A quote converting the wallet's USD into the same customer's EUR internal account (no payout rail). */
async function conversionQuote(tp: TestPlatform, wallet: Wallet) {
  const eur = await tp.api.get('/customers/internal-accounts', { customerId: wallet.customerId, currency: 'EUR', type: 'INTERNAL_FIAT' });
  const quote = await tp.api.post('/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: wallet.accountId },
    destination: { destinationType: 'ACCOUNT', accountId: eur.body.data[0].id },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 2_000,
  });
  expect(quote.status, JSON.stringify(quote.body)).toBe(201);
  return { quote: quote.body, payloadToSign: quote.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign as string };
}

describe('executing a quote from an embedded wallet', () => {
  it('sandbox: a session signature over payloadToSign executes it and the payout completes', async () => {
    const tp = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(tp);
    const session = await emailSession(t, wallet);
    const { quote, payloadToSign } = await fundedWalletQuote(tp, wallet);
    const executed = await tp.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': signPayload(payloadToSign, session.key) });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body.status).toBe('PROCESSING');
    expect(await balances(t, wallet.accountId)).toMatchObject({ available: 100_000 - quote.totalSendingAmount });
    await tp.api.post('/sandbox/clock/advance', { seconds: 5 });
    expect((await tp.api.get(`/quotes/${quote.id}`)).body.status).toBe('COMPLETED');
    await expectLedgerClean(t, tp.platform.id);
  });

  it('production: a real session signature executes a conversion; the sandbox magic value is refused', async () => {
    const tp = await walletPlatform(t, 'PRODUCTION');
    const wallet = await newWallet(tp);
    const session = await emailSession(t, wallet, sink);
    // Production has no sandbox funding: credit the wallet through the ledger as a deposit would.
    const source = await t.corridor.services.ledger.systemAccount(tp.platform.id, 'USD', 'RAIL_SETTLEMENT');
    await t.corridor.database.db.transaction().execute((trx) =>
      t.corridor.services.ledger.record(trx, tp.platform, [{ debit: source, credit: wallet.accountId, amount: 100_000, code: 'DEPOSIT' }]),
    );
    const { quote, payloadToSign } = await conversionQuote(tp, wallet);
    const magic = await tp.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': 'sandbox-valid-signature' });
    expect(magic.status).toBe(401);
    const executed = await tp.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': signPayload(payloadToSign, session.key) });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body.status).toBe('COMPLETED');
    expect(await balances(t, wallet.accountId)).toEqual({ available: 98_000, posted: 98_000 });
    await expectLedgerClean(t, tp.platform.id);
  });

  it('accepts an API-key stamp as well as a plain signature', async () => {
    const tp = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(tp);
    const session = await emailSession(t, wallet);
    const { quote, payloadToSign } = await fundedWalletQuote(tp, wallet);
    const executed = await tp.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': buildStamp(payloadToSign, session.key) });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
  });

  it('refuses a missing, wrong or foreign signature with 401 and moves nothing', async () => {
    const tp = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(tp);
    const session = await emailSession(t, wallet);
    const stranger = await newWallet(tp);
    const strangerSession = await emailSession(t, stranger);
    const { quote, payloadToSign } = await fundedWalletQuote(tp, wallet);

    const attempts: Record<string, string>[] = [
      {},
      { 'service-wallet-signature': 'not-a-signature' },
      { 'service-wallet-signature': signPayload(`${payloadToSign} `, session.key) },
      { 'service-wallet-signature': signPayload(payloadToSign, strangerSession.key) },
    ];
    for (const headers of attempts) {
      const refused = await tp.api.post(`/quotes/${quote.id}/execute`, undefined, headers);
      expect(refused.status, JSON.stringify(refused.body)).toBe(401);
      expect(refused.body.code).toBe('UNAUTHORIZED');
    }
    expect(await balances(t, wallet.accountId)).toMatchObject({ available: 100_000 });
    expect((await tp.api.get(`/quotes/${quote.id}`)).body.status).toBe('PENDING');
  });

  it('an expired session can no longer sign', async () => {
    const tp = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(tp);
    const session = await emailSession(t, wallet);
    await tp.api.post('/sandbox/clock/advance', { seconds: 16 * 60 }); // sessions last 15 minutes
    const { quote, payloadToSign } = await fundedWalletQuote(tp, wallet);
    const stale = await tp.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': signPayload(payloadToSign, session.key) });
    expect(stale.status).toBe(401);
    expect((await tp.api.get(`/quotes/${quote.id}`)).body.status).toBe('PENDING');
  });

  // PostgreSQL only: the revocation's transaction stays open while the execution runs, and PGlite has one connection.
  it.skipIf(!process.env.TEST_DATABASE_URL)('a session revoked while the execution is under way cannot have signed it', async () => {
    const tp = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(tp);
    const session = await emailSession(t, wallet);
    const { quote, payloadToSign } = await fundedWalletQuote(tp, wallet);
    // The revocation of the session's credential, not yet committed: the signature still checks.
    const held = await holdTransaction(t, (trx) => revokeCredential(trx, session.credentialId, new Date()));
    const executed = tp.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': signPayload(payloadToSign, session.key) });
    expect(await Promise.race([executed.then(() => false), held.waiters(1)])).toBe(true);
    await held.release();
    expect((await executed).status).toBe(401);
    expect((await tp.api.get(`/quotes/${quote.id}`)).body.status).toBe('PENDING');
    expect(await balances(t, wallet.accountId)).toMatchObject({ available: 100_000 });
  });

  it('sandbox platforms accept the magic signature', async () => {
    const sandbox = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(sandbox);
    await emailSession(t, wallet);
    const { quote } = await fundedWalletQuote(sandbox, wallet);
    const executed = await sandbox.api.post(`/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': 'sandbox-valid-signature' });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
  });

  it('immediatelyExecute is refused for embedded-wallet sources', async () => {
    const tp = await walletPlatform(t, 'SANDBOX');
    const wallet = await newWallet(tp);
    const destination = await usdAccount(tp, wallet.customerId);
    const refused = await tp.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: wallet.accountId },
      destination: { destinationType: 'ACCOUNT', accountId: destination },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
      immediatelyExecute: true,
    });
    expect(refused.status).toBe(400);
  });
});
