import { describe, expect, it } from 'vitest';
import type { Clock } from '../../core/clock.js';
import type { Platform } from '../platform/service.js';
import { DEFAULT_FEES } from '../platform/currency-defaults.js';
import { isCurrencyCode } from '../../core/currencies.js';
import { ACCOUNT_TYPES } from '../external-accounts/account-types/index.js';
import { BUILT_IN_PRICES, staticRateProvider, type RateProvider } from './provider.js';
import { createRateService, DEFAULT_RATE_CACHE_TTL_MS } from './service.js';

function manualClock(startMs = Date.parse('2025-11-20T12:00:00Z')) {
  let nowMs = startMs;
  const clock: Clock = { realNowMs: () => nowMs, now: (subject) => new Date(nowMs + (subject?.clockOffsetMs ?? 0)) };
  return { clock, advance: (ms: number) => (nowMs += ms) };
}

/** The built-in table, counting fetches; each fetch waits until the test calls `state.release()`. */
function countingProvider(options: { failNext?: boolean } = {}) {
  const inner = staticRateProvider();
  const state = { calls: 0, failNext: options.failNext ?? false, release: () => {} };
  const provider: RateProvider = {
    name: 'counting',
    async midMarketRates() {
      state.calls++;
      await new Promise<void>((resolve) => (state.release = resolve));
      if (state.failNext) {
        state.failNext = false;
        throw new Error('upstream down');
      }
      return inner.midMarketRates();
    },
  };
  return { provider, state };
}

const platform = { fees: DEFAULT_FEES } as Pick<Platform, 'fees'>;

describe('rate cache', () => {
  it('fetches once per TTL, shares one in-flight fetch, and stamps the fetch time', async () => {
    const { clock, advance } = manualClock();
    const { provider, state } = countingProvider();
    const rates = createRateService({ clock, provider });

    const concurrent = [rates.getRates(), rates.getRates(), rates.estimateRate(platform, 'USD', 'EUR')] as const;
    state.release();
    const [first, second] = await Promise.all(concurrent);
    expect(state.calls).toBe(1);
    expect(second).toBe(first);
    expect(first.updatedAt.toISOString()).toBe('2025-11-20T12:00:00.000Z');

    advance(DEFAULT_RATE_CACHE_TTL_MS - 1);
    expect(await rates.getRates()).toBe(first);
    await rates.price(platform, { sending: 'USD', receiving: 'MXN', lockedSide: 'SENDING', amount: 10_000 });
    expect(state.calls).toBe(1);

    advance(1);
    const refreshing = rates.getRates();
    state.release();
    const refreshed = await refreshing;
    expect(state.calls).toBe(2);
    expect(refreshed.updatedAt.toISOString()).toBe('2025-11-20T12:05:00.000Z');
  });

  it('honours a configured TTL', async () => {
    const { clock, advance } = manualClock();
    const { provider, state } = countingProvider();
    const rates = createRateService({ clock, provider, cacheTtlMs: 1000 });
    const first = rates.getRates();
    state.release();
    await first;
    advance(999);
    await rates.getRates();
    expect(state.calls).toBe(1);
    advance(1);
    const second = rates.getRates();
    state.release();
    await second;
    expect(state.calls).toBe(2);
  });

  it('reports a failing provider as 503 and tries again on the next call', async () => {
    const { clock } = manualClock();
    const { provider, state } = countingProvider({ failNext: true });
    const rates = createRateService({ clock, provider });
    const failing = rates.getRates();
    state.release();
    await expect(failing).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    const retry = rates.getRates();
    state.release();
    await expect(retry).resolves.toMatchObject({ updatedAt: expect.any(Date) });
    expect(state.calls).toBe(2);
  });
});

describe('providers', () => {
  it('the built-in table prices many known currencies, BTC and the stablecoins', async () => {
    const { usdPrices } = await staticRateProvider().midMarketRates();
    expect(Object.keys(BUILT_IN_PRICES.unitsPerUsd).length).toBeGreaterThanOrEqual(20);
    for (const code of ['USD', 'EUR', 'GBP', 'JPY', 'INR', 'MXN', 'BRL', 'BHD', 'BTC', 'USDC', 'USDT']) expect(usdPrices.has(code)).toBe(true);
    for (const [code, price] of usdPrices) {
      expect(isCurrencyCode(code)).toBe(true);
      expect(price.gt(0)).toBe(true);
    }
  });

  it('the built-in table prices every currency an external account can be paid out in', async () => {
    const { usdPrices } = await staticRateProvider().midMarketRates();
    const payable = new Set(ACCOUNT_TYPES.flatMap((def) => def.currencies));
    expect(payable.size).toBeGreaterThan(30);
    expect([...payable].filter((code) => !usdPrices.has(code))).toEqual([]);
  });

  it('a provider without a BTC price makes rates unavailable (503), not a client error', async () => {
    const broken = staticRateProvider({ unitsPerUsd: { USD: '1', EUR: '0.9' }, usdPerUnit: {} }, 'broken');
    const rates = createRateService({ clock: manualClock().clock, provider: broken });
    await expect(rates.getRates()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});

describe('service helpers for quotes', () => {
  it('prices with the platform fees and estimates the same rate', async () => {
    const rates = createRateService({ clock: manualClock().clock });
    const priced = await rates.price(platform, { sending: 'USD', receiving: 'EUR', lockedSide: 'RECEIVING', amount: 5000 });
    expect(priced.totalReceivingAmount).toBe(5000);
    expect(priced.rateDetails.serviceApiVariableFeeRate).toBe(DEFAULT_FEES.variableFeeRate);
    expect(await rates.estimateRate(platform, 'USD', 'EUR')).toBe(priced.exchangeRate);
    expect(await rates.estimateRate(platform, 'EUR', 'EUR')).toBe(1);
  });
});
