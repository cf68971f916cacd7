import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { balances, expectError, expectLedgerClean, fund, legsOf, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';

const D = Decimal.clone({ precision: 64 });
const MAX = 9_000_000_000_000_000;
const DECIMALS: Record<string, number> = { USD: 2, JPY: 0, BHD: 3, INR: 2, NGN: 2 };

let t: TestApp;
let p: TestPlatform;
let sender: TestCustomer;
let receiver: TestCustomer;

interface RateDetails {
  counterpartyMultiplier: number;
  counterpartyFixedFee: number;
  serviceApiMultiplier: number;
  serviceApiFixedFee: number;
  serviceApiVariableFeeRate: number;
  serviceApiVariableFeeAmount: number;
}

/** What a sending amount delivers, recomputed from the quote's own rateDetails (docs/pricing.md). */
function delivers(sending: number, rd: RateDetails): Decimal {
  const variable = new D(sending).times(rd.serviceApiVariableFeeRate).ceil();
  const converted = new D(sending).minus(rd.serviceApiFixedFee).minus(variable);
  return converted.times(rd.serviceApiMultiplier).times(rd.counterpartyMultiplier).floor().minus(rd.counterpartyFixedFee);
}

function quote(from: string, to: string, side: 'SENDING' | 'RECEIVING', amount: number) {
  return p.api.post('/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: sender.accounts[from] },
    destination: { destinationType: 'ACCOUNT', accountId: receiver.accounts[to] },
    lockedCurrencySide: side,
    lockedCurrencyAmount: amount,
  });
}

function checkConsistent(q: any, side: 'SENDING' | 'RECEIVING', amount: number) {
  const rd: RateDetails = q.rateDetails;
  const s = q.totalSendingAmount;
  const variable = new D(s).times(rd.serviceApiVariableFeeRate).ceil().toNumber();
  expect(rd.serviceApiVariableFeeAmount).toBe(variable);
  expect(q.feesIncluded).toBe(rd.serviceApiFixedFee + variable);
  if (side === 'SENDING') {
    expect(s).toBe(amount);
    expect(q.totalReceivingAmount).toBe(delivers(s, rd).toNumber());
  } else {
    // The smallest sending amount that delivers the locked receiving amount: rounding favours the house.
    expect(q.totalReceivingAmount).toBe(amount);
    expect(delivers(s, rd).gte(amount)).toBe(true);
    if (s > 1) expect(delivers(s - 1, rd).lt(amount)).toBe(true);
  }
  const sd = DECIMALS[q.sendingCurrency.code];
  const rdx = DECIMALS[q.receivingCurrency.code];
  const rate = new D(rd.serviceApiMultiplier).times(rd.counterpartyMultiplier).times(new D(10).pow(sd - rdx));
  expect(q.exchangeRate).toBe(rate.toSignificantDigits(8, Decimal.ROUND_DOWN).toNumber());
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform({ currencies: ['USD', 'JPY', 'BHD', 'INR'] });
  const wide = ['USD', 'JPY', 'BHD', 'INR'].map((currencyCode) => ({
    currencyCode,
    minAmount: 1,
    maxAmount: MAX,
    requiredCounterpartyFields: [],
    enabledTransactionTypes: ['OUTGOING', 'INCOMING'],
  }));
  const fees = {
    variableFeeRate: 0.003,
    fixedFees: [
      { currencyCode: 'USD', amount: 50 },
      { currencyCode: 'JPY', amount: 100 },
      { currencyCode: 'BHD', amount: 500 },
    ],
    fxSpreadBps: 25,
  };
  const patched = await p.api.patch('/config', { supportedCurrencies: wide, fees });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  sender = await newCustomer(p, 'Sam Sender');
  receiver = await newCustomer(p, 'Rae Receiver');
});
afterAll(() => t.close());

describe('quote math', () => {
  it('matches the worked example of docs/pricing.md (USD → INR)', async () => {
    const sending = (await quote('USD', 'INR', 'SENDING', 10_000)).body;
    expect(sending).toMatchObject({ totalSendingAmount: 10_000, feesIncluded: 80, totalReceivingAmount: 877_209, exchangeRate: 88.428374 });
    expect(sending.rateDetails).toMatchObject({ serviceApiMultiplier: 10901.6393442622, counterpartyMultiplier: 0.008111475, serviceApiVariableFeeAmount: 30 });
    const receiving = (await quote('USD', 'INR', 'RECEIVING', 500_000)).body;
    expect(receiving).toMatchObject({ totalSendingAmount: 5_723, feesIncluded: 68, totalReceivingAmount: 500_000 });
  });

  const pairs: Array<[string, string]> = [
    ['USD', 'JPY'],
    ['JPY', 'USD'],
    ['USD', 'BHD'],
    ['BHD', 'USD'],
    ['JPY', 'BHD'],
    ['BHD', 'JPY'],
  ];
  for (const [from, to] of pairs) {
    it(`${from} → ${to}: both locked sides agree with the reported rate details`, async () => {
      for (const amount of [1_000, 12_345, 987_654_321]) {
        for (const side of ['SENDING', 'RECEIVING'] as const) {
          const res = await quote(from, to, side, amount);
          expect(res.status, `${side} ${amount}: ${JSON.stringify(res.body)}`).toBe(201);
          checkConsistent(res.body, side, amount);
        }
      }
    });
  }

  it('9e15 works where the other side stays in range, and the limit is exact where it does not', async () => {
    const big = await quote('JPY', 'USD', 'SENDING', MAX);
    expect(big.status).toBe(201);
    checkConsistent(big.body, 'SENDING', MAX);
    expect((await quote('USD', 'JPY', 'RECEIVING', MAX)).status).toBe(201);
    expect((await quote('BHD', 'USD', 'SENDING', MAX)).status).toBe(201);

    // USD 9e15 cents is worth more than 9e15 yen: refused, naming the largest amount that works.
    const tooBig = await quote('USD', 'JPY', 'SENDING', MAX);
    expectError(tooBig, 400, 'AMOUNT_OUT_OF_RANGE');
    const largest = tooBig.body.details.maximumAmount;
    expect(largest).toBeLessThan(MAX);
    const atLimit = await quote('USD', 'JPY', 'SENDING', largest);
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.totalReceivingAmount).toBeLessThanOrEqual(MAX);
    expect((await quote('USD', 'JPY', 'SENDING', largest + 1)).status).toBe(400);

    const tooMuchToReceive = await quote('JPY', 'USD', 'RECEIVING', MAX);
    expectError(tooMuchToReceive, 400, 'AMOUNT_OUT_OF_RANGE');
    const receivable = tooMuchToReceive.body.details.maximumAmount;
    const ok = await quote('JPY', 'USD', 'RECEIVING', receivable);
    expect(ok.status).toBe(201);
    expect(ok.body.totalSendingAmount).toBeLessThanOrEqual(MAX);
  });

  it('an amount that cannot pay the fees is refused with the smallest amount that works', async () => {
    const tiny = await quote('JPY', 'USD', 'SENDING', 100); // the fixed fee alone is ¥100
    expectError(tiny, 400, 'AMOUNT_OUT_OF_RANGE');
    const minimum = tiny.body.details.minimumAmount;
    expect(minimum).toBeGreaterThan(100);
    const res = await quote('JPY', 'USD', 'SENDING', minimum);
    expect(res.status).toBe(201);
    expect(res.body.totalReceivingAmount).toBe(1);
    expect((await quote('JPY', 'USD', 'SENDING', minimum - 1)).status).toBe(400);
    // Receiving one fil of BHD: the sender pays at least the fixed fee plus one unit.
    const oneFil = await quote('USD', 'BHD', 'RECEIVING', 1);
    expect(oneFil.status).toBe(201);
    checkConsistent(oneFil.body, 'RECEIVING', 1);
  });

  it('executing a conversion moves exactly the quoted amounts, the fee to FEES', async () => {
    await fund(p, sender.accounts.USD, 1_000_000);
    const before = await balances(t, receiver.accounts.BHD);
    const q = (await quote('USD', 'BHD', 'SENDING', 250_000)).body;
    const executed = await p.api.post(`/quotes/${q.id}/execute`);
    expect(executed.status).toBe(200);
    expect(executed.body.status).toBe('COMPLETED');
    expect(await balances(t, sender.accounts.USD)).toEqual({ available: 750_000, posted: 750_000 });
    expect((await balances(t, receiver.accounts.BHD)).posted).toBe(before.posted + q.totalReceivingAmount);
    const legs = await legsOf(t, p.platform.id, q.transactionId);
    expect(legs.map((l) => [l.code, l.amount, l.state])).toEqual([
      ['FEE', q.feesIncluded, 'POSTED'],
      ['FX', 250_000 - q.feesIncluded, 'POSTED'],
      ['FX', q.totalReceivingAmount, 'POSTED'],
    ]);
    const tx = (await p.api.get(`/transactions/${q.transactionId}`)).body;
    expect(tx).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
    await expectLedgerClean(t, p.platform.id);
  });
});

describe('payout fees', () => {
  it('are charged when a payout partner delivers, not when an internal account receives', async () => {
    const q = await t.createPlatform({ currencies: ['USD', 'NGN'] });
    const a = await newCustomer(q);
    const b = await newCustomer(q);
    const internal = await q.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: a.accounts.USD },
      destination: { destinationType: 'ACCOUNT', accountId: b.accounts.NGN },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    expect(internal.status, JSON.stringify(internal.body)).toBe(201);
    expect(internal.body.rateDetails.counterpartyFixedFee).toBe(0);
    checkConsistent(internal.body, 'SENDING', 10_000);
    // The exchange rates price a payout: the same amount delivers the NGN payout fee (₦50.00) less.
    const rates = await q.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: 'NGN', sendingAmount: 10_000 });
    expect(rates.body.data[0].receivingAmount).toBe(internal.body.totalReceivingAmount - 5_000);
  });
});

describe('platform limits', () => {
  it('enforce minAmount and maxAmount of both currencies', async () => {
    const q = await t.createPlatform({ currencies: ['USD', 'JPY'] });
    const a = await newCustomer(q);
    const b = await newCustomer(q);
    const body = (side: string, amount: number) => ({
      source: { sourceType: 'ACCOUNT', accountId: a.accounts.USD },
      destination: { destinationType: 'ACCOUNT', accountId: b.accounts.JPY },
      lockedCurrencySide: side,
      lockedCurrencyAmount: amount,
    });
    // Defaults: one major unit to one million major units.
    const small = await q.api.post('/quotes', body('SENDING', 99));
    expectError(small, 400, 'AMOUNT_OUT_OF_RANGE');
    expect(small.body.details).toMatchObject({ minimumAmount: 100, currency: 'USD', errors: [{ field: 'lockedCurrencyAmount', constraint: 'minimum' }] });
    // $10,000 is within USD's limits but buys more than ¥1,000,000.
    const large = await q.api.post('/quotes', body('SENDING', 1_000_000));
    expectError(large, 400, 'AMOUNT_OUT_OF_RANGE');
    expect(large.body.details).toMatchObject({ maximumAmount: 1_000_000, currency: 'JPY', errors: [{ constraint: 'maximum' }] });
    expect((await q.api.post('/quotes', body('RECEIVING', 1_000_001))).status).toBe(400);
    expect((await q.api.post('/quotes', body('RECEIVING', 1_000_000))).status).toBe(201);
  });
});
