import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError, expiryJobs, expirySecond, fund, newCustomer, transactionEvents, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';
import { changeCustomerAfterReads } from '../../../test/support/races.js';

let t: TestApp;
let p: TestPlatform;
let other: TestPlatform;
let alice: TestCustomer;
let bob: TestCustomer;
let payout: string;

const field = (res: { body: any }) => res.body.details?.errors?.map((e: { field: string }) => e.field);
const fromEur = (accountId = alice.accounts.EUR) => ({ sourceType: 'ACCOUNT', accountId });
const to = (accountId: string) => ({ destinationType: 'ACCOUNT', accountId });
const quoteBody = (extra: Record<string, unknown> = {}) => ({
  source: fromEur(),
  destination: to(payout),
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 10_000,
  ...extra,
});

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  other = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Ng');
  bob = await newCustomer(p, 'Bob Ode');
  payout = await usdAccount(p, bob.id, '001');
});
afterAll(() => t.close());

describe('POST /quotes', () => {
  it('creates a PENDING quote with its PENDING transaction, priced with the platform fees', async () => {
    const res = await p.api.post('/quotes', quoteBody({ description: 'rent', purposeOfPayment: 'SELF' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const q = res.body;
    expect(q).toMatchObject({
      id: expect.stringMatching(/^Quote:[0-9a-f-]{36}$/),
      status: 'PENDING',
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.EUR },
      destination: { destinationType: 'ACCOUNT', accountId: payout, paymentRail: 'ACH' },
      sendingCurrency: { code: 'EUR', decimals: 2 },
      receivingCurrency: { code: 'USD', decimals: 2 },
      totalSendingAmount: 10_000,
      feesIncluded: 30, // default schedule: 0.3% variable, no fixed fee
      transactionId: expect.stringMatching(/^Transaction:/),
      counterpartyInformation: { FULL_NAME: 'Rita Receiver' },
      rateDetails: { serviceApiFixedFee: 0, serviceApiVariableFeeRate: 0.003, serviceApiVariableFeeAmount: 30, counterpartyFixedFee: 0 },
    });
    expect(q.paymentInstructions).toBeUndefined();
    expect(new Date(q.expiresAt).getTime() - new Date(q.createdAt).getTime()).toBe(300_000);
    expect(q.exchangeRate).toBeGreaterThan(1);

    const tx = (await p.api.get(`/transactions/${q.transactionId}`)).body;
    expect(tx).toMatchObject({
      status: 'PENDING',
      type: 'OUTGOING',
      customerId: alice.id,
      platformCustomerId: alice.platformCustomerId,
      quoteId: q.id,
      description: 'rent',
      sentAmount: { amount: 10_000, currency: { code: 'EUR' } },
      receivedAmount: { amount: q.totalReceivingAmount, currency: { code: 'USD' } },
      fees: 30,
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.EUR, currency: 'EUR' },
      destination: { destinationType: 'ACCOUNT', accountId: payout, currency: 'USD' },
    });
    expect(await transactionEvents(t, p.platform.id, q.transactionId)).toEqual(['OUTGOING_PAYMENT.PENDING']);
    expect((await p.api.get(`/quotes/${q.id}`)).body).toEqual(q);
  });

  it('uses the configured fixed fee, variable rate and spread', async () => {
    const fees = { variableFeeRate: 0.01, fixedFees: [{ currencyCode: 'EUR', amount: 75 }], fxSpreadBps: 100 };
    const q2 = await t.createPlatform();
    expect((await q2.api.patch('/config', { fees })).status).toBe(200);
    const carol = await newCustomer(q2);
    const ext = await usdAccount(q2, carol.id);
    const res = await q2.api.post('/quotes', { source: fromEur(carol.accounts.EUR), destination: to(ext), lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 20_000 });
    expect(res.status).toBe(201);
    expect(res.body.feesIncluded).toBe(75 + 200);
    expect(res.body.rateDetails).toMatchObject({ serviceApiFixedFee: 75, serviceApiVariableFeeRate: 0.01, serviceApiVariableFeeAmount: 200 });
    const base = (await p.api.post('/quotes', quoteBody())).body.rateDetails.serviceApiMultiplier;
    // 100 bps instead of 25 bps off the mid-market rate.
    expect(res.body.rateDetails.serviceApiMultiplier / base).toBeCloseTo(0.99 / 0.9975, 9);
  });

  it('prices with the new fee schedule as soon as it is changed (pricing terms are cached)', async () => {
    const q3 = await t.createPlatform();
    const dave = await newCustomer(q3);
    const ext = await usdAccount(q3, dave.id);
    const body = { source: fromEur(dave.accounts.EUR), destination: to(ext), lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 20_000 };
    const before = await q3.api.post('/quotes', body);
    expect(before.status).toBe(201);
    const fees = { variableFeeRate: 0.01, fixedFees: [{ currencyCode: 'EUR', amount: 75 }], fxSpreadBps: 100 };
    expect((await q3.api.patch('/config', { fees })).status).toBe(200);
    const after = await q3.api.post('/quotes', body);
    expect(after.status).toBe(201);
    expect(before.body.feesIncluded).not.toBe(75 + 200);
    expect(after.body.feesIncluded).toBe(75 + 200);
    expect(after.body.rateDetails.serviceApiMultiplier / before.body.rateDetails.serviceApiMultiplier).toBeCloseTo(0.99 / 0.9975, 9);
  });

  it('locks the receiving side', async () => {
    const res = await p.api.post('/quotes', quoteBody({ lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 5_000 }));
    expect(res.status).toBe(201);
    expect(res.body.totalReceivingAmount).toBe(5_000);
    expect(res.body.totalSendingAmount).toBeGreaterThan(4_000);
  });

  it('converts between internal accounts (no payment rail, no lookup)', async () => {
    const res = await p.api.post('/quotes', quoteBody({ destination: to(bob.accounts.USD) }));
    expect(res.status).toBe(201);
    expect(res.body.destination).toEqual({ destinationType: 'ACCOUNT', accountId: bob.accounts.USD });
    expect(res.body.counterpartyInformation).toBeUndefined();
  });

  it('records the agent of agent-made quotes and names the paying customer', async () => {
    const { database, services } = t.corridor;
    const ctx = { platform: p.platform, agentId: 'Agent:0193-test', tx: <T>(work: (trx: any) => Promise<T>) => database.db.transaction().execute(work) };
    const q = await services.quotes.createQuote(ctx, quoteBody() as any);
    expect(q.source).toEqual({ sourceType: 'ACCOUNT', accountId: alice.accounts.EUR, customerId: alice.id });
    expect((await p.api.get(`/transactions/${q.transactionId}`)).body.agentId).toBe('Agent:0193-test');
    expect(await services.quotes.getQuote(ctx, q.id, { customerId: alice.id })).toEqual(q);
    await expect(services.quotes.getQuote(ctx, q.id, { customerId: bob.id })).rejects.toMatchObject({ code: 'QUOTE_NOT_FOUND' });
  });

  it('replays the first response for a repeated Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `create-${Date.now()}` };
    const first = await p.api.post('/quotes', quoteBody(), headers);
    const second = await p.api.post('/quotes', quoteBody(), headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    const different = await p.api.post('/quotes', quoteBody({ lockedCurrencyAmount: 10_001 }), headers);
    expectError(different, 422, 'IDEMPOTENCY_KEY_MISMATCH');
  });

  it('makes concurrent quotes (whose writes may share statements) each whole: its quote, transaction, event, expiry job and stored response', async () => {
    const keys = Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? `burst-${Date.now()}-${i}` : null));
    const send = (key: string | null, amount: number) => p.api.post('/quotes', quoteBody({ lockedCurrencyAmount: amount }), key ? { 'idempotency-key': key } : {});
    const quotes = await Promise.all(keys.map((key, i) => send(key, 10_000 + i)));
    expect(quotes.map((r) => r.status)).toEqual(keys.map(() => 201));
    expect(new Set(quotes.map((r) => r.body.id)).size).toBe(keys.length);
    expect(quotes.map((r) => r.body.totalSendingAmount)).toEqual(keys.map((_, i) => 10_000 + i));
    for (const { body: q } of quotes) {
      expect(await transactionEvents(t, p.platform.id, q.transactionId)).toEqual(['OUTGOING_PAYMENT.PENDING']);
      expect((await p.api.get(`/transactions/${q.transactionId}`)).body).toMatchObject({ status: 'PENDING', quoteId: q.id });
    }
    const covered = new Set(await expiryJobs(t, p.platform.id));
    for (const { body: q } of quotes) expect(covered).toContain(expirySecond(q.expiresAt));
    const replays = await Promise.all(keys.map((key, i) => (key ? send(key, 10_000 + i) : null)));
    replays.forEach((replay, i) => {
      if (!replay) return;
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(quotes[i].body);
    });
  });

  it('schedules one expiry job per second of expiresAt: a quote adds one only until its second has one', async () => {
    const fresh = await t.createPlatform(); // no other test's quotes (concurrent ones may add a few duplicates)
    const sender = await newCustomer(fresh);
    const body = quoteBody({ source: fromEur(sender.accounts.EUR), destination: to(await usdAccount(fresh, sender.id, '001')) });
    const quotes = [];
    for (let i = 0; i < 12; i++) quotes.push((await fresh.api.post('/quotes', body)).body);
    const seconds = [...new Set(quotes.map((q) => expirySecond(q.expiresAt)))];
    expect(seconds.length).toBeLessThan(quotes.length); // several quotes a second on any machine this runs on
    expect(await expiryJobs(t, fresh.platform.id)).toEqual(seconds);
  });
});

describe('POST /quotes: bad input', () => {
  it.each([
    ['missing source', { source: undefined }, 'source'],
    ['missing destination', { destination: undefined }, 'destination'],
    ['missing lockedCurrencySide', { lockedCurrencySide: undefined }, 'lockedCurrencySide'],
    ['missing lockedCurrencyAmount', { lockedCurrencyAmount: undefined }, 'lockedCurrencyAmount'],
    ['unknown field', { colour: 'blue' }, 'colour'],
    ['unknown source field', { source: { sourceType: 'ACCOUNT', accountId: 'x', extra: 1 } }, 'source.extra'],
    ['bad side', { lockedCurrencySide: 'BOTH' }, 'lockedCurrencySide'],
    ['string amount', { lockedCurrencyAmount: '100' }, 'lockedCurrencyAmount'],
    ['fractional amount', { lockedCurrencyAmount: 10.5 }, 'lockedCurrencyAmount'],
    ['zero amount', { lockedCurrencyAmount: 0 }, 'lockedCurrencyAmount'],
    ['amount above 9e15', { lockedCurrencyAmount: 9_000_000_000_000_001 }, 'lockedCurrencyAmount'],
    ['bad sourceType', { source: { sourceType: 'CARD', accountId: 'x' } }, 'source.sourceType'],
    ['bad destinationType', { destination: { destinationType: 'EMAIL', accountId: 'x' } }, 'destination.destinationType'],
    ['bad purpose', { purposeOfPayment: 'BRIBE' }, 'purposeOfPayment'],
    ['non-boolean immediatelyExecute', { immediatelyExecute: 'yes' }, 'immediatelyExecute'],
    ['senderCustomerInfo not an object', { senderCustomerInfo: 'Alice' }, 'senderCustomerInfo'],
  ])('%s → 400 naming the field', async (_name, change, expected) => {
    const body: Record<string, unknown> = { ...quoteBody(), ...change };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const res = await p.api.post('/quotes', body);
    expectError(res, 400, 'INVALID_INPUT');
    expect(field(res)).toContain(expected);
  });

  it('unknown or foreign accounts are 404', async () => {
    const foreign = await newCustomer(other);
    const foreignPayout = await usdAccount(other, foreign.id);
    expectError(await p.api.post('/quotes', quoteBody({ source: fromEur('InternalAccount:00000000-0000-7000-8000-000000000000') })), 404, 'NOT_FOUND');
    expectError(await p.api.post('/quotes', quoteBody({ source: fromEur(foreign.accounts.EUR) })), 404, 'NOT_FOUND');
    expectError(await p.api.post('/quotes', quoteBody({ destination: to(foreignPayout) })), 404, 'NOT_FOUND');
    expectError(await p.api.post('/quotes', quoteBody({ destination: to(foreign.accounts.USD) })), 404, 'NOT_FOUND');
    expectError(await p.api.post('/quotes', quoteBody({ destination: to('Customer:whatever') })), 404, 'NOT_FOUND');
    expectError(await p.api.post('/quotes', quoteBody({ source: { ...fromEur(), customerId: foreign.id } })), 404, 'USER_NOT_FOUND');
  });

  it('refuses an external account as source, a wrong owner, the same account on both sides, a foreign rail', async () => {
    const res = await p.api.post('/quotes', quoteBody({ source: fromEur(payout) }));
    expectError(res, 400, 'INVALID_INPUT');
    expect(field(res)).toEqual(['source.accountId']);
    expect(field(await p.api.post('/quotes', quoteBody({ source: { ...fromEur(), customerId: bob.id } })))).toEqual(['source.customerId']);
    expectError(await p.api.post('/quotes', quoteBody({ destination: to(alice.accounts.EUR) })), 400, 'SELF_PAYMENT');
    const rail = await p.api.post('/quotes', quoteBody({ destination: { ...to(payout), paymentRail: 'PIX' } }));
    expect(field(rail)).toEqual(['destination.paymentRail']);
  });

  it('refuses currencies the platform does not enable', async () => {
    const narrow = await t.createPlatform({ currencies: ['USD', 'EUR'] });
    const dave = await newCustomer(narrow);
    const inr = await narrow.api.post('/customers/external-accounts', {
      customerId: dave.id,
      currency: 'INR',
      accountInfo: { accountType: 'INR_ACCOUNT', vpa: 'dave001@upi', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Dave Rao' } },
    });
    expect(inr.status).toBe(201);
    const unsupported = await narrow.api.post('/quotes', { source: fromEur(dave.accounts.EUR), destination: to(inr.body.id), lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 1000 });
    expectError(unsupported, 400, 'INVALID_CURRENCY');
    expect(field(unsupported)).toEqual(['destination.accountId']);
    const config = (await narrow.api.get('/config')).body;
    const outgoingOff = config.supportedCurrencies.map((c: any) => ({
      currencyCode: c.currencyCode,
      minAmount: c.minAmount,
      maxAmount: c.maxAmount,
      requiredCounterpartyFields: c.requiredCounterpartyFields,
      enabledTransactionTypes: c.currencyCode === 'EUR' ? ['INCOMING'] : c.enabledTransactionTypes,
    }));
    expect((await narrow.api.patch('/config', { supportedCurrencies: outgoingOff })).status).toBe(200);
    const ext = await usdAccount(narrow, dave.id);
    const res = await narrow.api.post('/quotes', { source: fromEur(dave.accounts.EUR), destination: to(ext), lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 1000 });
    expectError(res, 400, 'INVALID_CURRENCY');
    expect(res.body.details.errors[0]).toMatchObject({ field: 'source.accountId', constraint: 'direction' });
  });

  it('UMA destinations need the lookupId of an UMA lookup (src/modules/uma tests the rest)', async () => {
    const uma = { destinationType: 'UMA_ADDRESS', umaAddress: '$bob@example.com', currency: 'USD' };
    const without = await p.api.post('/quotes', quoteBody({ destination: uma }));
    expectError(without, 400, 'INVALID_INPUT');
    expect(field(without)).toEqual(['lookupId']);
    const withLookup = await p.api.post('/quotes', quoteBody({ destination: uma, lookupId: 'Lookup:whatever' }));
    expectError(withLookup, 404, 'LOOKUP_REQUEST_NOT_FOUND');
  });

  it('a production platform cannot use real-time funding (no deposit rail)', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const erin = await newCustomer(production);
    const res = await production.api.post('/quotes', {
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
      destination: to(erin.accounts.EUR),
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1000,
    });
    expectError(res, 501, 'NOT_IMPLEMENTED');
  });

  it('requires credentials and a money-moving permission', async () => {
    expectError(await t.anonymous.post('/quotes', quoteBody()), 401, 'UNAUTHORIZED');
    const token = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const { apiClient } = await import('../../../test/support/app.js');
    const viewer = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    expect((await viewer.post('/quotes', quoteBody())).status).toBe(403);
  });
});

describe('the rows a quote is decided on', () => {
  it('are remembered, and read again once they changed: a deleted payout account is 404, a deleted sender USER_NOT_FOUND', async () => {
    const carol = await newCustomer(p, 'Carol Change');
    await fund(p, carol.accounts.EUR, 100_000);
    const target = await usdAccount(p, bob.id, '001');
    const body = quoteBody({ source: fromEur(carol.accounts.EUR), destination: to(target) });
    expect((await p.api.post('/quotes', body)).status).toBe(201);
    expect((await p.api.delete(`/customers/external-accounts/${target}`)).status).toBe(204);
    expectError(await p.api.post('/quotes', body), 404, 'NOT_FOUND');

    const toBob = quoteBody({ source: fromEur(carol.accounts.EUR) });
    expect((await p.api.post('/quotes', toBob)).status).toBe(201);
    expect((await p.api.delete(`/customers/${carol.id}`)).status).toBe(200);
    expectError(await p.api.post('/quotes', toBob), 404, 'USER_NOT_FOUND');
  });

  const quotesFrom = async (accountId: string) =>
    (await sql<{ n: number }>`select count(*)::int as n from quotes where source->>'accountId' = ${accountId}`.execute(t.corridor.database.db)).rows[0].n;

  it('are read again when one changed between the read and the write, and the quote is made from the fresh rows', async () => {
    const dana = await newCustomer(p, 'Dana Race');
    await fund(p, dana.accounts.EUR, 100_000);
    const race = changeCustomerAfterReads(t, dana.id, 1);
    try {
      const res = await p.api.post('/quotes', quoteBody({ source: fromEur(dana.accounts.EUR) }));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(race.reads()).toBe(2); // the first write was refused; the second read the new version
    } finally {
      race.restore();
    }
    expect(await quotesFrom(dana.accounts.EUR)).toBe(1);
  });

  it('409 CONFLICT when they keep changing, with nothing written', async () => {
    const erin = await newCustomer(p, 'Erin Race');
    await fund(p, erin.accounts.EUR, 100_000);
    const race = changeCustomerAfterReads(t, erin.id, 10);
    try {
      expectError(await p.api.post('/quotes', quoteBody({ source: fromEur(erin.accounts.EUR) })), 409, 'CONFLICT');
      expect(race.reads()).toBe(3);
    } finally {
      race.restore();
    }
    expect(await quotesFrom(erin.accounts.EUR)).toBe(0);
    const transactions = await p.api.get('/transactions', { customerId: erin.id });
    expect(transactions.body.data).toEqual([]);
    expect((await p.api.post('/quotes', quoteBody({ source: fromEur(erin.accounts.EUR) }))).status).toBe(201);
  });
});

describe('GET /quotes/{quoteId}', () => {
  it('404 for unknown ids and for another platform\'s quotes', async () => {
    const q = (await p.api.post('/quotes', quoteBody())).body;
    expectError(await p.api.get('/quotes/Quote:00000000-0000-7000-8000-000000000000'), 404, 'QUOTE_NOT_FOUND');
    expectError(await other.api.get(`/quotes/${q.id}`), 404, 'QUOTE_NOT_FOUND');
    expectError(await other.api.post(`/quotes/${q.id}/execute`), 404, 'QUOTE_NOT_FOUND');
  });
});

describe('embedded-wallet sources', () => {
  it('carry a payloadToSign; immediatelyExecute is refused and execute needs a signature', async () => {
    const w = await t.createPlatform();
    expect((await w.api.patch('/config', { embeddedWallets: { currencies: ['USD'] } })).status).toBe(200);
    const frank = await newCustomer(w);
    const wallets = await w.api.get('/customers/internal-accounts', { customerId: frank.id, type: 'EMBEDDED_WALLET' });
    const wallet = wallets.body.data[0].id;
    await fund(w, wallet, 50_000);
    const body = { source: fromEur(wallet), destination: to(frank.accounts.EUR), lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 1_000 };
    const immediate = await w.api.post('/quotes', { ...body, immediatelyExecute: true });
    expectError(immediate, 400, 'INVALID_INPUT');
    expect(field(immediate)).toEqual(['immediatelyExecute']);

    const res = await w.api.post('/quotes', body);
    expect(res.status).toBe(201);
    const info = res.body.paymentInstructions[0].accountOrWalletInfo;
    expect(info.accountType).toBe('EMBEDDED_WALLET');
    expect(JSON.parse(info.payloadToSign)).toEqual({
      type: 'QUOTE_EXECUTION',
      quoteId: res.body.id,
      accountId: wallet,
      sendingCurrency: 'USD',
      totalSendingAmount: 1_000,
      receivingCurrency: 'EUR',
      totalReceivingAmount: res.body.totalReceivingAmount,
      destination: frank.accounts.EUR,
      expiresAt: res.body.expiresAt,
    });
    const unsigned = await w.api.post(`/quotes/${res.body.id}/execute`);
    expectError(unsigned, 401, 'UNAUTHORIZED');
    expect((await w.api.get(`/quotes/${res.body.id}`)).body.status).toBe('PENDING');
    // Signed execution end to end: quotes.wallet.test.ts.
  });
});
