import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, balances, expectError, expectLedgerClean, fund, legsOf, newCustomer, transactionEvents, type TestCustomer } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let other: TestPlatform;
let alice: TestCustomer;

const SANDBOX = 'sandbox.uma.money';
const lookup = (address: string, query: Record<string, string> = { customerId: alice.id }, platform = p) =>
  platform.api.get(`/receiver/uma/${encodeURIComponent(address)}`, query);

async function umaQuote(address: string, extra: Record<string, unknown> = {}) {
  const found = await lookup(address);
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  return p.api.post('/quotes', {
    lookupId: found.body.lookupId,
    source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: address },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000,
    ...extra,
  });
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  other = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Ng');
  await fund(p, alice.accounts.USD, 10_000_000);
});
afterAll(() => t.close());

describe('GET /receiver/uma/{address} on the sandbox domain', () => {
  it('describes $success.usd: currency, estimated rate, limits and the payer fields it requires', async () => {
    const res = await lookup(`$success.usd@${SANDBOX}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      lookupId: expect.stringMatching(/^Lookup:/),
      receiverUmaAddress: `$success.usd@${SANDBOX}`,
      supportedCurrencies: [{ currency: { code: 'USD', name: expect.any(String), symbol: '$', decimals: 2 }, estimatedExchangeRate: 1, min: 1, max: 100_000_000 }],
      requiredPayerDataFields: [
        { name: 'FULL_NAME', mandatory: true },
        { name: 'BIRTH_DATE', mandatory: false },
        { name: 'NATIONALITY', mandatory: false },
      ],
    });
  });

  it('refuses bad addresses, a missing sender and unknown or foreign customers with the exact envelope', async () => {
    for (const address of ['success.usd', '$a@c.com:99999', '$a@b..c']) {
      const bad = await lookup(address);
      expectError(bad, 400, 'INVALID_UMA_ADDRESS');
      expect(bad.body.details.errors).toEqual([{ field: 'receiverUmaAddress', constraint: 'format', message: expect.any(String) }]);
    }
    const neither = await lookup(`$success.usd@${SANDBOX}`, {});
    expectError(neither, 400, 'INVALID_INPUT');
    expect(neither.body.details.errors[0].field).toBe('querystring.customerId');
    const badSender = await lookup(`$success.usd@${SANDBOX}`, { senderUmaAddress: 'alice' });
    expectError(badSender, 400, 'INVALID_UMA_ADDRESS');
    expect(badSender.body.details.errors[0].field).toBe('querystring.senderUmaAddress');
    expectError(await lookup(`$success.usd@${SANDBOX}`, { customerId: 'Customer:00000000-0000-7000-8000-000000000000' }), 404, 'USER_NOT_FOUND');
    expectError(await lookup(`$success.usd@${SANDBOX}`, { customerId: alice.id }, other), 404, 'USER_NOT_FOUND');
    expectError(await lookup(`$nobody@${SANDBOX}`), 404, 'USER_NOT_FOUND');
  });

  it('needs credentials', async () => {
    const res = await t.anonymous.get(`/receiver/uma/${encodeURIComponent(`$success.usd@${SANDBOX}`)}`, { customerId: alice.id });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});

describe('paying sandbox UMA addresses', () => {
  it.each([
    ['usd', 'USD'],
    ['eur', 'EUR'],
    ['mxn', 'MXN'],
  ])('$success.%s completes at once, held funds posted to UMA_SETTLEMENT', async (suffix, code) => {
    const before = await balances(t, alice.accounts.USD);
    const q = await umaQuote(`$success.${suffix}@${SANDBOX}`);
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expect(q.body).toMatchObject({
      status: 'PENDING',
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$success.${suffix}@${SANDBOX}`, currency: code },
      receivingCurrency: { code },
      totalSendingAmount: 10_000,
    });
    const executed = await p.api.post(`/quotes/${q.body.id}/execute`);
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body.status).toBe('COMPLETED');
    const tx = (await p.api.get(`/transactions/${q.body.transactionId}`)).body;
    expect(tx).toMatchObject({ status: 'COMPLETED', type: 'OUTGOING', destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$success.${suffix}@${SANDBOX}` } });
    expect((await balances(t, alice.accounts.USD)).available).toBe(before.available - 10_000);
    const settlement = await t.corridor.services.ledger.systemAccount(p.platform.id, code, 'UMA_SETTLEMENT');
    const legs = await legsOf(t, p.platform.id, q.body.transactionId);
    expect(legs.find((l: any) => l.credit_account_id === settlement)).toMatchObject({ amount: q.body.totalReceivingAmount, state: 'POSTED' });
    expect(await transactionEvents(t, p.platform.id, q.body.transactionId)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED']);
  });

  it('locks the receiving side too: the receiver gets exactly lockedCurrencyAmount', async () => {
    const q = await umaQuote(`$success.eur@${SANDBOX}`, { lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 5_000, destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$success.eur@${SANDBOX}`, currency: 'EUR' } });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expect(q.body.totalReceivingAmount).toBe(5_000);
    expect(q.body.totalSendingAmount).toBeGreaterThan(5_000);
  });

  it('$pending.long.usd stays PROCESSING for an hour of platform time, then completes', async () => {
    const q = await umaQuote(`$pending.long.usd@${SANDBOX}`);
    const executed = await p.api.post(`/quotes/${q.body.id}/execute`);
    expect(executed.body.status).toBe('PROCESSING');
    await advance(p, 30 * 60);
    expect((await p.api.get(`/quotes/${q.body.id}`)).body.status).toBe('PROCESSING');
    await advance(p, 30 * 60);
    expect((await p.api.get(`/quotes/${q.body.id}`)).body.status).toBe('COMPLETED');
    expect((await p.api.get(`/transactions/${q.body.transactionId}`)).body.status).toBe('COMPLETED');
  });

  it('$fail.compliance.usd fails (QUOTE_EXECUTION_FAILED, COMPLIANCE_FAILED) and gives everything back', async () => {
    const before = await balances(t, alice.accounts.USD);
    const q = await umaQuote(`$fail.compliance.usd@${SANDBOX}`);
    const executed = await p.api.post(`/quotes/${q.body.id}/execute`);
    expect(executed.body.status).toBe('FAILED');
    const tx = (await p.api.get(`/transactions/${q.body.transactionId}`)).body;
    expect(tx).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'COMPLIANCE_FAILED' });
    expect(tx.refund).toBeUndefined();
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
    expect(await transactionEvents(t, p.platform.id, q.body.transactionId)).toContain('OUTGOING_PAYMENT.FAILED');
  });

  it('keeps the ledger balanced', async () => {
    await expectLedgerClean(t, p.platform.id);
  });
});

describe('quotes to UMA_ADDRESS destinations: bad inputs', () => {
  const destination = { destinationType: 'UMA_ADDRESS', umaAddress: `$success.usd@${SANDBOX}` };
  const base = () => ({ source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD }, destination, lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 1_000 });

  it('needs a lookupId', async () => {
    const res = await p.api.post('/quotes', base());
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors).toEqual([{ field: 'lookupId', constraint: 'required', message: expect.any(String) }]);
  });

  it('refuses a lookup of another receiver, an unknown or expired lookup, and a currency the receiver does not take', async () => {
    const eur = (await lookup(`$success.eur@${SANDBOX}`)).body.lookupId;
    const mismatch = await p.api.post('/quotes', { ...base(), lookupId: eur });
    expectError(mismatch, 400, 'INVALID_INPUT');
    expect(mismatch.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'mismatch' });
    expectError(await p.api.post('/quotes', { ...base(), lookupId: 'Lookup:00000000-0000-7000-8000-000000000000' }), 404, 'LOOKUP_REQUEST_NOT_FOUND');
    const usd = (await lookup(`$success.usd@${SANDBOX}`)).body.lookupId;
    const wrongCurrency = await p.api.post('/quotes', { ...base(), lookupId: usd, destination: { ...destination, currency: 'EUR' } });
    expectError(wrongCurrency, 400, 'INVALID_CURRENCY');
    expect(wrongCurrency.body.details.errors[0].field).toBe('destination.currency');
    const badAddress = await p.api.post('/quotes', { ...base(), lookupId: usd, destination: { ...destination, umaAddress: 'nope' } });
    expectError(badAddress, 400, 'INVALID_UMA_ADDRESS');
    const fresh = (await lookup(`$success.usd@${SANDBOX}`)).body.lookupId;
    await advance(p, 16 * 60);
    const expired = await p.api.post('/quotes', { ...base(), lookupId: fresh });
    expectError(expired, 400, 'INVALID_INPUT');
    expect(expired.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'expired' });
  });

  it('enforces mandatory payer data: a platform account paying needs FULL_NAME in senderCustomerInfo', async () => {
    const platformUsd = (await p.api.get('/platform/internal-accounts', { currency: 'USD' })).body.data[0].id;
    await fund(p, platformUsd, 100_000);
    const found = await lookup(`$success.usd@${SANDBOX}`, { senderUmaAddress: `$treasury@${p.platform.umaDomain}` });
    const request = { ...base(), lookupId: found.body.lookupId, source: { sourceType: 'ACCOUNT', accountId: platformUsd } };
    const missing = await p.api.post('/quotes', request);
    expectError(missing, 400, 'MISSING_MANDATORY_USER_INFO');
    expect(missing.body.details.missingFields).toEqual(['FULL_NAME']);
    const given = await p.api.post('/quotes', { ...request, senderCustomerInfo: { FULL_NAME: 'Treasury Desk' } });
    expect(given.status, JSON.stringify(given.body)).toBe(201);
  });

  it('ties the sender to one customer: senderUmaAddress and customerId agree, a lookup by address is that customer\'s', async () => {
    const bob = await newCustomer(p, 'Bob Two');
    await fund(p, bob.accounts.USD, 100_000);
    const umaOf = async (c: TestCustomer): Promise<string> => (await p.api.get(`/customers/${c.id}`)).body.umaAddress;
    const receiver = `$success.usd@${SANDBOX}`;
    const mismatched = await lookup(receiver, { customerId: alice.id, senderUmaAddress: await umaOf(bob) });
    expectError(mismatched, 400, 'INVALID_INPUT');
    expect(mismatched.body.details.errors[0]).toMatchObject({ field: 'querystring.senderUmaAddress', constraint: 'mismatch' });
    expect((await lookup(receiver, { customerId: alice.id, senderUmaAddress: (await umaOf(alice)).toUpperCase() })).status).toBe(200);

    const byAddress = (await lookup(receiver, { senderUmaAddress: await umaOf(alice) })).body.lookupId;
    const fromBob = await p.api.post('/quotes', { ...base(), lookupId: byAddress, source: { sourceType: 'ACCOUNT', accountId: bob.accounts.USD } });
    expectError(fromBob, 400, 'INVALID_INPUT');
    expect(fromBob.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'mismatch' });
    expect((await p.api.post('/quotes', { ...base(), lookupId: byAddress })).status).toBe(201);

    // An address that is no customer's names the platform: its lookups pay from the platform's accounts only.
    const platformSender = (await lookup(receiver, { senderUmaAddress: `$treasury@${p.platform.umaDomain}` })).body.lookupId;
    const fromCustomer = await p.api.post('/quotes', { ...base(), lookupId: platformSender });
    expectError(fromCustomer, 400, 'INVALID_INPUT');
    expect(fromCustomer.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'mismatch' });
  });

  it('applies the receiver\'s limits to the receiving amount', async () => {
    const found = await lookup(`$success.usd@${SANDBOX}`);
    const res = await p.api.post('/quotes', { ...base(), lookupId: found.body.lookupId, lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 200_000_000 });
    expectError(res, 400, 'AMOUNT_OUT_OF_RANGE');
  });
});
