import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultCurrencyConfig } from '../platform/currency-defaults.js';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/errors.js';
import { SANDBOX_BANK_NAME } from './funding.js';
import { AVAILABLE_MARK, POSTED_MARK, UPDATED_AT_MARK, splitAroundBalances } from './service.js';

let t: TestApp;
let a: TestPlatform;
let b: TestPlatform;

type Account = {
  id: string;
  customerId?: string;
  type: string;
  balance: { amount: number; currency: { code: string } };
  totalBalance: { amount: number; currency: { code: string } };
  fundingPaymentInstructions: Array<{ isPlatformAccount: boolean; accountOrWalletInfo: Record<string, any> }>;
};

const person = { customerType: 'INDIVIDUAL', fullName: 'Ana Lopez' };

async function newCustomer(p: TestPlatform, body: object = person): Promise<string> {
  const res = await p.api.post('/customers', body);
  expect(res.status).toBe(201);
  return res.body.id;
}

async function allAccounts(p: TestPlatform, path: string, query: Record<string, string> = {}): Promise<Account[]> {
  const res = await p.api.get(path, { limit: 100, ...query });
  expect(res.status).toBe(200);
  expect(res.body.totalCount).toBe(res.body.data.length);
  return res.body.data;
}

const codes = (accounts: Account[]) => accounts.map((x) => x.balance.currency.code).sort();
const info = (account: Account) => account.fundingPaymentInstructions[0].accountOrWalletInfo;

function ibanIsValid(iban: string): boolean {
  const rearranged = `${iban.slice(4)}${iban.slice(0, 4)}`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  return BigInt(rearranged) % 97n === 1n;
}

beforeAll(async () => {
  t = await startTestApp();
  a = await t.createPlatform();
  b = await t.createPlatform();
});
afterAll(() => t.close());

describe('accounts opened automatically', () => {
  it('gives the platform one zero-balance account per supported currency', async () => {
    const accounts = await allAccounts(a, '/platform/internal-accounts');
    expect(codes(accounts)).toEqual(['EUR', 'MXN', 'USD']);
    for (const account of accounts) {
      expect(account).toMatchObject({ type: 'INTERNAL_FIAT', balance: { amount: 0 }, totalBalance: { amount: 0 } });
      expect(account.id).toMatch(/^InternalAccount:[0-9a-f-]{36}$/);
      expect(account.customerId).toBeUndefined();
      expect(account.fundingPaymentInstructions[0].isPlatformAccount).toBe(true);
    }
  });

  it('each list keeps to its owner whatever else the query string carries (unknown parameters are ignored)', async () => {
    const customer = await a.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Query Stuffer' });
    expect(customer.status).toBe(201);
    const platformOnly = await allAccounts(a, '/platform/internal-accounts', { owner: 'customers', customerId: customer.body.id });
    expect(codes(platformOnly)).toEqual(['EUR', 'MXN', 'USD']);
    expect(platformOnly.every((x) => x.customerId === undefined)).toBe(true);
    const customersOnly = await allAccounts(a, '/customers/internal-accounts', { owner: 'platform' });
    expect(customersOnly.length).toBeGreaterThan(0);
    expect(customersOnly.every((x) => typeof x.customerId === 'string')).toBe(true);
    const external = await a.api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '4455667788', routingNumber: '021000021', beneficiary: { beneficiaryType: 'BUSINESS', legalName: 'Query Co' } },
    });
    expect(external.status, JSON.stringify(external.body)).toBe(201);
    const platformExternal = await a.api.get('/platform/external-accounts', { customerId: customer.body.id, owner: 'customer' });
    expect(platformExternal.body.data.map((x: { id: string }) => x.id)).toContain(external.body.id);
  });

  it('gives a new customer one zero-balance account per supported currency, with deposit details', async () => {
    const customerId = await newCustomer(a, { ...person, currencies: ['USD'] });
    const accounts = await allAccounts(a, '/customers/internal-accounts', { customerId });
    expect(codes(accounts)).toEqual(['EUR', 'MXN', 'USD']);
    const byCode = Object.fromEntries(accounts.map((x) => [x.balance.currency.code, x]));
    for (const account of accounts) {
      expect(account).toMatchObject({ customerId, type: 'INTERNAL_FIAT', balance: { amount: 0 }, totalBalance: { amount: 0 } });
      expect(account.fundingPaymentInstructions).toHaveLength(1);
      expect(account.fundingPaymentInstructions[0].isPlatformAccount).toBe(false);
      expect(info(account)).toMatchObject({ bankName: SANDBOX_BANK_NAME, reference: expect.stringMatching(/^CR[0-9A-Z]{12}$/) });
    }
    expect(info(byCode.USD)).toMatchObject({
      accountType: 'USD_ACCOUNT',
      paymentRails: ['ACH', 'WIRE'],
      accountNumber: expect.stringMatching(/^[0-9]{12}$/),
      routingNumber: expect.stringMatching(/^[0-9]{9}$/),
    });
    expect(info(byCode.EUR)).toMatchObject({ accountType: 'EUR_ACCOUNT', paymentRails: ['SEPA', 'SEPA_INSTANT'], swiftCode: expect.stringMatching(/^[A-Z]{6}[A-Z0-9]{2}$/) });
    expect(ibanIsValid(info(byCode.EUR).iban)).toBe(true);
    expect(info(byCode.MXN)).toMatchObject({ accountType: 'MXN_ACCOUNT', paymentRails: ['SPEI'], clabeNumber: expect.stringMatching(/^[0-9]{18}$/) });
    expect(new Set(accounts.map((x) => info(x).reference)).size).toBe(3);

    const again = await allAccounts(a, '/customers/internal-accounts', { customerId });
    expect(again).toEqual(accounts); // deposit details are stable
  });

  it('opens crypto accounts as INTERNAL_CRYPTO with wallet deposit addresses', async () => {
    const p = await t.createPlatform({ currencies: ['USD', 'USDC', 'USDT', 'BTC', 'BRL', 'JPY'] });
    const customerId = await newCustomer(p);
    const accounts = await allAccounts(p, '/customers/internal-accounts', { customerId });
    const byCode = Object.fromEntries(accounts.map((x) => [x.balance.currency.code, x]));
    for (const code of ['USDC', 'USDT', 'BTC']) expect(byCode[code].type).toBe('INTERNAL_CRYPTO');
    for (const code of ['USD', 'BRL', 'JPY']) expect(byCode[code].type).toBe('INTERNAL_FIAT');
    expect(info(byCode.USDC)).toMatchObject({ accountType: 'BASE_WALLET', assetType: 'USDC', address: expect.stringMatching(/^0x[0-9a-f]{40}$/) });
    expect(info(byCode.USDT)).toMatchObject({ accountType: 'TRON_WALLET', assetType: 'USDT', address: expect.stringMatching(/^T[1-9A-HJ-NP-Za-km-z]{33}$/) });
    expect(info(byCode.BTC)).toMatchObject({ accountType: 'SPARK_WALLET', assetType: 'BTC', address: expect.stringMatching(/^sprt1[02-9ac-hj-np-z]+$/) });
    expect(info(byCode.BRL)).toMatchObject({ accountType: 'BRL_ACCOUNT', qrCode: expect.stringMatching(/^000201.*br\.gov\.bcb\.pix.*6304[0-9A-F]{4}$/) });
    // The reference API has no deposit format for JPY, so a JPY account shows none.
    expect(byCode.JPY.fundingPaymentInstructions).toEqual([]);
  });

  it('gives the reference API\'s formats to ARS, IDR and the bank-and-SWIFT currencies', async () => {
    const p = await t.createPlatform({ currencies: ['ARS', 'IDR', 'HKD', 'MYR', 'THB', 'VND'] });
    const accounts = await allAccounts(p, '/customers/internal-accounts', { customerId: await newCustomer(p) });
    const byCode = Object.fromEntries(accounts.map((x) => [x.balance.currency.code, x]));
    expect(info(byCode.ARS)).toMatchObject({ accountType: 'ARS_ACCOUNT', accountNumber: expect.stringMatching(/^\d{22}$/) });
    expect(info(byCode.IDR)).toMatchObject({ accountType: 'IDR_ACCOUNT', phoneNumber: expect.stringMatching(/^\+62\d{10}$/), swiftCode: 'CRDRID20' });
    for (const code of ['HKD', 'MYR', 'THB', 'VND']) {
      expect(info(byCode[code])).toMatchObject({ accountType: `${code}_ACCOUNT`, accountNumber: expect.stringMatching(/^\d+$/), swiftCode: `CRDR${code.slice(0, 2)}20` });
    }
  });

  it('shows no made-up deposit details on production platforms', async () => {
    const p = await t.createPlatform({ mode: 'PRODUCTION' });
    const customerId = await newCustomer(p);
    for (const account of await allAccounts(p, '/customers/internal-accounts', { customerId })) expect(account.fundingPaymentInstructions).toEqual([]);
  });

  it('keeps ledger accounts with the same ids, kinds and zero balances', async () => {
    const customerId = await newCustomer(a);
    const accounts = await allAccounts(a, '/customers/internal-accounts', { customerId });
    const rows = await t.corridor.database.db
      .selectFrom('ledger_accounts')
      .selectAll()
      .where('id', 'in', accounts.map((x) => x.id))
      .execute();
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ kind: 'CUSTOMER', platform_id: a.platform.id, posted_debits: 0, posted_credits: 0, no_balance_check: false });
    const balances = await t.corridor.services.ledger.balances(t.corridor.database.db, [...accounts.map((x) => x.id), 'InternalAccount:missing']);
    expect([...balances.values()].map((x) => [x.available, x.posted])).toEqual([[0, 0], [0, 0], [0, 0]]);
  });
});

describe('a currency added to the platform', () => {
  it('is opened for the platform and every customer not deleted, once', async () => {
    const p = await t.createPlatform();
    const live = [await newCustomer(p), await newCustomer(p)];
    const gone = await newCustomer(p);
    await p.api.delete(`/customers/${gone}`);

    const patched = await p.api.patch('/config', { supportedCurrencies: ['USD', 'EUR', 'MXN', 'GBP', 'USDC'].map(defaultCurrencyConfig) });
    expect(patched.status).toBe(200);
    expect(codes(await allAccounts(p, '/platform/internal-accounts'))).toEqual(['EUR', 'GBP', 'MXN', 'USD', 'USDC']);
    for (const customerId of live) {
      const accounts = await allAccounts(p, '/customers/internal-accounts', { customerId });
      expect(codes(accounts)).toEqual(['EUR', 'GBP', 'MXN', 'USD', 'USDC']);
      const gbp = accounts.find((x) => x.balance.currency.code === 'GBP')!;
      expect(gbp).toMatchObject({ type: 'INTERNAL_FIAT', balance: { amount: 0 }, totalBalance: { amount: 0 } });
      expect(info(gbp)).toMatchObject({ accountType: 'GBP_ACCOUNT', sortCode: expect.stringMatching(/^[0-9]{6}$/), accountNumber: expect.stringMatching(/^[0-9]{8}$/) });
    }
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { customerId: gone }))).toEqual(['EUR', 'MXN', 'USD']);
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { customerId: await newCustomer(p) }))).toEqual(['EUR', 'GBP', 'MXN', 'USD', 'USDC']);

    // Removing a currency and adding it back reuses the accounts that still exist.
    expect((await p.api.patch('/config', { supportedCurrencies: ['USD'].map(defaultCurrencyConfig) })).status).toBe(200);
    expect((await p.api.patch('/config', { supportedCurrencies: ['USD', 'GBP'].map(defaultCurrencyConfig) })).status).toBe(200);
    expect(codes(await allAccounts(p, '/platform/internal-accounts', { currency: 'GBP' }))).toEqual(['GBP']);
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { customerId: live[0] }))).toEqual(['EUR', 'GBP', 'MXN', 'USD', 'USDC']);
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { customerId: await newCustomer(p) }))).toEqual(['GBP', 'USD']);
  });

  it('reaches customers created while the configuration changes', async () => {
    const p = await t.createPlatform();
    const creates = Array.from({ length: 8 }, () => p.api.post('/customers', person));
    const patch = p.api.patch('/config', { supportedCurrencies: ['USD', 'EUR', 'MXN', 'CAD'].map(defaultCurrencyConfig) });
    const results = await Promise.all([...creates, patch]);
    expect(results.map((r) => r.status)).toEqual([...Array(8).fill(201), 200]);
    const accounts = await allAccounts(p, '/customers/internal-accounts', { currency: 'CAD' });
    expect(accounts.map((x) => x.customerId).sort()).toEqual(results.slice(0, 8).map((r) => r.body.id).sort());
  });

  it('reaches a customer created from a platform read before the change', async () => {
    const p = await t.createPlatform();
    const { platforms, customers } = t.corridor.services;
    const stale = (await platforms.get(p.platform.id))!;
    expect((await p.api.patch('/config', { supportedCurrencies: ['USD', 'CAD'].map(defaultCurrencyConfig) })).status).toBe(200);
    const ctx = { platform: stale, tx: <T>(work: (trx: any) => Promise<T>) => t.corridor.database.db.transaction().execute(work) };
    const created = await customers.create(ctx, { customerType: 'INDIVIDUAL' });
    const accounts = await allAccounts(p, '/customers/internal-accounts', { customerId: created.id });
    expect(codes(accounts)).toContain('CAD');
  });
});

describe('GET /customers/internal-accounts and /platform/internal-accounts', () => {
  let p: TestPlatform;
  let first: string;

  beforeAll(async () => {
    p = await t.createPlatform({ currencies: ['USD', 'EUR', 'USDC'] });
    first = await newCustomer(p);
    for (let i = 0; i < 3; i++) await newCustomer(p);
  });

  it('pages through every customer account with a stable order and total', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await p.api.get('/customers/internal-accounts', { limit: 5, cursor });
      expect(page.status).toBe(200);
      expect(page.body.totalCount).toBe(12);
      expect(page.body.data.length).toBeLessThanOrEqual(5);
      seen.push(...page.body.data.map((x: Account) => x.id));
      cursor = page.body.hasMore ? page.body.nextCursor : undefined;
    } while (cursor);
    expect(seen).toHaveLength(12);
    expect(new Set(seen).size).toBe(12);
    expect(seen).toEqual((await allAccounts(p, '/customers/internal-accounts')).map((x) => x.id));
  });

  it('filters by currency, customer and type', async () => {
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { currency: 'EUR' }))).toEqual(['EUR', 'EUR', 'EUR', 'EUR']);
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { customerId: first }))).toEqual(['EUR', 'USD', 'USDC']);
    expect(codes(await allAccounts(p, '/customers/internal-accounts', { customerId: first, type: 'INTERNAL_CRYPTO' }))).toEqual(['USDC']);
    expect(await allAccounts(p, '/customers/internal-accounts', { type: 'EMBEDDED_WALLET' })).toEqual([]);
    expect(codes(await allAccounts(p, '/platform/internal-accounts', { type: 'INTERNAL_FIAT' }))).toEqual(['EUR', 'USD']);
    expect(codes(await allAccounts(p, '/platform/internal-accounts', { currency: 'USDC' }))).toEqual(['USDC']);
    const page = await p.api.get('/platform/internal-accounts', { limit: 2 });
    expect(page.body).toMatchObject({ hasMore: true, totalCount: 3, nextCursor: expect.any(String) });
  });

  it('rejects bad filters', async () => {
    expectError(await p.api.get('/customers/internal-accounts', { type: 'SAVINGS' }), 400, 'INVALID_INPUT', 'querystring.type', 'enum');
    expectError(await p.api.get('/customers/internal-accounts', { currency: 'us' }), 400, 'INVALID_INPUT', 'querystring.currency', 'pattern');
    expectError(await p.api.get('/platform/internal-accounts', { limit: 101 }), 400, 'INVALID_INPUT', 'querystring.limit', 'maximum');
    expectError(await p.api.get('/platform/internal-accounts', { cursor: 'x' }), 400, 'INVALID_INPUT', 'querystring.cursor', 'format');
  });

  it('never shows another platform\'s accounts', async () => {
    expect(await allAccounts(b, '/customers/internal-accounts', { customerId: first })).toEqual([]);
    const mine = new Set((await allAccounts(p, '/customers/internal-accounts')).map((x) => x.id));
    for (const account of await allAccounts(b, '/customers/internal-accounts')) expect(mine.has(account.id)).toBe(false);
    for (const account of await allAccounts(b, '/platform/internal-accounts')) expect(mine.has(account.id)).toBe(false);
  });

  it('answers 401 without credentials', async () => {
    expectError(await t.anonymous.get('/customers/internal-accounts'), 401, 'UNAUTHORIZED');
    expectError(await t.anonymous.get('/platform/internal-accounts'), 401, 'UNAUTHORIZED');
  });
});

describe('service functions for other modules', () => {
  it('finds accounts of the right platform only', async () => {
    const { accounts } = t.corridor.services;
    const db = t.corridor.database.db;
    const customerId = await newCustomer(a);
    const usd = await accounts.findCustomerAccount(db, a.platform.id, customerId, 'USD');
    expect(usd).toMatchObject({ customerId, currency: 'USD', type: 'INTERNAL_FIAT', platformId: a.platform.id });
    expect(await accounts.findCustomerAccount(db, a.platform.id, customerId, 'GBP')).toBeUndefined();
    expect(await accounts.findCustomerAccount(db, b.platform.id, customerId, 'USD')).toBeUndefined();
    expect(await accounts.getAccount(db, a.platform.id, usd!.id)).toEqual(usd);
    await expect(accounts.getAccount(db, b.platform.id, usd!.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const [view] = await accounts.present(db, a.platform, [usd!]);
    expect(view).toMatchObject({ id: usd!.id, customerId, balance: { amount: 0, currency: { code: 'USD', decimals: 2 } } });
  });
});

describe('balance events prepared for the ledger statement', () => {
  const at = UPDATED_AT_MARK.toISOString();
  const view = (available: unknown, posted: unknown, updatedAt: unknown = at, extra = '') =>
    JSON.stringify({ id: 'InternalAccount:x', balance: { amount: available }, totalBalance: { amount: posted }, note: extra, updatedAt });

  it('split around the two balances and the time, which the statement puts back in their places', () => {
    const parts = splitAroundBalances(view(AVAILABLE_MARK, POSTED_MARK));
    expect(parts).not.toBeNull();
    const when = '2030-01-01T00:00:00.001Z';
    expect(JSON.parse(`${parts![0]}600${parts![1]}1000${parts![2]}${when}${parts![3]}`)).toEqual(JSON.parse(view(600, 1000, when)));
  });

  it('are not split when a stand-in is missing, repeated or out of order (the ledger then announces after its call)', () => {
    expect(splitAroundBalances(view(1, POSTED_MARK))).toBeNull();
    expect(splitAroundBalances(view(AVAILABLE_MARK, POSTED_MARK, '2030-01-01T00:00:00.001Z'))).toBeNull();
    expect(splitAroundBalances(view(POSTED_MARK, AVAILABLE_MARK))).toBeNull();
    expect(splitAroundBalances(view(AVAILABLE_MARK, POSTED_MARK, at, String(AVAILABLE_MARK)))).toBeNull();
    expect(splitAroundBalances(view(AVAILABLE_MARK, POSTED_MARK, at, String(POSTED_MARK)))).toBeNull();
    expect(splitAroundBalances(view(AVAILABLE_MARK, POSTED_MARK, at, at))).toBeNull();
  });
});
