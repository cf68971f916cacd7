import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';

let t: TestApp;
let a: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  a = await t.createPlatform(); // USD, EUR, MXN; 0.3% variable fee, 25 bps spread, no fixed fee
});
afterAll(() => t.close());

const pairs = (body: { data: Array<{ sourceCurrency: { code: string }; destinationCurrency: { code: string } }> }) =>
  body.data.map((entry) => `${entry.sourceCurrency.code}>${entry.destinationCurrency.code}`);

describe('GET /exchange-rates', () => {
  it('lists every corridor between the platform\'s currencies by default', async () => {
    const response = await a.api.get('/exchange-rates');
    expect(response.status).toBe(200);
    expect(pairs(response.body)).toEqual(['USD>EUR', 'USD>MXN', 'EUR>USD', 'EUR>MXN', 'MXN>USD', 'MXN>EUR']);
    const usdToEur = response.body.data[0];
    expect(usdToEur).toMatchObject({
      sourceCurrency: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 },
      destinationCurrency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
      sendingAmount: 10_000,
      minSendingAmount: 100,
      maxSendingAmount: 100_000_000,
      destinationPaymentRail: 'SEPA_INSTANT',
      fees: { fixed: 0 },
    });
    expect(usdToEur.exchangeRate).toBeGreaterThan(0.8);
    expect(usdToEur.exchangeRate).toBeLessThan(1);
    expect(new Date(usdToEur.updatedAt).toISOString()).toBe(usdToEur.updatedAt);
    const rails = Object.fromEntries(response.body.data.map((e: any) => [e.destinationCurrency.code, e.destinationPaymentRail]));
    expect(rails).toEqual({ EUR: 'SEPA_INSTANT', MXN: 'SPEI', USD: 'ACH' });
  });

  it('computes receivingAmount with the shared pricing and the platform\'s fees', async () => {
    const response = await a.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: 'MXN', sendingAmount: 250_000 });
    expect(response.status).toBe(200);
    const [entry] = response.body.data;
    // Worked by hand from the sandbox's rate (18.35 MXN to the dollar) and the default fees (0.3%
    // variable, rounded up; 25 bps of spread): (250,000 − 750) × 18.35 × 0.9975 = 4,562,303.15,
    // rounded down to the centavo. The rate, 18.304125, is shown at 8 significant digits from the
    // two multipliers through bitcoin, each rounded down at 15: just under, so 18.304124.
    expect(entry).toMatchObject({ sendingAmount: 250_000, receivingAmount: 4_562_303, exchangeRate: 18.304124 });
  });

  it('filters by source and by repeated destination currencies', async () => {
    const fromUsd = await a.api.get('/exchange-rates', { sourceCurrency: 'USD' });
    expect(pairs(fromUsd.body)).toEqual(['USD>EUR', 'USD>MXN']);

    const both = await a.api.get('/exchange-rates', { sourceCurrency: 'EUR', destinationCurrency: ['MXN', 'USD', 'MXN'] });
    expect(both.status).toBe(200);
    expect(pairs(both.body)).toEqual(['EUR>MXN', 'EUR>USD']);

    const toEur = await a.api.get('/exchange-rates', { destinationCurrency: 'EUR' });
    expect(pairs(toEur.body)).toEqual(['USD>EUR', 'MXN>EUR']);

    const same = await a.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: 'USD' });
    expect(same.body.data[0]).toMatchObject({ exchangeRate: 1, receivingAmount: 10_000, destinationPaymentRail: 'ACH' });
  });

  it('reports 0 for an amount that does not cover the fees', async () => {
    const response = await a.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: 'EUR', sendingAmount: 0 });
    expect(response.status).toBe(200);
    expect(response.body.data[0]).toMatchObject({ sendingAmount: 0, receivingAmount: 0 });
  });

  it('reflects fees and currency limits set through PATCH /config', async () => {
    const p = await t.createPlatform();
    const patched = await p.api.patch('/config', {
      fees: { variableFeeRate: 0.01, fixedFees: [{ currencyCode: 'USD', amount: 150 }], fxSpreadBps: 100 },
      supportedCurrencies: [
        { currencyCode: 'USD', minAmount: 500, maxAmount: 5_000_000, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING', 'INCOMING'] },
        { currencyCode: 'INR', minAmount: 10_000, maxAmount: 90_000_000, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING', 'INCOMING'] },
      ],
    });
    expect(patched.status).toBe(200);
    const before = await a.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: 'EUR' });

    const response = await p.api.get('/exchange-rates', { sourceCurrency: 'USD' });
    expect(response.status).toBe(200);
    expect(pairs(response.body)).toEqual(['USD>INR']);
    const [entry] = response.body.data;
    expect(entry).toMatchObject({ minSendingAmount: 500, maxSendingAmount: 5_000_000, fees: { fixed: 150 }, destinationPaymentRail: 'UPI' });
    // 10000 − 150 fixed − 100 variable = 9750 converted, at a rate 1% under mid-market.
    const rates = await t.corridor.services.rates.getRates();
    const mid = rates.usdPrices.get('USD')!.div(rates.usdPrices.get('INR')!);
    expect(entry.exchangeRate).toBeCloseTo(mid.times(0.99).toNumber(), 4);
    // By hand: 9,750 × 88.65 × 0.99 = 855,694.125 paise, rounded down.
    expect(entry.receivingAmount).toBe(855_694);

    const inrSource = await p.api.get('/exchange-rates', { sourceCurrency: 'INR' });
    expect(inrSource.body.data[0]).toMatchObject({ minSendingAmount: 10_000, maxSendingAmount: 90_000_000, fees: { fixed: 0 } });
    expect(before.body.data[0].fees.fixed).toBe(0); // another platform's fees are untouched

    // A currency that only receives is no source, as in quotes.
    const inrInOnly = patched.body.supportedCurrencies.map((c: any) => (c.currencyCode === 'INR' ? { ...c, enabledTransactionTypes: ['INCOMING'] } : c));
    expect((await p.api.patch('/config', { supportedCurrencies: inrInOnly })).status).toBe(200);
    expect(pairs((await p.api.get('/exchange-rates')).body)).toEqual(['USD>INR']);
    const refused = await p.api.get('/exchange-rates', { sourceCurrency: 'INR' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_CURRENCY', details: { errors: [{ field: 'querystring.sourceCurrency', constraint: 'direction' }] } });
  });

  it('serves the cached rates: updatedAt stays put between calls and follows the sandbox clock', async () => {
    const first = await a.api.get('/exchange-rates', { sourceCurrency: 'USD' });
    const second = await a.api.get('/exchange-rates', { sourceCurrency: 'EUR' });
    expect(second.body.data[0].updatedAt).toBe(first.body.data[0].updatedAt);

    const p = await t.createPlatform();
    expect((await p.api.post('/sandbox/clock/advance', { seconds: 3600 })).status).toBe(200);
    const shifted = await p.api.get('/exchange-rates', { sourceCurrency: 'USD' });
    expect(Date.parse(shifted.body.data[0].updatedAt) - Date.parse(first.body.data[0].updatedAt)).toBe(3_600_000);
  });

  it('rejects bad input with the error envelope', async () => {
    const unknown = await a.api.get('/exchange-rates', { sourceCurrency: 'XYZ' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      status: 400,
      code: 'INVALID_CURRENCY',
      message: 'XYZ is not a known currency code',
      details: { errors: [{ field: 'querystring.sourceCurrency', constraint: 'currency', message: 'XYZ is not a known currency code' }] },
    });

    const unsupported = await a.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: ['EUR', 'GBP', 'QQQ'] });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.code).toBe('INVALID_CURRENCY');
    expect(unsupported.body.details.errors).toEqual([
      { field: 'querystring.destinationCurrency.1', constraint: 'supported', message: expect.stringContaining('GBP is not enabled for this platform') },
      { field: 'querystring.destinationCurrency.2', constraint: 'currency', message: 'QQQ is not a known currency code' },
    ]);

    const malformed = await a.api.get('/exchange-rates', { sourceCurrency: 'usd' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(malformed.body.details.errors[0]).toMatchObject({ field: 'querystring.sourceCurrency', constraint: 'pattern' });

    const notDecimal = ['0x10', '1e3', ' 100', '100 ', '+5', ''].map((text) => [text, 'type']);
    for (const [sendingAmount, constraint] of [['-1', 'minimum'], ['1.5', 'type'], ['lots', 'type'], ['9000000000000001', 'maximum'], ...notDecimal]) {
      const bad = await a.api.get('/exchange-rates', { sendingAmount });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('INVALID_INPUT');
      expect(bad.body.details.errors[0]).toMatchObject({ field: 'querystring.sendingAmount', constraint });
    }

    const overflow = await a.api.get('/exchange-rates', { sourceCurrency: 'USD', destinationCurrency: 'MXN', sendingAmount: 9_000_000_000_000_000 });
    expect(overflow.status).toBe(400);
    expect(overflow.body.code).toBe('AMOUNT_OUT_OF_RANGE');
    expect(overflow.body.details.errors[0]).toMatchObject({ field: 'sendingAmount', constraint: 'maximum' });
  });

  it('requires authentication', async () => {
    const response = await t.anonymous.get('/exchange-rates');
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});
