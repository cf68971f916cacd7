import type { Clock, ClockSubject } from '../../core/clock.js';
import { currency, isCurrencyCode } from '../../core/currencies.js';
import { ServiceError, type FieldError } from '../../core/errors.js';
import type { Platform } from '../platform/service.js';
import { defaultPaymentRail } from './corridors.js';
import { Dec } from './decimal.js';
import {
  AmountTooLargeError,
  AmountTooSmallError,
  priceWithTerms,
  priceSendingLocked,
  pricingTerms,
  type LockedSide,
  type PricedQuote,
  type PricingTerms,
} from './pricing.js';
import type { FeeSchedule } from '../platform/schemas.js';
import { staticRateProvider, type RateProvider, type RateSnapshot } from './provider.js';
import type { ExchangeRateQuery, ExchangeRateView } from './schemas.js';

export const DEFAULT_RATE_CACHE_TTL_MS = 5 * 60_000;

export interface RateServiceDeps {
  clock: Clock;
  /** Default: the built-in table of mid-market rates. */
  provider?: RateProvider;
  /** How long fetched rates are used before the provider is asked again. Default 5 minutes. */
  cacheTtlMs?: number;
}

const NO_FEE = new Dec(0);

export interface PriceInput {
  sending: string;
  receiving: string;
  lockedSide: LockedSide;
  amount: number;
  /** False when no payout partner delivers (an internal account receives): no payout fee. */
  paidOut?: boolean;
}

/**
 * Keeps the provider's rates for `ttlMs` of wall-clock time (shared by all platforms). Callers that
 * arrive while a fetch is running wait for that fetch instead of starting another.
 */
function createRateCache(provider: RateProvider, clock: Clock, ttlMs: number) {
  let current: { snapshot: RateSnapshot; expiresAtMs: number } | undefined;
  let inFlight: Promise<RateSnapshot> | undefined;

  async function fetchFresh(): Promise<RateSnapshot> {
    let fetched;
    try {
      fetched = await provider.midMarketRates();
    } catch (error) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `exchange rates are unavailable (${provider.name})`, { cause: error });
    }
    // Every conversion goes through BTC; without it (or USD) the set is useless, not a client error.
    if (!fetched.usdPrices.has('BTC') || !fetched.usdPrices.has('USD')) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `exchange rates are unavailable (${provider.name} reported no BTC or USD price)`);
    }
    const fetchedAtMs = clock.realNowMs();
    const usdPrices = new Map([...fetched.usdPrices].map(([code, price]) => [code, new Dec(price)]));
    const snapshot: RateSnapshot = { usdPrices, updatedAt: new Date(fetchedAtMs) };
    current = { snapshot, expiresAtMs: fetchedAtMs + ttlMs };
    return snapshot;
  }

  return function getRates(): Promise<RateSnapshot> {
    if (current && clock.realNowMs() < current.expiresAtMs) return Promise.resolve(current.snapshot);
    inFlight ??= fetchFresh().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

/** When the rates were fetched, on the platform's own clock (a sandbox test clock may run ahead). */
function updatedAtFor(snapshot: RateSnapshot, platform: ClockSubject): string {
  return new Date(snapshot.updatedAt.getTime() + platform.clockOffsetMs).toISOString();
}

function supportedCodes(platform: Platform): string[] {
  return platform.supportedCurrencies.map((entry) => entry.currencyCode);
}

/** Checks one requested code; returns the field error, if any. */
function currencyProblem(field: string, code: string, platform: Platform, rates: RateSnapshot): FieldError | undefined {
  if (!isCurrencyCode(code)) return { field, constraint: 'currency', message: `${code} is not a known currency code` };
  if (!supportedCodes(platform).includes(code)) {
    return { field, constraint: 'supported', message: `${code} is not enabled for this platform (see supportedCurrencies in /config)` };
  }
  if (!rates.usdPrices.has(code)) return { field, constraint: 'rate', message: `no exchange rate is available for ${code}` };
  return undefined;
}

/** The (source, destination) pairs a query asks for, or a 400 naming every bad code. */
function corridorsFor(query: ExchangeRateQuery, platform: Platform, rates: RateSnapshot): Array<[string, string]> {
  const problems: FieldError[] = [];
  const check = (field: string, code: string) => {
    const problem = currencyProblem(field, code, platform, rates);
    if (problem) problems.push(problem);
  };
  // A quote sends only from a currency with outgoing payments enabled; so does a listed rate.
  const sends = (code: string) => platform.supportedCurrencies.some((c) => c.currencyCode === code && c.enabledTransactionTypes.includes('OUTGOING'));
  if (query.sourceCurrency) check('querystring.sourceCurrency', query.sourceCurrency);
  if (problems.length === 0 && query.sourceCurrency && !sends(query.sourceCurrency)) {
    problems.push({ field: 'querystring.sourceCurrency', constraint: 'direction', message: `outgoing payments are not enabled for ${query.sourceCurrency}` });
  }
  query.destinationCurrency?.forEach((code, i) => check(`querystring.destinationCurrency.${i}`, code));
  if (problems.length > 0) throw new ServiceError('INVALID_CURRENCY', problems[0].message, { details: { errors: problems } });

  const priced = supportedCodes(platform).filter((code) => rates.usdPrices.has(code));
  const sources = query.sourceCurrency ? [query.sourceCurrency] : priced.filter(sends);
  const destinations = query.destinationCurrency ? [...new Set(query.destinationCurrency)] : priced;
  // Listing everything skips X→X; asking for it explicitly gets the same-currency price.
  const explicitPair = Boolean(query.sourceCurrency && query.destinationCurrency);
  return sources.flatMap((source) =>
    destinations.filter((destination) => explicitPair || destination !== source).map((destination): [string, string] => [source, destination]),
  );
}

/**
 * Pricing terms per (rates snapshot, fee schedule, pair). Both keys are immutable objects that are
 * replaced, never changed, so a new snapshot or a new schedule simply misses; the weak keys let
 * old ones go. Without it, decimal arithmetic for every pair was ~40% of `GET /exchange-rates`.
 */
function createTermsCache() {
  const bySnapshot = new WeakMap<RateSnapshot, WeakMap<FeeSchedule, Map<string, PricingTerms>>>();
  return function termsFor(source: string, destination: string, fees: FeeSchedule, rates: RateSnapshot): PricingTerms {
    let byFees = bySnapshot.get(rates);
    if (!byFees) bySnapshot.set(rates, (byFees = new WeakMap()));
    let byPair = byFees.get(fees);
    if (!byPair) byFees.set(fees, (byPair = new Map()));
    const key = `${source}>${destination}`;
    let terms = byPair.get(key);
    if (!terms) byPair.set(key, (terms = pricingTerms(source, destination, fees, rates)));
    return terms;
  };
}

export function createRateService(deps: RateServiceDeps) {
  const getRates = createRateCache(deps.provider ?? staticRateProvider(), deps.clock, deps.cacheTtlMs ?? DEFAULT_RATE_CACHE_TTL_MS);
  const termsFor = createTermsCache();

  /** Prices a quote with the platform's fee schedule and the cached rates. */
  async function price(platform: Pick<Platform, 'fees'>, input: PriceInput): Promise<PricedQuote> {
    const terms = termsFor(input.sending, input.receiving, platform.fees, await getRates());
    const delivered = input.paidOut === false ? { ...terms, counterpartyFixedFee: NO_FEE } : terms;
    return priceWithTerms(input.lockedSide, input.amount, delivered);
  }

  /** Receiving major units per sending major unit after the platform's spread (for lookups). */
  async function estimateRate(platform: Pick<Platform, 'fees'>, from: string, to: string): Promise<number> {
    return termsFor(from, to, platform.fees, await getRates()).exchangeRate.toNumber();
  }

  function entry(platform: Platform, rates: RateSnapshot, source: string, destination: string, sendingAmount: number): ExchangeRateView {
    const config = platform.supportedCurrencies.find((c) => c.currencyCode === source)!;
    const terms = termsFor(source, destination, platform.fees, rates);
    return {
      sourceCurrency: currency(source),
      destinationCurrency: currency(destination),
      sendingAmount,
      minSendingAmount: config.minAmount,
      maxSendingAmount: config.maxAmount,
      destinationPaymentRail: defaultPaymentRail(destination),
      receivingAmount: receivingAmountFor(terms, source, destination, sendingAmount),
      exchangeRate: terms.exchangeRate.toNumber(),
      fees: { fixed: terms.fixedFee.toNumber() },
      updatedAt: updatedAtFor(rates, platform),
    };
  }

  /** GET /exchange-rates: one entry per corridor the query selects. */
  async function listExchangeRates(platform: Platform, query: ExchangeRateQuery): Promise<{ data: ExchangeRateView[] }> {
    const rates = await getRates();
    const sendingAmount = query.sendingAmount ?? 10_000;
    const data = corridorsFor(query, platform, rates).map(([source, destination]) => entry(platform, rates, source, destination, sendingAmount));
    return { data };
  }

  return { getRates, price, estimateRate, listExchangeRates };
}

/**
 * What `sendingAmount` delivers. An amount too small to cover the fees delivers 0 (a listing should
 * not fail because one corridor has a higher fee); one whose result would pass the amount limit is
 * a 400 naming the corridor.
 */
function receivingAmountFor(terms: PricingTerms, source: string, destination: string, sendingAmount: number): number {
  try {
    return priceSendingLocked(sendingAmount, terms).totalReceivingAmount;
  } catch (error) {
    if (error instanceof AmountTooSmallError) return 0;
    if (error instanceof AmountTooLargeError) {
      const message = `sendingAmount must be at most ${error.maximumAmount} for ${source} to ${destination}`;
      throw new ServiceError('AMOUNT_OUT_OF_RANGE', message, {
        details: { errors: [{ field: 'sendingAmount', constraint: 'maximum', message }] satisfies FieldError[] },
      });
    }
    throw error;
  }
}

export type RateService = ReturnType<typeof createRateService>;
