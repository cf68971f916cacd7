import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestPlatform } from '../../../test/support/app.js';
import { expectError, fund, usdAccount } from '../../../test/support/quotes.js';
import { completeIndividual, expectStatus, uploadDocument, verifiedIndividual, startAppWithDocuments } from '../../../test/support/verification.js';

let t: TestApp;
let unregulated: TestPlatform;
let regulated: TestPlatform;

async function accountsOf(p: TestPlatform, customerId: string): Promise<Record<string, string>> {
  const list = await p.api.get('/customers/internal-accounts', { customerId, limit: 100 });
  return Object.fromEntries(list.body.data.filter((a: { type: string }) => a.type !== 'EMBEDDED_WALLET').map((a: { id: string; balance: { currency: { code: string } } }) => [a.balance.currency.code, a.id]));
}

/** A funded customer with a USD payout account of their own. */
async function sender(p: TestPlatform, customer: { id: string }) {
  const accounts = await accountsOf(p, customer.id);
  await fund(p, accounts.USD, 1_000_000);
  await fund(p, accounts.EUR, 1_000_000);
  return { accounts, payout: await usdAccount(p, customer.id, '001') };
}

const quoteBody = (from: string, to: string) => ({
  source: { sourceType: 'ACCOUNT', accountId: from },
  destination: { destinationType: 'ACCOUNT', accountId: to },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 10_000,
});
const transferBody = (from: string, to: string) => ({ source: { accountId: from }, destination: { accountId: to }, amount: 5_000 });

beforeAll(async () => {
  t = await startAppWithDocuments();
  unregulated = await t.createPlatform({ regulated: false });
  regulated = await t.createPlatform({ regulated: true });
});
afterAll(() => t.close());

describe('the send rule on a platform that is not a regulated institution', () => {
  it('an unverified customer cannot quote, execute or transfer out: 403 USER_NOT_READY', async () => {
    const customer = await completeIndividual(unregulated, 'Una Verified');
    const { accounts, payout } = await sender(unregulated, customer);
    const quote = await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout));
    expect(quote.status).toBe(403);
    expect(quote.body).toEqual({
      status: 403,
      code: 'USER_NOT_READY',
      message: expect.stringContaining(`customer ${customer.id} is not verified`),
      details: { customerId: customer.id, verificationStatus: 'UNVERIFIED' },
    });
    expectError(await unregulated.api.post('/quotes', { ...quoteBody(accounts.EUR, payout), immediatelyExecute: true }), 403, 'USER_NOT_READY');
    expectError(await unregulated.api.post('/transfer-out', transferBody(accounts.USD, payout)), 403, 'USER_NOT_READY');
    const transactions = await unregulated.api.get('/transactions', { customerId: customer.id });
    expect(transactions.body.totalCount).toBe(0);
  });

  it('a pending or rejected customer cannot send either', async () => {
    for (const name of ['Pat Pending 001', 'Rex Rejected 002']) {
      const customer = await completeIndividual(unregulated, name);
      await uploadDocument(unregulated, customer.id);
      await unregulated.api.post('/verifications', { customerId: customer.id });
      const { accounts, payout } = await sender(unregulated, customer);
      expectError(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 403, 'USER_NOT_READY');
      expectError(await unregulated.api.post('/transfer-out', transferBody(accounts.USD, payout)), 403, 'USER_NOT_READY');
    }
  });

  it('a verified customer sends: quote, execute and transfer out succeed', async () => {
    const customer = await verifiedIndividual(unregulated, 'Vera Verified');
    const { accounts, payout } = await sender(unregulated, customer);
    const quote = expectStatus(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 201);
    expect(expectStatus(await unregulated.api.post(`/quotes/${quote.id}/execute`), 200).status).toBe('PROCESSING');
    expectStatus(await unregulated.api.post('/transfer-out', transferBody(accounts.USD, payout)), 201);
  });

  it('quoting is refused once the customer lost their approval, though the customer was read for an earlier quote', async () => {
    const customer = await verifiedIndividual(unregulated, 'Quinn Quoted');
    const { accounts, payout } = await sender(unregulated, customer);
    expectStatus(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 201);
    expectStatus(await unregulated.api.patch(`/customers/${customer.id}`, { customerType: 'INDIVIDUAL', fullName: 'Quinn Quoted 002' }), 200);
    expect(expectStatus(await unregulated.api.post('/verifications', { customerId: customer.id }), 200).verificationStatus).toBe('REJECTED');
    expectError(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 403, 'USER_NOT_READY');
  });

  it('a customer refused before verification sends once approved (the refusal was not remembered)', async () => {
    const customer = await completeIndividual(unregulated, 'Ada Afterwards');
    const { accounts, payout } = await sender(unregulated, customer);
    expectError(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 403, 'USER_NOT_READY');
    expectError(await unregulated.api.post('/transfer-out', transferBody(accounts.USD, payout)), 403, 'USER_NOT_READY');
    await uploadDocument(unregulated, customer.id);
    expect(expectStatus(await unregulated.api.post('/verifications', { customerId: customer.id }), 200).verificationStatus).toBe('APPROVED');
    const quote = expectStatus(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 201);
    expect(expectStatus(await unregulated.api.post(`/quotes/${quote.id}/execute`), 200).status).toBe('PROCESSING');
    expectStatus(await unregulated.api.post('/transfer-out', transferBody(accounts.USD, payout)), 201);
  });

  it('executing is refused when the customer lost their approval after quoting', async () => {
    const customer = await verifiedIndividual(unregulated, 'Lou Later');
    const { accounts, payout } = await sender(unregulated, customer);
    const quote = expectStatus(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 201);
    expectStatus(await unregulated.api.patch(`/customers/${customer.id}`, { customerType: 'INDIVIDUAL', fullName: 'Lou Later 002' }), 200);
    expect(expectStatus(await unregulated.api.post('/verifications', { customerId: customer.id }), 200).verificationStatus).toBe('REJECTED');
    expectError(await unregulated.api.post(`/quotes/${quote.id}/execute`), 403, 'USER_NOT_READY');
    expect((await unregulated.api.get(`/quotes/${quote.id}`)).body.status).toBe('PENDING');
  });

  it('receiving and the platform\'s own money are not gated', async () => {
    const receiverCustomer = await completeIndividual(unregulated, 'Rita Receiver');
    const payout = await usdAccount(unregulated, receiverCustomer.id, '001');
    const verified = await verifiedIndividual(unregulated, 'Sam Sender');
    const { accounts } = await sender(unregulated, verified);
    // An unverified customer may be paid.
    expectStatus(await unregulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 201);
    // Money coming in is not a send.
    const incoming = await usdAccount(unregulated, receiverCustomer.id, '001');
    const receiving = await accountsOf(unregulated, receiverCustomer.id);
    expectStatus(await unregulated.api.post('/transfer-in', { source: { accountId: incoming }, destination: { accountId: receiving.USD }, amount: 5_000 }), 201);
  });
});

describe('regulated platforms verify their customers themselves', () => {
  it('an unverified customer sends', async () => {
    const customer = await completeIndividual(regulated, 'Reggie Regulated');
    const { accounts, payout } = await sender(regulated, customer);
    expectStatus(await regulated.api.post('/quotes', quoteBody(accounts.EUR, payout)), 201);
    expectStatus(await regulated.api.post('/transfer-out', transferBody(accounts.USD, payout)), 201);
  });
});
