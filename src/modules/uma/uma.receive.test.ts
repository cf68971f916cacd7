import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnce } from '../../../test/support/faults.js';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, balances, expectError, expectLedgerClean, newCustomer, transactionEvents, type TestCustomer } from '../../../test/support/quotes.js';
import { ADDRESS, uploadDocument } from '../../../test/support/verification.js';
import { releaseInFlightKeys } from '../../http/idempotency.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

let t: TestApp;
let p: TestPlatform;
let approving: TestPlatform;
let production: TestPlatform;
let receiver: WebhookReceiver;
let bob: TestCustomer;
let erin: TestCustomer;

const SENDER = '$success.usd@sandbox.uma.money';
const receive = (platform: TestPlatform, body: Record<string, unknown>, headers?: Record<string, string>) =>
  platform.api.post('/sandbox/uma/receive', { senderUmaAddress: SENDER, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 2_500, ...body }, headers);

/** Delivers the pending approval webhook with `answer` and returns the transaction afterwards. */
async function answered(id: string, answer: { status: number; body?: unknown }) {
  receiver.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? answer : { status: 200 }));
  await t.corridor.services.webhooks.deliverDue();
  return (await approving.api.get(`/transactions/${id}`)).body;
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  approving = await t.createPlatform();
  production = await t.createPlatform({ mode: 'PRODUCTION' });
  receiver = await startWebhookReceiver();
  expect((await approving.api.patch('/config', { webhookEndpoint: receiver.url })).status).toBe(200);
  bob = await newCustomer(p, 'Bob Ode');
  erin = await newCustomer(approving, 'Erin Vale');
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

describe('POST /sandbox/uma/receive', () => {
  it('credits the customer at once when the platform has no webhook endpoint', async () => {
    const res = await receive(p, { customerId: bob.id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      customerId: bob.id,
      source: { sourceType: 'UMA_ADDRESS', umaAddress: SENDER },
      destination: { destinationType: 'ACCOUNT', accountId: bob.accounts.USD, currency: 'USD' },
      receivedAmount: { amount: 2_500, currency: { code: 'USD' } },
      counterpartyInformation: { FULL_NAME: 'Sandbox Sender' },
    });
    expect((await balances(t, bob.accounts.USD)).available).toBe(2_500);
    expect(await transactionEvents(t, p.platform.id, res.body.id)).toEqual(['INCOMING_PAYMENT.COMPLETED']);
  });

  it('finds the receiver by UMA address too', async () => {
    const address = (await p.api.get(`/customers/${bob.id}`)).body.umaAddress;
    const res = await receive(p, { receiverUmaAddress: address.toUpperCase(), receivingCurrencyCode: 'EUR' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ customerId: bob.id, receivedAmount: { currency: { code: 'EUR' } } });
  });

  it('asks the platform first (INCOMING_PAYMENT.PENDING): 200 approves and credits', async () => {
    const res = await receive(approving, { customerId: erin.id });
    expect(res.body.status).toBe('PENDING');
    expect((await balances(t, erin.accounts.USD)).available).toBe(0);
    const after = await answered(res.body.id, { status: 200, body: { receiverCustomerInfo: { NATIONALITY: 'US' } } });
    expect(after.status).toBe('COMPLETED');
    expect((await balances(t, erin.accounts.USD)).available).toBe(2_500);
    expect(await transactionEvents(t, approving.platform.id, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
  });

  it('403 rejects: nothing is credited', async () => {
    const before = await balances(t, erin.accounts.USD);
    const res = await receive(approving, { customerId: erin.id });
    const after = await answered(res.body.id, { status: 403, body: { reason: 'RESTRICTED_JURISDICTION' } });
    expect(after.status).toBe('REJECTED');
    expect(await balances(t, erin.accounts.USD)).toEqual(before);
  });

  it('202 waits for POST /transactions/{id}/approve', async () => {
    const res = await receive(approving, { customerId: erin.id, receivingCurrencyAmount: 1_000 });
    expect((await answered(res.body.id, { status: 202 })).status).toBe('PENDING');
    const approved = await approving.api.post(`/transactions/${res.body.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.status).toBe('COMPLETED');
  });

  it('an approval whose credit no longer fits under the balance limit fails the payment (BALANCE_LIMIT)', async () => {
    const full = await newCustomer(approving, 'Fay Full');
    const funded = Number.MAX_SAFE_INTEGER - 1_000;
    for (const amount of [9_000_000_000_000_000, funded - 9_000_000_000_000_000]) {
      expect((await approving.api.post(`/sandbox/internal-accounts/${full.accounts.USD}/fund`, { amount })).status).toBe(200);
    }
    const res = await receive(approving, { customerId: full.id });
    expect(res.body.status).toBe('PENDING');
    const after = await answered(res.body.id, { status: 200 });
    expect(after).toMatchObject({ status: 'FAILED', failureReason: 'OFFRAMP_FAILED', failureDetail: 'BALANCE_LIMIT' });
    expect(await balances(t, full.accounts.USD)).toEqual({ available: funded, posted: funded });
    expect(await transactionEvents(t, approving.platform.id, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED']);
    await expectLedgerClean(t, approving.platform.id);
  });

  it('an answer that cannot be applied as it arrives is applied by a job, once', async () => {
    const before = await balances(t, erin.accounts.USD);
    const res = await receive(approving, { customerId: erin.id, receivingCurrencyAmount: 1_500 });
    // The database refuses the first attempt to move this transaction (as an outage would).
    const { db } = t.corridor.database;
    const drop = await failOnce(db, 'transactions', 'update', `new.id = '${res.body.id}'`);
    try {
      const after = await answered(res.body.id, { status: 200 });
      expect(after.status).toBe('PENDING');
      expect(t.logs.some((line) => line.includes('injected fault'))).toBe(true);
      await advance(approving, 1);
    } finally {
      await drop();
    }
    expect((await approving.api.get(`/transactions/${res.body.id}`)).body.status).toBe('COMPLETED');
    expect(await balances(t, erin.accounts.USD)).toEqual({ available: before.available + 1_500, posted: before.posted + 1_500 });
    expect(await transactionEvents(t, approving.platform.id, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
  });

  it('a retry of a request cut before its Idempotency-Key record was stored credits once', async () => {
    const key = `receive-crash-${Date.now()}`;
    const before = await balances(t, bob.accounts.USD);
    // The first attempt dies as it stores its answer, as a kill of the server right then would.
    const { db } = t.corridor.database;
    const drop = await failOnce(db, 'idempotency_keys', 'update', `new.key = '${key}' and new.status_code is not null`);
    try {
      await receive(p, { customerId: bob.id, receivingCurrencyAmount: 1_234 }, { 'idempotency-key': key });
    } finally {
      await drop();
    }
    await releaseInFlightKeys(t.corridor.database); // as the restart does
    const retry = await receive(p, { customerId: bob.id, receivingCurrencyAmount: 1_234 }, { 'idempotency-key': key });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    const replay = await receive(p, { customerId: bob.id, receivingCurrencyAmount: 1_234 }, { 'idempotency-key': key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(retry.body.id);
    const incoming = (await p.api.get('/transactions', { customerId: bob.id, type: 'INCOMING', limit: 100 })).body.data;
    expect(incoming.filter((tx: any) => tx.receivedAmount.amount === 1_234)).toHaveLength(1);
    expect(await balances(t, bob.accounts.USD)).toEqual({ available: before.available + 1_234, posted: before.posted + 1_234 });
  });

  it('refuses bad inputs with the exact envelope', async () => {
    const neither = await receive(p, {});
    expectError(neither, 400, 'INVALID_INPUT');
    expect(neither.body.details.errors).toEqual([{ field: 'receiverUmaAddress', constraint: 'required', message: expect.any(String) }]);
    const badSender = await receive(p, { customerId: bob.id, senderUmaAddress: 'someone' });
    expectError(badSender, 400, 'INVALID_UMA_ADDRESS');
    expect(badSender.body.details.errors[0].field).toBe('senderUmaAddress');
    expectError(await receive(p, { customerId: bob.id, senderUmaAddress: '$anyone@evil.example' }), 404, 'USER_NOT_FOUND');
    expect((await receive(p, { customerId: bob.id, senderUmaAddress: '$Someone@SANDBOX.uma.money', receivingCurrencyAmount: 100 })).status).toBe(200);
    const currency = await receive(p, { customerId: bob.id, receivingCurrencyCode: 'GBP' });
    expectError(currency, 400, 'INVALID_CURRENCY');
    expect(currency.body.details.errors[0].field).toBe('receivingCurrencyCode');
    const small = await receive(p, { customerId: bob.id, receivingCurrencyAmount: 5 });
    expectError(small, 400, 'AMOUNT_OUT_OF_RANGE');
    expect(small.body.details.errors[0]).toMatchObject({ field: 'receivingCurrencyAmount', constraint: 'minimum' });
    const extra = await receive(p, { customerId: bob.id, surprise: true });
    expectError(extra, 400, 'INVALID_INPUT');
    expect(extra.body.details.errors[0].field).toBe('surprise');
    const zero = await receive(p, { customerId: bob.id, receivingCurrencyAmount: 0 });
    expect(zero.body.details.errors[0]).toMatchObject({ field: 'receivingCurrencyAmount', constraint: 'minimum' });
    const mismatch = await receive(p, { customerId: bob.id, receiverUmaAddress: '$someone.else@example.com' });
    expectError(mismatch, 400, 'INVALID_INPUT');
  });

  it('refuses an amount worth more millisatoshis than an invoice holds exactly, below the platform maximum', async () => {
    const original = (await p.api.get('/config')).body.supportedCurrencies;
    const raised = original.map((c: any) => ({ ...c, ...(c.currencyCode === 'USD' && { maxAmount: 9_000_000_000_000_000 }) }));
    expect((await p.api.patch('/config', { supportedCurrencies: raised })).status).toBe(200);
    try {
      // A cent is about 10,900 msats: 9e15 cents would be about 1e20 msats, past 2^53 (and past a bigint).
      const huge = await receive(p, { customerId: bob.id, receivingCurrencyAmount: 9_000_000_000_000_000 });
      expectError(huge, 400, 'AMOUNT_OUT_OF_RANGE');
      expect(huge.body.details.errors[0]).toMatchObject({ field: 'receivingCurrencyAmount', constraint: 'maximum' });
    } finally {
      expect((await p.api.patch('/config', { supportedCurrencies: original })).status).toBe(200);
    }
  });

  it('404 for unknown and foreign customers, 403 on production platforms', async () => {
    expectError(await receive(p, { customerId: 'Customer:00000000-0000-7000-8000-000000000000' }), 404, 'USER_NOT_FOUND');
    expectError(await receive(p, { customerId: erin.id }), 404, 'USER_NOT_FOUND');
    expectError(await receive(p, { receiverUmaAddress: '$nobody@example.com' }), 404, 'USER_NOT_FOUND');
    expectError(await receive(production, { receiverUmaAddress: '$nobody@example.com' }), 403, 'SANDBOX_ONLY');
  });

  it('forwards the payment to the defaultUmaDepositAccount once it completed', async () => {
    const dana = await newCustomer(p, 'Dana Deposit');
    const bank = await p.api.post('/customers/external-accounts', {
      customerId: dana.id,
      currency: 'USD',
      defaultUmaDepositAccount: true,
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '555000001',
        routingNumber: '021000021',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Dana Deposit' },
      },
    });
    expect(bank.status, JSON.stringify(bank.body)).toBe(201);
    const eur = await receive(p, { customerId: dana.id, receivingCurrencyCode: 'EUR' });
    expectError(eur, 400, 'INVALID_CURRENCY');
    const res = await receive(p, { customerId: dana.id, receivingCurrencyAmount: 4_000 });
    expect(res.body.status).toBe('COMPLETED');
    await t.corridor.services.jobs.runDue(p.platform.id);
    const outgoing = (await p.api.get('/transactions', { customerId: dana.id, type: 'OUTGOING' })).body.data;
    expect(outgoing).toHaveLength(1);
    expect(outgoing[0]).toMatchObject({ destination: { accountId: bank.body.id }, receivedAmount: { amount: 4_000 } });
    await advance(p, 10);
    expect((await p.api.get(`/transactions/${outgoing[0].id}`)).body.status).toBe('COMPLETED');
    expect((await balances(t, dana.accounts.USD)).posted).toBe(0);
    // The job ran once; running jobs again forwards nothing more.
    await t.corridor.services.jobs.runDue(p.platform.id);
    expect((await p.api.get('/transactions', { customerId: dana.id, type: 'OUTGOING' })).body.data).toHaveLength(1);
    await expectLedgerClean(t, p.platform.id);
  });

  it('holds the forward of an unverified customer (the send rule), and makes it once the customer is verified', async () => {
    const unregulated = await t.createPlatform({ regulated: false });
    const uma = await newCustomer(unregulated, 'Uma Unverified');
    const bank = await unregulated.api.post('/customers/external-accounts', {
      customerId: uma.id,
      currency: 'USD',
      defaultUmaDepositAccount: true,
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '555000011', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Uma Unverified' } },
    });
    expect(bank.status, JSON.stringify(bank.body)).toBe(201);
    expect((await receive(unregulated, { customerId: uma.id, receivingCurrencyAmount: 3_000 })).body.status).toBe('COMPLETED');
    await t.corridor.services.jobs.runDue(unregulated.platform.id);
    const outgoing = () => unregulated.api.get('/transactions', { customerId: uma.id, type: 'OUTGOING' }).then((r) => r.body.data);
    expect(await outgoing()).toEqual([]);
    expect((await balances(t, uma.accounts.USD)).posted).toBe(3_000);

    expect((await unregulated.api.patch(`/customers/${uma.id}`, { customerType: 'INDIVIDUAL', address: ADDRESS })).status).toBe(200);
    await uploadDocument(unregulated, uma.id);
    expect((await unregulated.api.post('/verifications', { customerId: uma.id })).body.kycStatus).toBe('APPROVED');
    await t.corridor.services.jobs.runDue(unregulated.platform.id);
    const [forward] = await outgoing();
    expect(forward).toMatchObject({ destination: { accountId: bank.body.id }, receivedAmount: { amount: 3_000 } });
    await advance(unregulated, 10);
    expect((await unregulated.api.get(`/transactions/${forward.id}`)).body.status).toBe('COMPLETED');
    expect((await balances(t, uma.accounts.USD)).posted).toBe(0);
    await expectLedgerClean(t, unregulated.platform.id);
  });
});

/** A customer whose UMA payments are forwarded to a new USD bank account (defaultUmaDepositAccount). */
async function depositCustomer(platform: TestPlatform, name: string) {
  const customer = await newCustomer(platform, name);
  const bank = await platform.api.post('/customers/external-accounts', {
    customerId: customer.id,
    currency: 'USD',
    defaultUmaDepositAccount: true,
    accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '555000021', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: name } },
  });
  expect(bank.status, JSON.stringify(bank.body)).toBe(201);
  const forwards = async () => (await platform.api.get('/transactions', { customerId: customer.id, type: 'OUTGOING' })).body.data;
  return { customer, bank: bank.body, forwards };
}

describe('forwarding to the defaultUmaDepositAccount across failures', () => {
  it('the forward commits with the credit: a failure as the forward is scheduled leaves neither, and the retry forwards', async () => {
    const { customer, bank, forwards } = await depositCustomer(p, 'Dee Crash');
    const key = { 'idempotency-key': `forward-crash-${Date.now()}` };
    const drop = await failOnce(t.corridor.database.db, 'jobs', 'insert', "new.kind = 'uma.forward-deposit'");
    let first;
    try {
      first = await receive(p, { customerId: customer.id, receivingCurrencyAmount: 4_000 }, key);
    } finally {
      await drop();
    }
    await releaseInFlightKeys(t.corridor.database); // the failure stands for a kill: the restart frees the key
    const res = first.status === 200 ? first : await receive(p, { customerId: customer.id, receivingCurrencyAmount: 4_000 }, key);
    expect(res.body.status, JSON.stringify(res.body)).toBe('COMPLETED');
    await t.corridor.services.jobs.runDue(p.platform.id);
    const sent = await forwards();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ destination: { accountId: bank.id }, receivedAmount: { amount: 4_000 } });
    await advance(p, 10);
    expect((await balances(t, customer.accounts.USD)).posted).toBe(0);
    await expectLedgerClean(t, p.platform.id);
  });

  it('a payment approved long after it arrived is forwarded when it completes', async () => {
    const { customer, bank, forwards } = await depositCustomer(approving, 'Abe Approved-Late');
    const res = await receive(approving, { customerId: customer.id, receivingCurrencyAmount: 3_500 });
    expect(res.body.status).toBe('PENDING');
    await advance(approving, 2 * 3600);
    const approved = await approving.api.post(`/transactions/${res.body.id}/approve`, {});
    expect(approved.body.status, JSON.stringify(approved.body)).toBe('COMPLETED');
    await t.corridor.services.jobs.runDue(approving.platform.id);
    const sent = await forwards();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ destination: { accountId: bank.id }, receivedAmount: { amount: 3_500 } });
  });
});

describe('GET /uma-providers', () => {
  it('lists the sandbox provider on sandbox platforms, filterable and paginated', async () => {
    const res = await p.api.get('/uma-providers');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ hasMore: false, totalCount: 1 });
    expect(res.body.data[0]).toMatchObject({
      name: expect.any(String),
      domain: 'sandbox.uma.money',
      supportedRegions: expect.arrayContaining(['US', 'MX']),
      allowListStatus: true,
    });
    expect(res.body.data[0].supportedCurrencies.map((c: { code: string }) => c.code)).toEqual(['EUR', 'MXN', 'USD']);
    expect((await p.api.get('/uma-providers', { currencyCode: 'MXN', countryCode: 'MX' })).body.totalCount).toBe(1);
    expect((await p.api.get('/uma-providers', { currencyCode: 'GBP' })).body.data).toEqual([]);
    expect((await p.api.get('/uma-providers', { countryCode: 'JP', hasBlockedProviders: true })).body.data).toEqual([]);
    expect((await production.api.get('/uma-providers')).body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });

  it('refuses bad filters and needs credentials', async () => {
    expectError(await p.api.get('/uma-providers', { countryCode: 'usa' }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/uma-providers', { limit: 0 }), 400, 'INVALID_INPUT');
    expectError(await t.anonymous.get('/uma-providers'), 401, 'UNAUTHORIZED');
  });
});
