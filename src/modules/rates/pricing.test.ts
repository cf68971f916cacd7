import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../core/errors.js';
import type { FeeSchedule } from '../platform/schemas.js';
import {
  AmountTooLargeError,
  AmountTooSmallError,
  MAX_AMOUNT,
  midMarketRate,
  priceQuote,
  pricingTerms,
  type LockedSide,
  type PricedQuote,
} from './pricing.js';
import { toUsdPrices } from './provider.js';

// Round numbers, so the expectations below can be checked by hand.
const rates = {
  usdPrices: toUsdPrices({
    unitsPerUsd: { USD: '1', EUR: '0.8', CHF: '0.9', JPY: '150', BHD: '0.376', NGN: '1500', IDR: '16000' },
    usdPerUnit: { BTC: '100000' },
  }),
};
const fees: FeeSchedule = {
  variableFeeRate: 0.003,
  fixedFees: [
    { currencyCode: 'USD', amount: 30 },
    { currencyCode: 'JPY', amount: 50 },
    { currencyCode: 'BHD', amount: 100 },
    { currencyCode: 'BTC', amount: 500 },
  ],
  fxSpreadBps: 25,
};
const Exact = Decimal.clone({ precision: 100 });

function quote(sending: string, receiving: string, lockedSide: LockedSide, amount: number, schedule = fees): PricedQuote {
  return priceQuote({ sending, receiving, lockedSide, amount, fees: schedule, rates });
}

/** Recomputes the SENDING-locked formula from the numbers a client sees. */
function recompute(q: PricedQuote, sendingAmount: number): number {
  const d = q.rateDetails;
  const converted = new Exact(sendingAmount).minus(d.serviceApiFixedFee).minus(d.serviceApiVariableFeeAmount);
  return converted.times(d.serviceApiMultiplier).times(d.counterpartyMultiplier).floor().minus(d.counterpartyFixedFee).toNumber();
}

/** ceil(amount × 0.003) in integers: the expected variable fee. */
const variableFee = (amount: number) => Number((BigInt(amount) * 3n + 999n) / 1000n);
const fixedFee = (code: string) => fees.fixedFees.find((f) => f.currencyCode === code)?.amount ?? 0;

/** What the SENDING-locked formula delivers for a sending amount (≤ 0 when too small), ignoring the amount limit. */
function receivedFor(sending: string, receiving: string, amount: number): number {
  const terms = pricingTerms(sending, receiving, fees, rates);
  const fee = terms.variableFeeRate.isZero() ? 0 : variableFee(amount);
  const converted = new Exact(amount).minus(terms.fixedFee).minus(fee);
  return converted.times(terms.serviceApiMultiplier).times(terms.counterpartyMultiplier).floor().minus(terms.counterpartyFixedFee).toNumber();
}

function expectMinimalSending(sending: string, receiving: string, amount: number): PricedQuote {
  const q = quote(sending, receiving, 'RECEIVING', amount);
  expect(q.totalReceivingAmount).toBe(amount);
  expect(receivedFor(sending, receiving, q.totalSendingAmount)).toBeGreaterThanOrEqual(amount);
  expect(receivedFor(sending, receiving, q.totalSendingAmount - 1)).toBeLessThan(amount);
  return q;
}

const PAIRS: Array<[string, string]> = [
  ['USD', 'EUR'],
  ['USD', 'JPY'],
  ['JPY', 'USD'],
  ['USD', 'BHD'],
  ['BHD', 'JPY'],
  ['JPY', 'BHD'],
  ['USD', 'BTC'],
  ['BTC', 'USD'],
  ['BTC', 'JPY'],
  ['JPY', 'BTC'],
  ['CHF', 'IDR'],
  ['EUR', 'NGN'],
];

describe('a worked example: USD to EUR', () => {
  it('prices the SENDING side step by step', () => {
    const q = quote('USD', 'EUR', 'SENDING', 10_000);
    // 1 cent = $0.01 = 1e-7 BTC = 10,000 msats; less the 0.25% spread = 9,975 msats.
    expect(q.rateDetails.serviceApiMultiplier).toBe(9975);
    // 1 msat = 1e-11 BTC = $1e-6 = €8e-7 = 8e-5 euro cents.
    expect(q.rateDetails.counterpartyMultiplier).toBe(0.00008);
    expect(q.exchangeRate).toBe(0.798);
    // fees: 30 fixed + ceil(10000 × 0.003) = 60; converted 9,940 × 0.798 = 7,932.12 → 7,932.
    expect(q).toMatchObject({ totalSendingAmount: 10_000, totalReceivingAmount: 7932, feesIncluded: 60 });
    expect(q.rateDetails).toMatchObject({ serviceApiFixedFee: 30, serviceApiVariableFeeRate: 0.003, serviceApiVariableFeeAmount: 30, counterpartyFixedFee: 0 });
  });

  it('prices the RECEIVING side as the smallest sending amount', () => {
    const q = quote('USD', 'EUR', 'RECEIVING', 7932);
    expect(q).toMatchObject({ totalSendingAmount: 10_000, totalReceivingAmount: 7932, feesIncluded: 60 });
    expect(receivedFor('USD', 'EUR', 9999)).toBe(7931);
    // 10,002 cents pay a 31-cent variable fee and deliver 7,932.918 → 7,932: one cent short of 7,933.
    expect(receivedFor('USD', 'EUR', 10_002)).toBe(7932);
    expect(quote('USD', 'EUR', 'RECEIVING', 7933).totalSendingAmount).toBe(10_003);
  });
});

describe.each(PAIRS)('%s to %s', (sending, receiving) => {
  it('SENDING: fees exactly as configured, amount reproducible from the rate details', () => {
    for (const amount of [10_000, 10_001, 123_457, 98_765_432_101]) {
      const q = quote(sending, receiving, 'SENDING', amount);
      expect(q.totalSendingAmount).toBe(amount);
      expect(q.rateDetails.serviceApiVariableFeeAmount).toBe(variableFee(amount));
      expect(q.rateDetails.serviceApiFixedFee).toBe(fixedFee(sending));
      expect(q.feesIncluded).toBe(fixedFee(sending) + variableFee(amount));
      expect(q.totalReceivingAmount).toBe(recompute(q, amount));
      expect(Number.isSafeInteger(q.totalReceivingAmount)).toBe(true);
    }
  });

  it('SENDING: 1 is too small, and the reported minimum is exact', () => {
    let minimum = 0;
    try {
      quote(sending, receiving, 'SENDING', 1);
      throw new Error('expected AmountTooSmallError');
    } catch (error) {
      expect(error).toBeInstanceOf(AmountTooSmallError);
      minimum = (error as AmountTooSmallError).minimumAmount;
    }
    expect(quote(sending, receiving, 'SENDING', minimum).totalReceivingAmount).toBeGreaterThanOrEqual(1);
    expect(() => quote(sending, receiving, 'SENDING', minimum - 1)).toThrow(AmountTooSmallError);
  });

  it('RECEIVING: the sending amount is the smallest that delivers the amount', () => {
    for (const amount of [1, 2, 3, 7, 99, 1000, 7932, 123_457, 1_000_000_007]) expectMinimalSending(sending, receiving, amount);
  });

  it('RECEIVING: minimal for pseudo-random amounts too', () => {
    let seed = 42;
    for (let i = 0; i < 40; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      expectMinimalSending(sending, receiving, 1 + (seed % 50_000_000));
    }
  });
});

describe('extreme amounts', () => {
  const cases: Array<[string, string, LockedSide, 'ok' | 'too large']> = [
    ['JPY', 'USD', 'SENDING', 'ok'], // ¥9e15 = $6e13 = 6e15 cents
    ['BTC', 'JPY', 'SENDING', 'ok'], // 9e7 BTC = ¥1.35e15
    ['BHD', 'USD', 'SENDING', 'ok'],
    ['USD', 'BTC', 'SENDING', 'too large'], // $9e13 = 9e8 BTC = 9e16 sats
    ['USD', 'JPY', 'SENDING', 'too large'], // $9e13 = ¥1.35e16
    ['USD', 'JPY', 'RECEIVING', 'ok'],
    ['USD', 'BTC', 'RECEIVING', 'ok'],
    ['JPY', 'BHD', 'RECEIVING', 'ok'],
    ['JPY', 'USD', 'RECEIVING', 'too large'],
    ['BTC', 'USD', 'RECEIVING', 'too large'],
  ];

  it.each(cases)('%s to %s, %s locked at 9e15: %s', (sending, receiving, side, outcome) => {
    if (outcome === 'too large') {
      expect(() => quote(sending, receiving, side, MAX_AMOUNT)).toThrow(AmountTooLargeError);
      return;
    }
    const q = quote(sending, receiving, side, MAX_AMOUNT);
    for (const amount of [q.totalSendingAmount, q.totalReceivingAmount, q.feesIncluded]) {
      expect(Number.isSafeInteger(amount)).toBe(true);
      expect(amount).toBeLessThanOrEqual(MAX_AMOUNT);
    }
    if (side === 'SENDING') expect(q.totalReceivingAmount).toBe(recompute(q, MAX_AMOUNT));
    else expectMinimalSending(sending, receiving, MAX_AMOUNT);
  });

  it('reports the largest amount that fits when the other side would overflow', () => {
    const refusal = (() => {
      try {
        quote('USD', 'JPY', 'SENDING', MAX_AMOUNT);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(AmountTooLargeError);
    const largest = (refusal as AmountTooLargeError).maximumAmount;
    expect(largest).toBeGreaterThan(0);
    expect(quote('USD', 'JPY', 'SENDING', largest).totalReceivingAmount).toBeLessThanOrEqual(MAX_AMOUNT);
    expect(() => quote('USD', 'JPY', 'SENDING', largest + 1)).toThrow(AmountTooLargeError);
    expect(() => quote('USD', 'JPY', 'SENDING', MAX_AMOUNT + 1)).toThrow(AmountTooLargeError);
  });
});

describe('rounding favours the house', () => {
  it('rounds the variable fee up', () => {
    expect(quote('USD', 'EUR', 'SENDING', 10_001).rateDetails.serviceApiVariableFeeAmount).toBe(31);
    expect(quote('USD', 'EUR', 'SENDING', 333).rateDetails.serviceApiVariableFeeAmount).toBe(1);
  });

  it('rounds multipliers and receiving amounts down', () => {
    const q = quote('CHF', 'IDR', 'SENDING', 1_000_000);
    // 1 centime = 1/0.9 cents = 11,111.1… msats; less 0.25% = 11,083.33…
    const exactService = new Exact(1).div('0.9').times(10_000).times('0.9975');
    expect(q.rateDetails.serviceApiMultiplier).toBe(11083.3333333333);
    expect(new Exact(q.rateDetails.serviceApiMultiplier).lte(exactService)).toBe(true);
    const ideal = new Exact(1_000_000 - q.feesIncluded).times(exactService).times(q.rateDetails.counterpartyMultiplier);
    expect(new Exact(q.totalReceivingAmount).lte(ideal)).toBe(true);
  });

  it('never gives more than the mid-market rate', () => {
    for (const [sending, receiving] of PAIRS) {
      const q = quote(sending, receiving, 'SENDING', 50_000_000);
      const mid = midMarketRate(rates, sending, receiving);
      expect(q.exchangeRate).toBeLessThan(mid.toNumber());
    }
  });

  it('keeps the surplus of the last sending unit: the receiver gets exactly the locked amount', () => {
    // ¥1 buys 0.665 cents, so the minimum sending amount for 1000 cents delivers a little more.
    const q = quote('JPY', 'USD', 'RECEIVING', 1000);
    expect(receivedFor('JPY', 'USD', q.totalSendingAmount)).toBeGreaterThanOrEqual(1000);
    expect(q.totalReceivingAmount).toBe(1000);
  });
});

describe('fees', () => {
  it('applies the spread to the rate and charges no fixed fee where none is configured', () => {
    const noSpread = quote('EUR', 'USD', 'SENDING', 10_000, { ...fees, fxSpreadBps: 0 });
    expect(noSpread.exchangeRate).toBe(1.25);
    const wide = quote('EUR', 'USD', 'SENDING', 10_000, { ...fees, fxSpreadBps: 100 });
    expect(wide.exchangeRate).toBe(1.2375);
    expect(wide.rateDetails.serviceApiFixedFee).toBe(0);
    expect(wide.feesIncluded).toBe(30);
  });

  it('charges nothing with an empty schedule', () => {
    const free = quote('EUR', 'USD', 'SENDING', 10_000, { variableFeeRate: 0, fixedFees: [], fxSpreadBps: 0 });
    expect(free).toMatchObject({ totalReceivingAmount: 12_500, feesIncluded: 0, exchangeRate: 1.25 });
  });

  it('takes the payout fee off the receiving amount', () => {
    const q = quote('EUR', 'NGN', 'SENDING', 10_000);
    expect(q.rateDetails.counterpartyFixedFee).toBe(5000);
    expect(q.totalReceivingAmount).toBe(recompute(q, 10_000));
  });

  it('same currency: no conversion, no spread, no variable fee; fixed and payout fees still apply', () => {
    const usd = quote('USD', 'USD', 'SENDING', 10_000);
    expect(usd).toMatchObject({ totalReceivingAmount: 9970, feesIncluded: 30, exchangeRate: 1 });
    expect(usd.rateDetails).toMatchObject({ serviceApiMultiplier: 1, counterpartyMultiplier: 1, serviceApiVariableFeeRate: 0, serviceApiVariableFeeAmount: 0 });
    expect(quote('USD', 'USD', 'RECEIVING', 9970).totalSendingAmount).toBe(10_000);
    expect(quote('NGN', 'NGN', 'RECEIVING', 100_000).totalSendingAmount).toBe(105_000);
  });
});

describe('errors', () => {
  it('amount too small carries a 400 code and the minimum', () => {
    try {
      quote('USD', 'EUR', 'SENDING', 30);
      throw new Error('expected an error');
    } catch (error) {
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).status).toBe(400);
      expect((error as ServiceError).code).toBe('AMOUNT_OUT_OF_RANGE');
      expect((error as ServiceError).details).toMatchObject({ lockedCurrencySide: 'SENDING', minimumAmount: 33 });
    }
    expect(quote('USD', 'EUR', 'SENDING', 33).totalReceivingAmount).toBe(1);
    expect(() => quote('USD', 'EUR', 'SENDING', 32)).toThrow(AmountTooSmallError);
    expect(() => quote('USD', 'EUR', 'SENDING', 0)).toThrow(AmountTooSmallError);
    expect(() => quote('USD', 'EUR', 'RECEIVING', 0)).toThrow(AmountTooSmallError);
  });

  it('rejects unknown and unpriced currencies', () => {
    expect(() => quote('USD', 'XYZ', 'SENDING', 10_000)).toThrow(expect.objectContaining({ code: 'INVALID_CURRENCY' }));
    expect(() => quote('AFN', 'USD', 'SENDING', 10_000)).toThrow(/no exchange rate is available for AFN/);
  });
});
