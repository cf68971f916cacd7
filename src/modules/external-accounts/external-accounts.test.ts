import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/errors.js';
import { ibanCheckDigits } from './validators/europe.js';

let t: TestApp;
let a: TestPlatform;
let b: TestPlatform;
let alice: string;
let bob: string;
let carol: string;

const person = { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Maria Walker', birthDate: '1985-06-30', nationality: 'US' };
let counter = 10_000;
/** A fresh US account number ending in `suffix` (sandbox outcomes key on the last 3 digits). */
const accountNumber = (suffix = '001') => `${++counter}${suffix}`;

function usd(customerId: string | undefined, extra: Record<string, unknown> = {}, info: Record<string, unknown> = {}) {
  return {
    ...(customerId && { customerId }),
    currency: 'USD',
    ...extra,
    accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: accountNumber(), routingNumber: '021000021', beneficiary: person, ...info },
  };
}

const wallet = { currency: 'USDC', accountInfo: { accountType: 'SOLANA_WALLET', address: '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' } };

async function newCustomer(p: TestPlatform, fullName = 'Alice Walker'): Promise<string> {
  const res = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName, region: 'US' });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function countRows(): Promise<number> {
  const row = await t.corridor.database.db.selectFrom('external_accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

beforeAll(async () => {
  t = await startTestApp();
  a = await t.createPlatform();
  b = await t.createPlatform();
  alice = await newCustomer(a);
  bob = await newCustomer(a, 'Bob Stone');
  carol = await newCustomer(b, 'Carol King');
});
afterAll(() => t.close());

describe('POST /customers/external-accounts', () => {
  it('creates a customer account (201) with an ExternalAccount id', async () => {
    const res = await a.api.post('/customers/external-accounts', usd(alice, { platformAccountId: 'ext-1' }));
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^ExternalAccount:[0-9a-f-]{36}$/);
    expect(res.body).toMatchObject({ customerId: alice, platformAccountId: 'ext-1', currency: 'USD', status: 'ACTIVE', defaultUmaDepositAccount: false });
    expect(res.body.createdAt).toBe(res.body.updatedAt);
  });

  it('without customerId the account belongs to the platform', async () => {
    const res = await a.api.post('/customers/external-accounts', wallet);
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('customerId');
    expect((await a.api.get(`/platform/external-accounts/${res.body.id}`)).status).toBe(200);
  });

  it('unknown, deleted and other platforms\' customers are 404 USER_NOT_FOUND', async () => {
    expectError(await a.api.post('/customers/external-accounts', usd('Customer:00000000-0000-7000-8000-000000000000')), 404, 'USER_NOT_FOUND');
    expectError(await a.api.post('/customers/external-accounts', usd(carol)), 404, 'USER_NOT_FOUND');
    const gone = await newCustomer(a, 'Gone Person');
    expect((await a.api.delete(`/customers/${gone}`)).status).toBeLessThan(300);
    expectError(await a.api.post('/customers/external-accounts', usd(gone)), 404, 'USER_NOT_FOUND');
  });

  it('refuses the same destination twice for one owner (409), allows it after deletion', async () => {
    const first = await a.api.post('/customers/external-accounts', usd(bob, {}, { accountNumber: '99887766' }));
    expect(first.status).toBe(201);
    expectError(await a.api.post('/customers/external-accounts', usd(bob, {}, { accountNumber: '99887766' })), 409, 'CONFLICT');
    expect((await a.api.post('/customers/external-accounts', usd(alice, {}, { accountNumber: '99887766' }))).status).toBe(201);
    expect((await a.api.delete(`/customers/external-accounts/${first.body.id}`)).status).toBe(204);
    expect((await a.api.post('/customers/external-accounts', usd(bob, {}, { accountNumber: '99887766' }))).status).toBe(201);
  });

  it('rejects bad envelopes: missing fields, wrong types, unknown fields', async () => {
    const missing = await a.api.post('/customers/external-accounts', { customerId: alice, currency: 'USD' });
    expectError(missing, 400, 'INVALID_INPUT');
    expect(missing.body.details.errors).toContainEqual({ field: 'accountInfo', constraint: 'required', message: expect.any(String) });
    const typed = await a.api.post('/customers/external-accounts', { ...usd(alice), defaultUmaDepositAccount: 'yes' });
    expect(typed.body.details.errors).toContainEqual({ field: 'defaultUmaDepositAccount', constraint: 'type', message: expect.any(String) });
    const extra = await a.api.post('/customers/external-accounts', { ...usd(alice), nickname: 'x' });
    expect(extra.body.details.errors).toContainEqual({ field: 'nickname', constraint: 'additionalProperties', message: expect.any(String) });
    const currency = await a.api.post('/customers/external-accounts', { ...usd(alice), currency: 'us dollars' });
    expect(currency.body.details.errors).toContainEqual({ field: 'currency', constraint: 'pattern', message: expect.any(String) });
  });

  it('replays an Idempotency-Key and stores one account', async () => {
    const request = usd(alice);
    const before = await countRows();
    const first = await a.api.post('/customers/external-accounts', request, { 'idempotency-key': 'ea-1' });
    const second = await a.api.post('/customers/external-accounts', request, { 'idempotency-key': 'ea-1' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await countRows()).toBe(before + 1);
    expectError(await a.api.post('/customers/external-accounts', usd(alice), { 'idempotency-key': 'ea-1' }), 422, 'IDEMPOTENCY_KEY_MISMATCH');
  });
});

describe('sandbox beneficiary verification', () => {
  it.each([
    ['102', 'NOT_MATCHED', 'UNDER_REVIEW', undefined],
    ['103', 'PARTIAL_MATCH', 'ACTIVE', 'A. Maria Walker'],
    ['104', 'PENDING', 'PENDING', undefined],
    ['106', 'UNSUPPORTED', 'ACTIVE', undefined],
    ['107', 'CHECKED_BY_RECEIVING_FI', 'ACTIVE', undefined],
    ['101', 'MATCHED', 'ACTIVE', 'Alice Maria Walker'],
    ['555', 'MATCHED', 'ACTIVE', 'Alice Maria Walker'],
  ])('suffix %s → %s, account %s', async (suffix, verification, status, verifiedName) => {
    const res = await a.api.post('/customers/external-accounts', usd(alice, {}, { accountNumber: accountNumber(suffix) }));
    expect(res.status).toBe(201);
    expect(res.body.beneficiaryVerificationStatus).toBe(verification);
    expect(res.body.status).toBe(status);
    expect(res.body.beneficiaryVerifiedData).toEqual(verifiedName ? { fullName: verifiedName } : undefined);
  });

  it('suffix 105: 400 INVALID_BANK_ACCOUNT, nothing stored, the idempotency key released', async () => {
    const before = await countRows();
    const request = usd(alice, {}, { accountNumber: accountNumber('105') });
    const res = await a.api.post('/customers/external-accounts', request, { 'idempotency-key': 'ea-105' });
    expectError(res, 400, 'INVALID_BANK_ACCOUNT');
    expect(res.body.details.errors[0]).toMatchObject({ field: 'accountInfo.accountNumber' });
    expect(await countRows()).toBe(before);
    const again = await a.api.post('/customers/external-accounts', request, { 'idempotency-key': 'ea-105' });
    expectError(again, 400, 'INVALID_BANK_ACCOUNT');
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keys with a domain use the end of the user part (PIX e-mail, UPI)', async () => {
    const pix = await a.api.post('/customers/external-accounts', {
      customerId: alice,
      currency: 'BRL',
      accountInfo: { accountType: 'BRL_ACCOUNT', pixKey: 'alice103@example.com', pixKeyType: 'EMAIL', taxId: '52998224725', beneficiary: person },
    });
    expect(pix.body).toMatchObject({ beneficiaryVerificationStatus: 'PARTIAL_MATCH', beneficiaryVerifiedData: { fullName: 'A. Maria Walker' } });
    const upi = await a.api.post('/customers/external-accounts', {
      customerId: alice,
      currency: 'INR',
      accountInfo: { accountType: 'INR_ACCOUNT', vpa: 'alice105@okaxis', beneficiary: person },
    });
    expectError(upi, 400, 'INVALID_BANK_ACCOUNT');
  });

  it('an IBAN ending in 102 is NOT_MATCHED', async () => {
    const bban = '370400440532013102';
    const res = await a.api.post('/customers/external-accounts', {
      customerId: alice,
      currency: 'EUR',
      accountInfo: {
        accountType: 'EUR_ACCOUNT',
        iban: `DE${ibanCheckDigits('DE', bban)}${bban}`,
        beneficiary: { ...person, address: { line1: 'Hauptstr. 1', postalCode: '10115', country: 'DE' } },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ beneficiaryVerificationStatus: 'NOT_MATCHED', status: 'UNDER_REVIEW' });
  });

  it('checks a business by its legal name', async () => {
    const res = await a.api.post('/customers/external-accounts', usd(alice, {}, { beneficiary: { beneficiaryType: 'BUSINESS', legalName: 'Acme Corporation' } }));
    expect(res.body.beneficiaryVerifiedData).toEqual({ fullName: 'Acme Corporation' });
  });

  it('wallets have no beneficiary check', async () => {
    const res = await a.api.post('/platform/external-accounts', { ...wallet, accountInfo: { ...wallet.accountInfo, address: 'So11111111111111111111111111111111111111112' } });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('ACTIVE');
    expect(res.body.beneficiaryVerificationStatus).toBeUndefined();
  });

  it('production platforms report UNSUPPORTED (no verifier configured), suffixes mean nothing', async () => {
    const live = await t.createPlatform({ mode: 'PRODUCTION' });
    const res = await live.api.post('/platform/external-accounts', usd(undefined, {}, { accountNumber: accountNumber('105') }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ beneficiaryVerificationStatus: 'UNSUPPORTED', status: 'ACTIVE' });
    expect(res.body.beneficiaryVerifiedData).toBeUndefined();
  });
});

describe('default UMA deposit account', () => {
  it('at most one per customer: a new default takes the flag from the old one', async () => {
    const dave = await newCustomer(a, 'Dave Moss');
    const first = await a.api.post('/customers/external-accounts', usd(dave, { defaultUmaDepositAccount: true }));
    expect(first.body.defaultUmaDepositAccount).toBe(true);
    const plain = await a.api.post('/customers/external-accounts', usd(dave));
    expect(plain.body.defaultUmaDepositAccount).toBe(false);
    const second = await a.api.post('/customers/external-accounts', usd(dave, { defaultUmaDepositAccount: true }));
    expect(second.body.defaultUmaDepositAccount).toBe(true);
    const old = await a.api.get(`/customers/external-accounts/${first.body.id}`);
    expect(old.body.defaultUmaDepositAccount).toBe(false);
    expect(old.body.updatedAt >= old.body.createdAt).toBe(true);
    const defaults = (await a.api.get('/customers/external-accounts', { customerId: dave })).body.data.filter((x: any) => x.defaultUmaDepositAccount);
    expect(defaults.map((x: any) => x.id)).toEqual([second.body.id]);

    const service = t.corridor.services.externalAccounts;
    const found = await service.findDefaultUmaDepositAccount(t.corridor.database.db, a.platform.id, dave);
    expect(found?.id).toBe(second.body.id);
    await a.api.delete(`/customers/external-accounts/${second.body.id}`);
    expect(await service.findDefaultUmaDepositAccount(t.corridor.database.db, a.platform.id, dave)).toBeUndefined();
  });

  it('concurrent defaults for one customer leave exactly one', async () => {
    const erin = await newCustomer(a, 'Erin Fox');
    const responses = await Promise.all(Array.from({ length: 5 }, () => a.api.post('/customers/external-accounts', usd(erin, { defaultUmaDepositAccount: true }))));
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const list = (await a.api.get('/customers/external-accounts', { customerId: erin })).body.data;
    expect(list.filter((x: any) => x.defaultUmaDepositAccount)).toHaveLength(1);
  });

  it('is per customer', async () => {
    const frank = await newCustomer(a, 'Frank Hill');
    const grace = await newCustomer(a, 'Grace Lee');
    const f = await a.api.post('/customers/external-accounts', usd(frank, { defaultUmaDepositAccount: true }));
    await a.api.post('/customers/external-accounts', usd(grace, { defaultUmaDepositAccount: true }));
    expect((await a.api.get(`/customers/external-accounts/${f.body.id}`)).body.defaultUmaDepositAccount).toBe(true);
  });

  it('a platform account cannot be a default deposit account', async () => {
    const res = await a.api.post('/customers/external-accounts', { ...usd(undefined), defaultUmaDepositAccount: true });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].field).toBe('defaultUmaDepositAccount');
    const platformBody = await a.api.post('/platform/external-accounts', { ...usd(undefined), defaultUmaDepositAccount: true });
    expect(platformBody.body.details.errors[0]).toMatchObject({ field: 'defaultUmaDepositAccount', constraint: 'additionalProperties' });
  });
});

describe('POST /platform/external-accounts', () => {
  it('creates a platform account, without customerId', async () => {
    const res = await a.api.post('/platform/external-accounts', usd(undefined, { platformAccountId: 'treasury' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ platformAccountId: 'treasury', status: 'ACTIVE', beneficiaryVerificationStatus: 'MATCHED' });
    expect(res.body).not.toHaveProperty('customerId');
  });

  it('takes no customerId', async () => {
    const res = await a.api.post('/platform/external-accounts', usd(alice));
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0]).toMatchObject({ field: 'customerId', constraint: 'additionalProperties' });
  });
});

describe('get, list, delete', () => {
  let customerAccount: string;
  let platformAccount: string;
  let otherPlatformAccount: string;

  beforeAll(async () => {
    customerAccount = (await a.api.post('/customers/external-accounts', usd(alice))).body.id;
    platformAccount = (await a.api.post('/platform/external-accounts', usd(undefined))).body.id;
    otherPlatformAccount = (await b.api.post('/customers/external-accounts', usd(carol))).body.id;
  });

  it('each path serves only its own kind of account', async () => {
    expect((await a.api.get(`/customers/external-accounts/${customerAccount}`)).status).toBe(200);
    expect((await a.api.get(`/platform/external-accounts/${platformAccount}`)).status).toBe(200);
    expectError(await a.api.get(`/platform/external-accounts/${customerAccount}`), 404, 'NOT_FOUND');
    expectError(await a.api.get(`/customers/external-accounts/${platformAccount}`), 404, 'NOT_FOUND');
    expectError(await a.api.delete(`/platform/external-accounts/${customerAccount}`), 404, 'NOT_FOUND');
  });

  it('unknown ids and other platforms\' ids are 404', async () => {
    for (const path of ['/customers/external-accounts/', '/platform/external-accounts/']) {
      expectError(await a.api.get(`${path}ExternalAccount:00000000-0000-7000-8000-000000000000`), 404, 'NOT_FOUND');
      expectError(await a.api.get(`${path}nonsense`), 404, 'NOT_FOUND');
    }
    expectError(await a.api.get(`/customers/external-accounts/${otherPlatformAccount}`), 404, 'NOT_FOUND');
    expectError(await a.api.delete(`/customers/external-accounts/${otherPlatformAccount}`), 404, 'NOT_FOUND');
    expect((await b.api.get(`/customers/external-accounts/${otherPlatformAccount}`)).status).toBe(200);
  });

  it('lists never show another platform\'s accounts', async () => {
    const ours = (await a.api.get('/customers/external-accounts', { limit: 100 })).body;
    expect(ours.data.map((x: any) => x.id)).not.toContain(otherPlatformAccount);
    const filtered = (await a.api.get('/customers/external-accounts', { customerId: carol })).body;
    expect(filtered).toEqual({ data: [], hasMore: false, totalCount: 0 });
    const theirs = (await b.api.get('/customers/external-accounts')).body;
    expect(theirs.data.map((x: any) => x.id)).toEqual([otherPlatformAccount]);
  });

  it('customer lists hold customer accounts, platform lists platform accounts', async () => {
    const customers = (await a.api.get('/customers/external-accounts', { limit: 100 })).body.data;
    expect(customers.every((x: any) => x.customerId !== undefined)).toBe(true);
    const platform = (await a.api.get('/platform/external-accounts', { limit: 100 })).body.data;
    expect(platform.length).toBeGreaterThan(0);
    expect(platform.every((x: any) => x.customerId === undefined)).toBe(true);
    expect(platform.map((x: any) => x.id)).toContain(platformAccount);
  });

  it('paginates newest first with stable cursors and filters by customer and currency', async () => {
    const henry = await newCustomer(a, 'Henry Ward');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await a.api.post('/customers/external-accounts', usd(henry))).body.id);
    const mxn = await a.api.post('/customers/external-accounts', {
      customerId: henry,
      currency: 'MXN',
      accountInfo: { accountType: 'MXN_ACCOUNT', clabeNumber: '032180000118359719', beneficiary: person },
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await a.api.get('/customers/external-accounts', { customerId: henry, currency: 'USD', limit: 2, cursor });
      expect(res.status).toBe(200);
      expect(res.body.totalCount).toBe(5);
      seen.push(...res.body.data.map((x: any) => x.id));
      if (!res.body.hasMore) {
        expect(res.body.nextCursor).toBeUndefined();
        break;
      }
      cursor = res.body.nextCursor;
    }
    expect(seen).toEqual([...ids].reverse());
    const onlyMxn = (await a.api.get('/customers/external-accounts', { customerId: henry, currency: 'MXN' })).body;
    expect(onlyMxn.data.map((x: any) => x.id)).toEqual([mxn.body.id]);
    const platformUsd = (await a.api.get('/platform/external-accounts', { currency: 'USDC' })).body.data;
    expect(platformUsd.every((x: any) => x.currency === 'USDC')).toBe(true);
  });

  it('rejects bad list queries', async () => {
    const limit = await a.api.get('/customers/external-accounts', { limit: 0 });
    expectError(limit, 400, 'INVALID_INPUT');
    expect(limit.body.details.errors[0]).toMatchObject({ field: 'querystring.limit', constraint: 'minimum' });
    expect((await a.api.get('/platform/external-accounts', { cursor: 'garbage' })).body.details.errors[0].field).toBe('querystring.cursor');
    expect((await a.api.get('/customers/external-accounts', { currency: 'usd' })).body.details.errors[0].field).toBe('querystring.currency');
  });

  it('delete then get is 404, and a second delete is 404', async () => {
    const id = (await a.api.post('/customers/external-accounts', usd(bob))).body.id;
    const deleted = await a.api.delete(`/customers/external-accounts/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expectError(await a.api.get(`/customers/external-accounts/${id}`), 404, 'NOT_FOUND');
    expectError(await a.api.delete(`/customers/external-accounts/${id}`), 404, 'NOT_FOUND');
    const listed = (await a.api.get('/customers/external-accounts', { customerId: bob, limit: 100 })).body.data.map((x: any) => x.id);
    expect(listed).not.toContain(id);

    const other = { ...wallet, accountInfo: { ...wallet.accountInfo, address: '11111111111111111111111111111111' } };
    const pid = (await a.api.post('/platform/external-accounts', other)).body.id;
    expect((await a.api.delete(`/platform/external-accounts/${pid}`)).status).toBe(204);
    expectError(await a.api.get(`/platform/external-accounts/${pid}`), 404, 'NOT_FOUND');
  });

  it('getExternalAccount serves other modules and hides deleted or foreign accounts', async () => {
    const service = t.corridor.services.externalAccounts;
    const db = t.corridor.database.db;
    const account = await service.getExternalAccount(db, a.platform.id, customerAccount);
    expect(account).toMatchObject({ id: customerAccount, customerId: alice, currency: 'USD', accountType: 'USD_ACCOUNT', status: 'ACTIVE', paymentRails: ['ACH', 'WIRE'] });
    expect(account.identifier).toBe(account.accountInfo.accountNumber);
    expect(service.present(account).id).toBe(customerAccount);
    await expect(service.getExternalAccount(db, a.platform.id, otherPlatformAccount)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await service.findExternalAccount(db, b.platform.id, otherPlatformAccount)).toBeDefined();
  });

  it('deleteCustomerAccounts removes only that customer\'s accounts', async () => {
    const service = t.corridor.services.externalAccounts;
    const ivy = await newCustomer(a, 'Ivy Chen');
    await a.api.post('/customers/external-accounts', usd(ivy, { defaultUmaDepositAccount: true }));
    await a.api.post('/customers/external-accounts', usd(ivy));
    const aliceBefore = (await a.api.get('/customers/external-accounts', { customerId: alice })).body.totalCount;
    expect(await service.deleteCustomerAccounts(t.corridor.database.db, a.platform, ivy)).toBe(2);
    expect((await a.api.get('/customers/external-accounts', { customerId: ivy })).body.totalCount).toBe(0);
    expect((await a.api.get('/customers/external-accounts', { customerId: alice })).body.totalCount).toBe(aliceBefore);
  });

  it('deleting a customer deletes its external accounts', async () => {
    const jay = await newCustomer(a, 'Jay Park');
    const created = await a.api.post('/customers/external-accounts', usd(jay));
    expect((await a.api.delete(`/customers/${jay}`)).status).toBe(200);
    expectError(await a.api.get(`/customers/external-accounts/${created.body.id}`), 404, 'NOT_FOUND');
    expect((await a.api.get('/customers/external-accounts', { customerId: jay })).body.totalCount).toBe(0);
  });
});

describe('authentication', () => {
  it.each([
    ['POST', '/customers/external-accounts'],
    ['GET', '/customers/external-accounts'],
    ['GET', '/customers/external-accounts/ExternalAccount:x'],
    ['DELETE', '/customers/external-accounts/ExternalAccount:x'],
    ['POST', '/platform/external-accounts'],
    ['GET', '/platform/external-accounts'],
    ['GET', '/platform/external-accounts/ExternalAccount:x'],
    ['DELETE', '/platform/external-accounts/ExternalAccount:x'],
  ])('%s %s without credentials is 401', async (method, path) => {
    const res = await t.anonymous.request({ method: method as any, path, body: method === 'POST' ? usd(alice) : undefined });
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it('a VIEW token can read but not create or delete', async () => {
    const token = (await a.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] })).body;
    const { apiClient } = await import('../../../test/support/app.js');
    const viewer = apiClient(t.corridor, { clientId: token.clientId, clientSecret: token.clientSecret });
    expect((await viewer.get('/customers/external-accounts')).status).toBe(200);
    expectError(await viewer.post('/customers/external-accounts', usd(alice)), 403, 'PERMISSION_DENIED');
    expectError(await viewer.delete('/platform/external-accounts/ExternalAccount:x'), 403, 'PERMISSION_DENIED');
  });
});
