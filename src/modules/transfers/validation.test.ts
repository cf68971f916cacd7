import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/errors.js';

let t: TestApp;
let p: TestPlatform;
let other: TestPlatform;
let alice: { id: string; usd: string; eur: string; external: string; externalEur: string };
let bob: { id: string; usd: string; external: string };
let platformExternal: string;
let counter = 30_000;

const person = { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Maria Walker', birthDate: '1985-06-30', nationality: 'US' };

async function accountOf(platform: TestPlatform, customerId: string, currency: string): Promise<string> {
  return (await platform.api.get('/customers/internal-accounts', { customerId, currency })).body.data[0].id;
}

async function external(platform: TestPlatform, customerId: string | undefined, currency = 'USD'): Promise<string> {
  const accountInfo =
    currency === 'USD'
      ? { accountType: 'USD_ACCOUNT', accountNumber: `${++counter}001`, routingNumber: '021000021', beneficiary: person }
      : { accountType: 'EUR_ACCOUNT', iban: 'DE89370400440532013000', beneficiary: { ...person, address: { line1: 'Hauptstr. 1', postalCode: '10115', country: 'DE' } } };
  const res = await platform.api.post(customerId ? '/customers/external-accounts' : '/platform/external-accounts', {
    ...(customerId && { customerId }),
    currency,
    accountInfo,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function customer(platform: TestPlatform, fullName: string): Promise<string> {
  const res = await platform.api.post('/customers', { customerType: 'INDIVIDUAL', fullName, region: 'US' });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function countRows(table: 'transactions' | 'ledger_transfers' | 'jobs', platformId = p.platform.id): Promise<number> {
  const row = await t.corridor.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('platform_id', '=', platformId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const out = (source: string, destination: string, amount = 1_000) => ({ source: { accountId: source }, destination: { accountId: destination }, amount });

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  other = await t.createPlatform();
  const a = await customer(p, 'Alice Walker');
  const b = await customer(p, 'Bob Stone');
  alice = { id: a, usd: await accountOf(p, a, 'USD'), eur: await accountOf(p, a, 'EUR'), external: await external(p, a), externalEur: await external(p, a, 'EUR') };
  bob = { id: b, usd: await accountOf(p, b, 'USD'), external: await external(p, b) };
  platformExternal = await external(p, undefined);
  await p.api.post(`/sandbox/internal-accounts/${alice.usd}/fund`, { amount: 100_000 });
});
afterAll(() => t.close());

describe('transfer request validation', () => {
  it.each([
    ['amount missing', { source: { accountId: 'x' }, destination: { accountId: 'y' } }, 'amount', 'required'],
    ['source missing', { destination: { accountId: 'y' }, amount: 100 }, 'source', 'required'],
    ['accountId missing', { source: {}, destination: { accountId: 'y' }, amount: 100 }, 'source.accountId', 'required'],
    ['unknown field', { source: { accountId: 'x' }, destination: { accountId: 'y' }, amount: 100, memo: 'hi' }, 'memo', 'additionalProperties'],
    ['unknown nested field', { source: { accountId: 'x', currency: 'USD' }, destination: { accountId: 'y' }, amount: 100 }, 'source.currency', 'additionalProperties'],
    ['amount as a string', { source: { accountId: 'x' }, destination: { accountId: 'y' }, amount: '100' }, 'amount', 'type'],
    ['fractional amount', { source: { accountId: 'x' }, destination: { accountId: 'y' }, amount: 1.5 }, 'amount', 'type'],
    ['zero amount', { source: { accountId: 'x' }, destination: { accountId: 'y' }, amount: 0 }, 'amount', 'minimum'],
    ['amount over 9e15', { source: { accountId: 'x' }, destination: { accountId: 'y' }, amount: 9_000_000_000_000_001 }, 'amount', 'maximum'],
    ['accountId as a number', { source: { accountId: 5 }, destination: { accountId: 'y' }, amount: 100 }, 'source.accountId', 'type'],
  ])('400 INVALID_INPUT for %s, on both endpoints', async (_name, body, field, constraint) => {
    for (const path of ['/transfer-out', '/transfer-in']) {
      const res = await p.api.post(path, body);
      expectError(res, 400, 'INVALID_INPUT', field);
      expect(res.body.details.errors).toContainEqual(expect.objectContaining({ field, constraint }));
    }
  });

  it('404 for unknown accounts and for another platform\'s accounts, naming the field', async () => {
    expectError(await p.api.post('/transfer-out', out('InternalAccount:nope', alice.external)), 404, 'NOT_FOUND', 'source.accountId');
    expectError(await p.api.post('/transfer-out', out(alice.usd, 'ExternalAccount:nope')), 404, 'NOT_FOUND', 'destination.accountId');
    expectError(await p.api.post('/transfer-in', out('ExternalAccount:nope', alice.usd)), 404, 'NOT_FOUND', 'source.accountId');
    expectError(await other.api.post('/transfer-out', out(alice.usd, alice.external)), 404, 'NOT_FOUND');
    expectError(await other.api.post('/transfer-in', out(alice.external, alice.usd)), 404, 'NOT_FOUND');
    // Swapped directions name accounts of the wrong kind: not found as what they should be.
    expectError(await p.api.post('/transfer-out', out(alice.external, alice.usd)), 404, 'NOT_FOUND', 'source.accountId');
  });

  it('400 when the accounts belong to different owners', async () => {
    expectError(await p.api.post('/transfer-out', out(alice.usd, bob.external)), 400, 'INVALID_INPUT', 'destination.accountId');
    expectError(await p.api.post('/transfer-out', out(alice.usd, platformExternal)), 400, 'INVALID_INPUT', 'destination.accountId');
    expectError(await p.api.post('/transfer-in', out(bob.external, alice.usd)), 400, 'INVALID_INPUT', 'source.accountId');
  });

  it('400 INVALID_CURRENCY across currencies, naming the external account', async () => {
    const res = await p.api.post('/transfer-out', out(alice.eur, alice.external));
    expectError(res, 400, 'INVALID_CURRENCY', 'destination.accountId');
    expect(res.body.details.errors[0].constraint).toBe('currency');
    expectError(await p.api.post('/transfer-in', out(alice.externalEur, alice.usd)), 400, 'INVALID_CURRENCY', 'source.accountId');
  });

  it('400 on a transfer in from an account that cannot be pulled from (no ACH or SEPA debit)', async () => {
    const clabe = await p.api.post('/customers/external-accounts', {
      customerId: alice.id,
      currency: 'MXN',
      accountInfo: { accountType: 'MXN_ACCOUNT', clabeNumber: '032180000118359719', beneficiary: person },
    });
    expect(clabe.status, JSON.stringify(clabe.body)).toBe(201);
    const res = await p.api.post('/transfer-in', out(clabe.body.id, await accountOf(p, alice.id, 'MXN')));
    expectError(res, 400, 'INVALID_INPUT', 'source.accountId');
    expect(res.body.details.errors[0].constraint).toBe('accountType');
    expect((await p.api.post('/transfer-in', out(alice.externalEur, alice.eur))).status).toBe(201);
  });

  it('400 AMOUNT_OUT_OF_RANGE outside the platform\'s limits for the currency', async () => {
    const low = await p.api.post('/transfer-out', out(alice.usd, alice.external, 99));
    expectError(low, 400, 'AMOUNT_OUT_OF_RANGE', 'amount');
    expect(low.body.details).toMatchObject({ minAmount: 100, maxAmount: 100_000_000 });
    expectError(await p.api.post('/transfer-in', out(alice.external, alice.usd, 100_000_001)), 400, 'AMOUNT_OUT_OF_RANGE', 'amount');
  });

  it('400 INSUFFICIENT_FUNDS leaves nothing behind: no transaction, hold, job or event', async () => {
    const before = { tx: await countRows('transactions'), legs: await countRows('ledger_transfers'), jobs: await countRows('jobs') };
    const res = await p.api.post('/transfer-out', out(bob.usd, bob.external), { 'idempotency-key': 'broke-1' });
    expectError(res, 400, 'INSUFFICIENT_FUNDS');
    expect({ tx: await countRows('transactions'), legs: await countRows('ledger_transfers'), jobs: await countRows('jobs') }).toEqual(before);
    const balance = (await t.corridor.services.ledger.balances(t.corridor.database.db, [bob.usd])).get(bob.usd)!;
    expect(balance).toMatchObject({ available: 0, posted: 0 });
    // The failed request released its key: funding and retrying with it works.
    await p.api.post(`/sandbox/internal-accounts/${bob.usd}/fund`, { amount: 1_000 });
    expect((await p.api.post('/transfer-out', out(bob.usd, bob.external), { 'idempotency-key': 'broke-1' })).status).toBe(201);
  });

  it('400 for embedded-wallet sources (they need the owner\'s signature)', async () => {
    const w = await t.createPlatform();
    expect((await w.api.patch('/config', { embeddedWallets: { currencies: ['USD'] } })).status).toBe(200);
    const c = await customer(w, 'Wendy Wallet');
    const accounts = (await w.api.get('/customers/internal-accounts', { customerId: c, currency: 'USD' })).body.data;
    const wallet = accounts.find((a: { type: string }) => a.type === 'EMBEDDED_WALLET').id;
    const res = await w.api.post('/transfer-out', out(wallet, await external(w, c)));
    expectError(res, 400, 'INVALID_INPUT', 'source.accountId');
    expect(res.body.details.errors[0].constraint).toBe('accountType');
  });

  it('501 on a production platform (no rail configured), with nothing held or written', async () => {
    const live = await t.createPlatform({ mode: 'PRODUCTION' });
    const c = await customer(live, 'Lena Live');
    const usd = await accountOf(live, c, 'USD');
    const ext = await external(live, c);
    expectError(await live.api.post('/transfer-out', out(usd, ext)), 501, 'NOT_IMPLEMENTED');
    expectError(await live.api.post('/transfer-in', out(ext, usd)), 501, 'NOT_IMPLEMENTED');
    expect(await countRows('transactions', live.platform.id)).toBe(0);
    expect(await countRows('ledger_transfers', live.platform.id)).toBe(0);
    expect(await countRows('jobs', live.platform.id)).toBe(0);
  });

  it('401 without credentials, 403 for a token without TRANSACT', async () => {
    expectError(await t.anonymous.post('/transfer-out', out(alice.usd, alice.external)), 401, 'UNAUTHORIZED');
    const token = await p.api.post('/tokens', { name: 'read only', permissions: ['VIEW'] });
    const viewer = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    expectError(await viewer.post('/transfer-out', out(alice.usd, alice.external)), 403, 'PERMISSION_DENIED');
    expectError(await viewer.post('/transfer-in', out(alice.external, alice.usd)), 403, 'PERMISSION_DENIED');
  });
});
