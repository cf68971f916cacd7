import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, expectError, expectLedgerClean, legsOf, newCustomer, transactionEvents, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let alice: TestCustomer;
let payout: string;

const P = 'OUTGOING_PAYMENT.';

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform({ currencies: ['USD', 'EUR', 'BTC'] });
  alice = await newCustomer(p, 'Alice Ng');
  payout = await usdAccount(p, alice.id, '001');
});
afterAll(() => t.close());

async function realtimeQuote(currency = 'EUR', destination = payout, extra: Record<string, unknown> = {}) {
  const res = await p.api.post('/quotes', {
    source: { sourceType: 'REALTIME_FUNDING', customerId: alice.id, currency },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'RECEIVING',
    lockedCurrencyAmount: 10_000,
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('REALTIME_FUNDING quotes', () => {
  it('return bank details with a unique reference for fiat', async () => {
    const q = await realtimeQuote('USD', alice.accounts.EUR);
    const other = await realtimeQuote('USD', alice.accounts.EUR);
    expect(q.source).toEqual({ sourceType: 'REALTIME_FUNDING', customerId: alice.id, currency: 'USD' });
    expect(q.paymentInstructions).toHaveLength(1);
    const [instruction] = q.paymentInstructions;
    expect(instruction.accountOrWalletInfo).toMatchObject({
      accountType: 'USD_ACCOUNT',
      paymentRails: ['RTP', 'FEDNOW'],
      accountNumber: expect.stringMatching(/^\d{12}$/),
      routingNumber: expect.stringMatching(/^\d{9}$/),
      bankName: expect.any(String),
      reference: expect.stringMatching(/^CR[0-9A-Z]{12}$/),
    });
    expect(instruction.instructionsNotes).toContain(String(q.totalSendingAmount));
    expect(other.paymentInstructions[0].accountOrWalletInfo.reference).not.toBe(instruction.accountOrWalletInfo.reference);
    const tx = (await p.api.get(`/transactions/${q.transactionId}`)).body;
    expect(tx.paymentInstructions).toEqual(q.paymentInstructions);
    expect(tx.source).toEqual({ sourceType: 'REALTIME_FUNDING', customerId: alice.id, currency: 'USD' });
  });

  it('return a Spark address and a Lightning invoice for BTC', async () => {
    // A new platform's BTC minimum is one whole bitcoin.
    const q = await realtimeQuote('BTC', payout, { lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 100_000_000 });
    const info = q.paymentInstructions[0].accountOrWalletInfo;
    expect(info).toMatchObject({ accountType: 'SPARK_WALLET', assetType: 'BTC', address: expect.stringMatching(/^sprt1/) });
    expect(info.invoice).toMatch(new RegExp(`^lnbcrt${q.totalSendingAmount * 10}n1p[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$`));
  });

  it('return a deposit address on the network a stablecoin payer names, which is required', async () => {
    const crypto = await t.createPlatform({ currencies: ['USD', 'USDC', 'USDT'] });
    const carol = await newCustomer(crypto, 'Carol Chain');
    const to = await usdAccount(crypto, carol.id, '001');
    const quote = (currency: string, cryptoNetwork?: string) =>
      crypto.api.post('/quotes', {
        source: { sourceType: 'REALTIME_FUNDING', customerId: carol.id, currency, ...(cryptoNetwork && { cryptoNetwork }) },
        destination: { destinationType: 'ACCOUNT', accountId: to },
        lockedCurrencySide: 'RECEIVING',
        lockedCurrencyAmount: 10_000,
      });
    const wallets = [
      ['USDC', 'SOLANA_MAINNET', 'SOLANA_WALLET', /^[1-9A-HJ-NP-Za-km-z]{32,44}$/],
      ['USDC', 'BASE_MAINNET', 'BASE_WALLET', /^0x[0-9a-f]{40}$/],
      ['USDC', 'ETHEREUM_TESTNET', 'ETHEREUM_WALLET', /^0x[0-9a-f]{40}$/],
      ['USDT', 'SOLANA_DEVNET', 'SOLANA_WALLET', /^[1-9A-HJ-NP-Za-km-z]{32,44}$/],
    ] as const;
    for (const [currency, network, accountType, address] of wallets) {
      const res = await quote(currency, network);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.source).toMatchObject({ currency, cryptoNetwork: network });
      const info = res.body.paymentInstructions[0].accountOrWalletInfo;
      expect(info).toMatchObject({ accountType, assetType: currency, address: expect.stringMatching(address) });
      expect(info.invoice, 'a Lightning invoice is for bitcoin only').toBeUndefined();
    }
    expectError(await quote('USDC'), 400, 'INVALID_INPUT', 'source.cryptoNetwork', 'required');
    expectError(await quote('USDC', 'NOT_A_NETWORK'), 400, 'INVALID_INPUT', 'source.cryptoNetwork', 'enum');
    expectError(await quote('USDT', 'BASE_MAINNET'), 400, 'INVALID_INPUT', 'source.cryptoNetwork', 'enum');
    expectError(await quote('USDC', 'SPARK_MAINNET'), 400, 'INVALID_INPUT', 'source.cryptoNetwork', 'enum');
    expectError(await quote('USD', 'SOLANA_MAINNET'), 400, 'INVALID_INPUT', 'source.cryptoNetwork', 'enum');
  });

  it('exact payment: the quote executes and pays out like any other', async () => {
    const q = await realtimeQuote();
    const sent = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR', currencyAmount: q.totalSendingAmount });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ id: q.transactionId, type: 'OUTGOING', status: 'PROCESSING', quoteId: q.id });
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('PROCESSING');
    await advance(p, 2);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('COMPLETED');
    expect(await transactionEvents(t, p.platform.id, q.transactionId)).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`]);
    const legs = await legsOf(t, p.platform.id, q.transactionId);
    expect(legs.map((l) => l.state)).toEqual(['POSTED', 'POSTED', 'POSTED']);
    expect(legs[0].debit_account_id).toContain(':EUR:SANDBOX_FUNDING');
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' }), 409, 'QUOTE_ALREADY_EXECUTED');
    await expectLedgerClean(t, p.platform.id);
  });

  it('without currencyAmount the quoted amount is sent; immediatelyExecute is accepted', async () => {
    const q = await realtimeQuote('EUR', payout, { immediatelyExecute: true });
    expect(q.status).toBe('PENDING');
    const sent = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' });
    expect(sent.body.status).toBe('PROCESSING');
  });

  /** The funding payment went back to the payer: the quote and its transaction failed, nothing was booked. */
  async function expectReturned(q: { id: string; transactionId: string }, sent: ApiResponse, failure: Record<string, string>) {
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'FAILED', ...failure, refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' } });
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('FAILED');
    expect(await transactionEvents(t, p.platform.id, q.transactionId)).toEqual([`${P}PENDING`, `${P}FAILED`, `${P}REFUND_COMPLETED`]);
    expect(await legsOf(t, p.platform.id, q.transactionId)).toEqual([]);
  }

  it('wrong amount: the payment is returned and the transaction fails with FUNDING_AMOUNT_MISMATCH', async () => {
    const q = await realtimeQuote();
    const sent = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR', currencyAmount: q.totalSendingAmount - 1 });
    await expectReturned(q, sent, { failureReason: 'FUNDING_AMOUNT_MISMATCH' });
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' }), 409, 'QUOTE_ALREADY_EXECUTED');
  });

  it('funds for a quote whose external account was deleted since are returned: the transaction fails, nothing is booked', async () => {
    const doomed = await usdAccount(p, alice.id, '001');
    const q = await realtimeQuote('EUR', doomed);
    expect((await p.api.delete(`/customers/external-accounts/${doomed}`)).status).toBe(204);
    const sent = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' });
    await expectReturned(q, sent, { failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'ACCOUNT_CLOSED' });
    await expectLedgerClean(t, p.platform.id);
  });

  it('a payout that fails at once (002) releases everything and returns the funding payment to the payer', async () => {
    const failing = await usdAccount(p, alice.id, '002');
    const q = await realtimeQuote('EUR', failing);
    const sent = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' });
    expect(sent.body).toMatchObject({
      status: 'FAILED',
      failureReason: 'QUOTE_EXECUTION_FAILED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED', settledAt: expect.any(String) },
    });
    expect(await transactionEvents(t, p.platform.id, q.transactionId)).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}FAILED`, `${P}REFUND_COMPLETED`]);
    expect((await legsOf(t, p.platform.id, q.transactionId)).map((l) => l.state)).toEqual(['VOIDED', 'VOIDED', 'VOIDED']);
    await expectLedgerClean(t, p.platform.id);
  });

  it('expired quote: 409 QUOTE_EXPIRED', async () => {
    const q = await realtimeQuote();
    await advance(p, 301);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('EXPIRED');
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' }), 409, 'QUOTE_EXPIRED');
  });

  it('bad requests', async () => {
    const q = await realtimeQuote();
    const wrongCurrency = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'USD' });
    expectError(wrongCurrency, 400, 'INVALID_CURRENCY');
    expect(wrongCurrency.body.details.errors[0].field).toBe('currencyCode');
    expectError(await p.api.post('/sandbox/send', { currencyCode: 'EUR' }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR', tip: 1 }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR', currencyAmount: 0 }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/send', { quoteId: 'Quote:nope', currencyCode: 'EUR' }), 404, 'QUOTE_NOT_FOUND');
    const other = await t.createPlatform();
    expectError(await other.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' }), 404, 'QUOTE_NOT_FOUND');
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    expectError(await production.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' }), 403, 'SANDBOX_ONLY');

    const funded = await p.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.EUR },
      destination: { destinationType: 'ACCOUNT', accountId: payout },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    const notRealtime = await p.api.post('/sandbox/send', { quoteId: funded.body.id, currencyCode: 'EUR' });
    expectError(notRealtime, 400, 'INVALID_INPUT');
    expect(notRealtime.body.details.errors[0].field).toBe('quoteId');
  });

  it('an unknown customer is 404, an unsupported currency 400', async () => {
    const unknown = await p.api.post('/quotes', {
      source: { sourceType: 'REALTIME_FUNDING', customerId: 'Customer:nope', currency: 'EUR' },
      destination: { destinationType: 'ACCOUNT', accountId: payout },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expectError(unknown, 404, 'USER_NOT_FOUND');
    const unsupported = await p.api.post('/quotes', {
      source: { sourceType: 'REALTIME_FUNDING', currency: 'GBP' },
      destination: { destinationType: 'ACCOUNT', accountId: payout },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expectError(unsupported, 400, 'INVALID_CURRENCY');
    expect(unsupported.body.details.errors[0].field).toBe('source.currency');
  });
});
