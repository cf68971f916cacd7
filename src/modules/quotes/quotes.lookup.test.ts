import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, expectError, newCustomer, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let other: TestPlatform;
let alice: TestCustomer;
let bob: TestCustomer;
let payout: string;

const lookup = (accountId: string, query: Record<string, string> = { customerId: alice.id }, platform = p) =>
  platform.api.get(`/receiver/external-account/${accountId}`, query);

const quote = (extra: Record<string, unknown> = {}, customer = alice) =>
  p.api.post('/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: customer.accounts.EUR },
    destination: { destinationType: 'ACCOUNT', accountId: payout },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000,
    ...extra,
  });

async function requirePayerFields(fields: Array<{ name: string; mandatory: boolean }>) {
  const config = (await p.api.get('/config')).body;
  const supportedCurrencies = config.supportedCurrencies.map((c: any) => ({
    currencyCode: c.currencyCode,
    minAmount: c.minAmount,
    maxAmount: c.maxAmount,
    enabledTransactionTypes: c.enabledTransactionTypes,
    requiredCounterpartyFields: c.currencyCode === 'USD' ? fields : c.requiredCounterpartyFields,
  }));
  expect((await p.api.patch('/config', { supportedCurrencies })).status).toBe(200);
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  other = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Ng');
  bob = await newCustomer(p, 'Bob Ode');
  payout = await usdAccount(p, bob.id);
});
afterAll(() => t.close());

describe('GET /receiver/external-account/{accountId}', () => {
  it('reports the currency, an estimated rate, limits and the payer fields; its lookupId works in a quote', async () => {
    const res = await lookup(payout);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      lookupId: expect.stringMatching(/^Lookup:[0-9a-f-]{36}$/),
      accountId: payout,
      supportedCurrencies: [
        { currency: { code: 'USD', name: expect.any(String), symbol: '$', decimals: 2 }, estimatedExchangeRate: expect.any(Number), min: 100, max: 100_000_000 },
      ],
      requiredPayerDataFields: [],
    });
    expect(res.body.supportedCurrencies[0].estimatedExchangeRate).toBeGreaterThan(0);
    const q = await quote({ lookupId: res.body.lookupId });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
  });

  it('accepts senderUmaAddress instead of customerId, and needs one of them', async () => {
    expect((await lookup(payout, { senderUmaAddress: '$alice@example.com' })).status).toBe(200);
    const neither = await lookup(payout, {});
    expectError(neither, 400, 'INVALID_INPUT');
    expect(neither.body.details.errors[0].field).toBe('querystring.customerId');
    const badSender = await lookup(payout, { senderUmaAddress: 'alice' });
    expectError(badSender, 400, 'INVALID_UMA_ADDRESS');
    expect(badSender.body.details.errors[0].field).toBe('querystring.senderUmaAddress');
  });

  it('404 for unknown or foreign accounts and customers', async () => {
    expectError(await lookup('ExternalAccount:00000000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await lookup(payout, { customerId: alice.id }, other), 404, 'USER_NOT_FOUND');
    const foreign = await newCustomer(other);
    const foreignAccount = await usdAccount(other, foreign.id);
    expectError(await lookup(foreignAccount), 404, 'NOT_FOUND');
    expectError(await lookup(payout, { customerId: foreign.id }), 404, 'USER_NOT_FOUND');
  });

  it('lists the platform\'s required counterparty fields; quotes must carry the mandatory ones', async () => {
    await requirePayerFields([
      { name: 'FULL_NAME', mandatory: true },
      { name: 'TAX_ID', mandatory: true },
      { name: 'PURPOSE_OF_PAYMENT', mandatory: true },
      { name: 'PHONE_NUMBER', mandatory: false },
    ]);
    try {
      const res = await lookup(payout);
      expect(res.body.requiredPayerDataFields).toEqual([
        { name: 'FULL_NAME', mandatory: true },
        { name: 'TAX_ID', mandatory: true },
        { name: 'PURPOSE_OF_PAYMENT', mandatory: true },
        { name: 'PHONE_NUMBER', mandatory: false },
      ]);
      const missing = await quote({ lookupId: res.body.lookupId });
      expectError(missing, 400, 'MISSING_MANDATORY_USER_INFO');
      // FULL_NAME comes from the customer record; the others must be given.
      expect(missing.body.details.missingFields).toEqual(['TAX_ID', 'PURPOSE_OF_PAYMENT']);
      expect(missing.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['senderCustomerInfo.TAX_ID', 'senderCustomerInfo.PURPOSE_OF_PAYMENT']);
      const blank = await quote({ lookupId: res.body.lookupId, senderCustomerInfo: { TAX_ID: ' ' }, purposeOfPayment: 'GIFT' });
      expect(blank.body.details.missingFields).toEqual(['TAX_ID']);
      const complete = await quote({ lookupId: res.body.lookupId, senderCustomerInfo: { TAX_ID: '123-45-6789' }, purposeOfPayment: 'GIFT' });
      expect(complete.status, JSON.stringify(complete.body)).toBe(201);
      // Without a lookup the same requirements apply.
      expectError(await quote(), 400, 'MISSING_MANDATORY_USER_INFO');
    } finally {
      await requirePayerFields([]);
    }
  });

  it('a lookup must exist, be this platform\'s, be live, and match the destination and sender', async () => {
    expectError(await quote({ lookupId: 'Lookup:00000000-0000-7000-8000-000000000000' }), 404, 'LOOKUP_REQUEST_NOT_FOUND');

    const foreign = await newCustomer(other);
    const foreignLookup = (await lookup(await usdAccount(other, foreign.id), { customerId: foreign.id }, other)).body.lookupId;
    expectError(await quote({ lookupId: foreignLookup }), 404, 'LOOKUP_REQUEST_NOT_FOUND');

    const elsewhere = (await lookup(await usdAccount(p, bob.id))).body.lookupId;
    const mismatch = await quote({ lookupId: elsewhere });
    expectError(mismatch, 400, 'INVALID_INPUT');
    expect(mismatch.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'mismatch' });

    const forAlice = (await lookup(payout)).body.lookupId;
    const wrongSender = await quote({ lookupId: forAlice }, bob);
    expect(wrongSender.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'mismatch' });

    const internal = await quote({ lookupId: forAlice, destination: { destinationType: 'ACCOUNT', accountId: bob.accounts.USD } });
    expect(internal.body.details.errors[0]).toMatchObject({ field: 'lookupId' });

    await advance(p, 15 * 60 + 1);
    const expired = await quote({ lookupId: forAlice });
    expectError(expired, 400, 'INVALID_INPUT');
    expect(expired.body.details.errors[0]).toMatchObject({ field: 'lookupId', constraint: 'expired' });
  });
});
