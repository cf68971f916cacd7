import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { isCountryCode } from '../../core/countries.js';
import { findCurrency } from '../../core/currencies.js';
import { INSTITUTIONS } from './catalogue/index.js';
import { createDiscoveryService } from './service.js';

describe('catalogue', () => {
  it('covers at least 15 countries with valid ISO codes', () => {
    const countries = new Set(INSTITUTIONS.map((i) => i.country));
    expect(countries.size).toBeGreaterThanOrEqual(15);
    for (const item of INSTITUTIONS) {
      expect(isCountryCode(item.country), item.country).toBe(true);
      expect(findCurrency(item.currency), item.currency).toBeDefined();
      expect(item.bankName.length).toBeGreaterThan(0);
      expect(item.displayName.length).toBeGreaterThan(0);
    }
  });

  it('bankName is unique across the catalogue', () => {
    const names = INSTITUTIONS.map((i) => i.bankName.toLowerCase());
    expect(new Set(names).size).toBe(names.length);
  });

  it('serves the corridors external accounts need', () => {
    const pairs = new Set(INSTITUTIONS.map((i) => `${i.country}/${i.currency}`));
    for (const pair of ['US/USD', 'MX/MXN', 'BR/BRL', 'GB/GBP', 'DE/EUR', 'IN/INR', 'NG/NGN', 'KE/KES', 'PH/PHP', 'CA/CAD', 'SG/SGD', 'HK/HKD', 'ZA/ZAR', 'AE/AED', 'ID/IDR', 'TH/THB', 'VN/VND', 'GH/GHS', 'MY/MYR', 'CO/COP', 'EG/EGP', 'PK/PKR']) {
      expect(pairs.has(pair), pair).toBe(true);
    }
  });
});

describe('service', () => {
  const discovery = createDiscoveryService();

  it('finds institutions by bankName or displayName, ignoring case and accents', () => {
    expect(discovery.findInstitution('BPI')).toMatchObject({ bankName: 'BPI', country: 'PH', currency: 'PHP' });
    expect(discovery.findInstitution('bank of the philippine islands')?.bankName).toBe('BPI');
    expect(discovery.findInstitution('Banco de Bogotá')?.bankName).toBe('Banco de Bogota');
    expect(discovery.findInstitution('  chase   bank ')?.bankName).toBe('Chase Bank');
    expect(discovery.findInstitution('No Such Bank')).toBeUndefined();
  });

  it('checks the country and currency', () => {
    expect(discovery.isKnownBankName('BDO Unibank', { country: 'PH', currency: 'PHP' })).toBe(true);
    expect(discovery.isKnownBankName('BDO Unibank', { country: 'US' })).toBe(false);
    expect(discovery.isKnownBankName('BDO Unibank', { currency: 'USD' })).toBe(false);
  });

  it('returns copies, so callers cannot change the catalogue', () => {
    discovery.list().data[0].bankName = 'changed';
    expect(discovery.list().data[0].bankName).not.toBe('changed');
  });
});

describe('GET /discoveries', () => {
  let t: TestApp;
  let p: TestPlatform;
  beforeAll(async () => {
    t = await startTestApp();
    p = await t.createPlatform();
  });
  afterAll(() => t.close());

  it('lists everything without filters', async () => {
    const response = await p.api.get('/discoveries');
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(INSTITUTIONS.length);
    expect(response.body.data[0]).toEqual({ bankName: expect.any(String), displayName: expect.any(String), country: expect.any(String), currency: expect.any(String) });
  });

  it('filters by country, currency or both', async () => {
    const ph = await p.api.get('/discoveries', { country: 'PH' });
    expect(ph.body.data.length).toBeGreaterThan(2);
    expect(ph.body.data.every((i: any) => i.country === 'PH' && i.currency === 'PHP')).toBe(true);
    expect(ph.body.data).toContainEqual({ bankName: 'BPI', displayName: 'Bank of the Philippine Islands', country: 'PH', currency: 'PHP' });

    const eur = await p.api.get('/discoveries', { currency: 'EUR' });
    expect(new Set(eur.body.data.map((i: any) => i.country)).size).toBeGreaterThanOrEqual(8);
    expect(eur.body.data.every((i: any) => i.currency === 'EUR')).toBe(true);

    const both = await p.api.get('/discoveries', { country: 'FR', currency: 'EUR' });
    expect(both.body.data.length).toBeGreaterThan(0);
    expect(both.body.data.every((i: any) => i.country === 'FR')).toBe(true);

    const mismatch = await p.api.get('/discoveries', { country: 'FR', currency: 'USD' });
    expect(mismatch.body).toEqual({ data: [] });
  });

  it('accepts lower-case codes', async () => {
    const response = await p.api.get('/discoveries', { country: 'ke', currency: 'kes' });
    expect(response.body.data.map((i: any) => i.bankName)).toContain('M-Pesa');
  });

  it('well-formed codes it does not serve give an empty list', async () => {
    expect((await p.api.get('/discoveries', { country: 'AQ' })).body).toEqual({ data: [] });
    expect((await p.api.get('/discoveries', { currency: 'XYZ' })).body).toEqual({ data: [] });
  });

  it('rejects malformed codes', async () => {
    const country = await p.api.get('/discoveries', { country: 'PHL' });
    expect(country.status).toBe(400);
    expect(country.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(country.body.details.errors[0]).toMatchObject({ field: 'querystring.country', constraint: 'pattern' });
    const currency = await p.api.get('/discoveries', { currency: 'US1' });
    expect(currency.status).toBe(400);
    expect(currency.body.details.errors[0].field).toBe('querystring.currency');
  });

  it('requires authentication', async () => {
    const response = await t.anonymous.get('/discoveries');
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHORIZED');
  });
});
