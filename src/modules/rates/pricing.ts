/**
 * Quote math: the one place that turns an amount, a fee schedule and mid-market rates into what
 * is sent and received. Pure functions; docs/pricing.md explains the model with worked examples.
 */
import { findCurrency } from '../../core/currencies.js';
import { ServiceError } from '../../core/errors.js';
import type { FeeSchedule } from '../platform/schemas.js';
import { payoutFee } from './corridors.js';
import { Dec } from './decimal.js';
import type { MidMarketRates } from './provider.js';

export type LockedSide = 'SENDING' | 'RECEIVING';

/** Largest amount (smallest units) anything may have, so JSON numbers stay exact integers. */
export const MAX_AMOUNT = 9_000_000_000_000_000;
export const MSATS_PER_BTC = 100_000_000_000;
/** Significant digits of the reported multipliers: a double carries 15 exactly. */
export const MULTIPLIER_DIGITS = 15;
/** Significant digits of the reported `exchangeRate`, which is informational. */
export const EXCHANGE_RATE_DIGITS = 8;

export interface PriceRequest {
  sending: string;
  receiving: string;
  lockedSide: LockedSide;
  /** Smallest units of the locked side's currency. */
  amount: number;
  fees: FeeSchedule;
  rates: MidMarketRates;
}

export interface RateDetails {
  /** Smallest units of the receiving currency per millisatoshi (mid-market). */
  counterpartyMultiplier: number;
  /** Payout fee, smallest units of the receiving currency. */
  counterpartyFixedFee: number;
  /** Millisatoshis per smallest unit of the sending currency, after the FX spread. */
  serviceApiMultiplier: number;
  /** Platform fixed fee, smallest units of the sending currency. */
  serviceApiFixedFee: number;
  serviceApiVariableFeeRate: number;
  /** ceil(totalSendingAmount × serviceApiVariableFeeRate), smallest units of the sending currency. */
  serviceApiVariableFeeAmount: number;
}

export interface PricedQuote {
  totalSendingAmount: number;
  totalReceivingAmount: number;
  /** serviceApiFixedFee + serviceApiVariableFeeAmount, smallest units of the sending currency. */
  feesIncluded: number;
  /** Receiving major units per sending major unit, after the spread, before fees. */
  exchangeRate: number;
  rateDetails: RateDetails;
}

/** The locked amount cannot pay the fees and still deliver something. */
export class AmountTooSmallError extends ServiceError {
  constructor(
    readonly lockedSide: LockedSide,
    readonly minimumAmount: number,
  ) {
    const what = lockedSide === 'SENDING' ? 'sending amount' : 'receiving amount';
    const why = lockedSide === 'SENDING' ? ' to cover the fees and deliver a positive amount' : '';
    super('AMOUNT_OUT_OF_RANGE', `${what} must be at least ${minimumAmount}${why}`, {
      details: { lockedCurrencySide: lockedSide, minimumAmount },
    });
    this.name = 'AmountTooSmallError';
  }
}

/** The locked amount, or the amount it implies on the other side, exceeds MAX_AMOUNT. */
export class AmountTooLargeError extends ServiceError {
  constructor(
    readonly lockedSide: LockedSide,
    readonly maximumAmount: number,
  ) {
    const what = lockedSide === 'SENDING' ? 'sending amount' : 'receiving amount';
    super('AMOUNT_OUT_OF_RANGE', `${what} must be at most ${maximumAmount} for this currency pair`, {
      details: { lockedCurrencySide: lockedSide, maximumAmount },
    });
    this.name = 'AmountTooLargeError';
  }
}

/** Everything the math needs for one currency pair and fee schedule, in exact decimals. */
export interface PricingTerms {
  serviceApiMultiplier: Dec;
  counterpartyMultiplier: Dec;
  fixedFee: Dec;
  variableFeeRate: Dec;
  counterpartyFixedFee: Dec;
  exchangeRate: Dec;
}

function decimalsOf(code: string): number {
  const found = findCurrency(code);
  if (!found) throw new ServiceError('INVALID_CURRENCY', `${code} is not a known currency code`);
  return found.decimals;
}

function usdPrice(rates: MidMarketRates, code: string): Dec {
  const price = rates.usdPrices.get(code);
  if (!price) throw new ServiceError('INVALID_CURRENCY', `no exchange rate is available for ${code}`);
  return new Dec(price);
}

/**
 * Rounds a computed multiplier down to what is reported. Prices arrive as reciprocals (1 / 88.65),
 * so a quotient that is exactly 0.008111475 comes out as 0.00811147499…9 at 64 digits; rounding
 * to 40 digits first removes that noise, so the final step only drops real digits.
 */
function reported(value: Dec, digits: number): Dec {
  return value.toSignificantDigits(40).toSignificantDigits(digits, Dec.ROUND_DOWN);
}

function fixedFeeFor(fees: FeeSchedule, sending: string): Dec {
  return new Dec(fees.fixedFees.find((fee) => fee.currencyCode === sending)?.amount ?? 0);
}

/** Mid-market rate: receiving major units per sending major unit, no spread, unrounded. */
export function midMarketRate(rates: MidMarketRates, sending: string, receiving: string): Dec {
  return usdPrice(rates, sending).div(usdPrice(rates, receiving));
}

export function pricingTerms(sending: string, receiving: string, fees: FeeSchedule, rates: MidMarketRates): PricingTerms {
  const sendDecimals = decimalsOf(sending);
  const recvDecimals = decimalsOf(receiving);
  const fixedFee = fixedFeeFor(fees, sending);
  const counterpartyFixedFee = new Dec(payoutFee(receiving));
  if (sending === receiving) {
    // Nothing is converted: no spread and no variable fee (the schedule prices conversions).
    const one = new Dec(1);
    return { serviceApiMultiplier: one, counterpartyMultiplier: one, fixedFee, variableFeeRate: new Dec(0), counterpartyFixedFee, exchangeRate: one };
  }
  const btc = usdPrice(rates, 'BTC');
  const afterSpread = new Dec(1).minus(new Dec(fees.fxSpreadBps).div(10_000));
  const serviceApiMultiplier = usdPrice(rates, sending)
    .div(btc)
    .times(MSATS_PER_BTC)
    .div(new Dec(10).pow(sendDecimals))
    .times(afterSpread);
  const counterpartyMultiplier = btc
    .div(usdPrice(rates, receiving))
    .div(MSATS_PER_BTC)
    .times(new Dec(10).pow(recvDecimals));
  const reportedService = reported(serviceApiMultiplier, MULTIPLIER_DIGITS);
  const reportedCounterparty = reported(counterpartyMultiplier, MULTIPLIER_DIGITS);
  const exchangeRate = reported(
    reportedService.times(reportedCounterparty).times(new Dec(10).pow(sendDecimals - recvDecimals)),
    EXCHANGE_RATE_DIGITS,
  );
  const variableFeeRate = new Dec(fees.variableFeeRate);
  if (variableFeeRate.gte(1)) throw new RangeError('variableFeeRate must be below 1');
  return {
    serviceApiMultiplier: reportedService,
    counterpartyMultiplier: reportedCounterparty,
    fixedFee,
    variableFeeRate,
    counterpartyFixedFee,
    exchangeRate,
  };
}

interface Outcome {
  variableFee: Dec;
  converted: Dec;
  /** May be zero or negative when the amount does not cover the fees. */
  receiving: Dec;
}

/** The SENDING-locked formula, without range checks. */
function outcomeOf(sendingAmount: Dec, terms: PricingTerms): Outcome {
  const variableFee = sendingAmount.times(terms.variableFeeRate).ceil();
  const converted = sendingAmount.minus(terms.fixedFee).minus(variableFee);
  const receiving = converted
    .times(terms.serviceApiMultiplier)
    .times(terms.counterpartyMultiplier)
    .floor()
    .minus(terms.counterpartyFixedFee);
  return { variableFee, converted, receiving };
}

function receives(sendingAmount: Dec, terms: PricingTerms): Dec {
  return outcomeOf(sendingAmount, terms).receiving;
}

const MAX_CORRECTION_STEPS = 64;

/**
 * The smallest sending amount whose SENDING-locked result delivers at least `receivingAmount`.
 * Inverts each rounding step with a ceiling (exact in theory), then walks to the true minimum in
 * case a division rounded across an integer. The result is monotone in the sending amount because
 * the variable fee rate is below 1, which is what makes "smallest" well defined.
 */
export function minimumSendingAmount(receivingAmount: Dec, terms: PricingTerms): Dec {
  const multiplier = terms.serviceApiMultiplier.times(terms.counterpartyMultiplier);
  const converted = receivingAmount.plus(terms.counterpartyFixedFee).div(multiplier).ceil();
  let sending = Dec.max(1, converted.plus(terms.fixedFee).div(new Dec(1).minus(terms.variableFeeRate)).ceil());
  for (let step = 0; step < MAX_CORRECTION_STEPS; step++) {
    if (sending.gt(1) && receives(sending.minus(1), terms).gte(receivingAmount)) sending = sending.minus(1);
    else if (receives(sending, terms).lt(receivingAmount)) sending = sending.plus(1);
    else return sending;
  }
  throw new Error('minimumSendingAmount did not converge');
}

function checkAmount(amount: number): void {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount must be an integer, got ${amount}`);
}

function priced(sendingAmount: Dec, receivingAmount: Dec, outcome: Outcome, terms: PricingTerms): PricedQuote {
  return {
    totalSendingAmount: sendingAmount.toNumber(),
    totalReceivingAmount: receivingAmount.toNumber(),
    feesIncluded: terms.fixedFee.plus(outcome.variableFee).toNumber(),
    exchangeRate: terms.exchangeRate.toNumber(),
    rateDetails: {
      counterpartyMultiplier: terms.counterpartyMultiplier.toNumber(),
      counterpartyFixedFee: terms.counterpartyFixedFee.toNumber(),
      serviceApiMultiplier: terms.serviceApiMultiplier.toNumber(),
      serviceApiFixedFee: terms.fixedFee.toNumber(),
      serviceApiVariableFeeRate: terms.variableFeeRate.toNumber(),
      serviceApiVariableFeeAmount: outcome.variableFee.toNumber(),
    },
  };
}

/** The sending amount is fixed; the receiver gets what is left after fees, rounded down. */
export function priceSendingLocked(amount: number, terms: PricingTerms): PricedQuote {
  checkAmount(amount);
  if (amount > MAX_AMOUNT) throw new AmountTooLargeError('SENDING', MAX_AMOUNT);
  const sending = new Dec(amount);
  const outcome = outcomeOf(sending, terms);
  if (outcome.converted.lte(0) || outcome.receiving.lte(0)) {
    throw new AmountTooSmallError('SENDING', minimumSendingAmount(new Dec(1), terms).toNumber());
  }
  if (outcome.receiving.gt(MAX_AMOUNT)) {
    const largest = minimumSendingAmount(new Dec(MAX_AMOUNT + 1), terms).minus(1);
    throw new AmountTooLargeError('SENDING', largest.toNumber());
  }
  return priced(sending, outcome.receiving, outcome, terms);
}

/** The receiving amount is fixed; the sender pays the smallest amount that delivers it. */
export function priceReceivingLocked(amount: number, terms: PricingTerms): PricedQuote {
  checkAmount(amount);
  if (amount < 1) throw new AmountTooSmallError('RECEIVING', 1);
  if (amount > MAX_AMOUNT) throw new AmountTooLargeError('RECEIVING', MAX_AMOUNT);
  const receiving = new Dec(amount);
  const sending = minimumSendingAmount(receiving, terms);
  if (sending.gt(MAX_AMOUNT)) {
    const largest = Dec.min(MAX_AMOUNT, receives(new Dec(MAX_AMOUNT), terms));
    throw new AmountTooLargeError('RECEIVING', largest.toNumber());
  }
  // Whatever the last unit delivers beyond `amount` stays with the house: the receiver gets exactly `amount`.
  return priced(sending, receiving, outcomeOf(sending, terms), terms);
}

/** Prices the locked amount on terms already worked out (and perhaps cached) for its pair. */
export function priceWithTerms(lockedSide: LockedSide, amount: number, terms: PricingTerms): PricedQuote {
  return lockedSide === 'SENDING' ? priceSendingLocked(amount, terms) : priceReceivingLocked(amount, terms);
}

/** Prices a quote: the single entry point quotes and exchange rates share. */
export function priceQuote(request: PriceRequest): PricedQuote {
  return priceWithTerms(request.lockedSide, request.amount, pricingTerms(request.sending, request.receiving, request.fees, request.rates));
}
