import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/errors.js';
import { changeCustomerAfterReads } from '../../../test/support/races.js';

let t: TestApp;
let p: TestPlatform;
let alice: { id: string; platformCustomerId: string; usd: string };
let counter = 20_000;

const person = { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Maria Walker', birthDate: '1985-06-30', nationality: 'US' };

async function newCustomer(platform: TestPlatform, fullName: string) {
  const created = await platform.api.post('/customers', { customerType: 'INDIVIDUAL', fullName, region: 'US' });
  expect(created.status).toBe(201);
  const usd = (await platform.api.get('/customers/internal-accounts', { customerId: created.body.id, currency: 'USD' })).body.data[0].id;
  return { id: created.body.id as string, platformCustomerId: created.body.platformCustomerId as string, usd: usd as string };
}

/** A USD external account whose number ends in `suffix` (the sandbox outcome). */
async function externalAccount(platform: TestPlatform, customerId: string | undefined, suffix: string): Promise<string> {
  const body = {
    ...(customerId && { customerId }),
    currency: 'USD',
    accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: `${++counter}${suffix}`, routingNumber: '021000021', beneficiary: person },
  };
  const res = await platform.api.post(customerId ? '/customers/external-accounts' : '/platform/external-accounts', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function balance(accountId: string): Promise<{ available: number; total: number }> {
  const b = (await t.corridor.services.ledger.balances(t.corridor.database.db, [accountId])).get(accountId)!;
  return { available: b.available, total: b.posted };
}

/** Payment events of a transaction, oldest first. */
async function paymentEvents(transactionId: string): Promise<string[]> {
  const rows = await t.corridor.database.db
    .selectFrom('events')
    .select('type')
    .where('platform_id', '=', p.platform.id)
    .where(sql<string>`data->>'id'`, '=', transactionId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.type);
}

async function ledgerStates(transactionId: string): Promise<string[]> {
  return (await t.corridor.services.ledger.transfersOf(t.corridor.database.db, p.platform.id, transactionId)).map((l) => l.state);
}

const advance = (seconds: number) => p.api.post('/sandbox/clock/advance', { seconds });
const getTx = async (id: string) => (await p.api.get(`/transactions/${id}`)).body;

function expectCreated(res: ApiResponse) {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Walker');
  expect((await p.api.post(`/sandbox/internal-accounts/${alice.usd}/fund`, { amount: 1_000_000 })).status).toBe(200);
});
// After whichever of this file's tests ran (all of them, or those picked with -t): the ledger
// verifies and no hold is left on a finished transfer. A failure here fails the run.
afterAll(async () => {
  try {
    await advance(60);
    const { database, services } = t.corridor;
    expect((await services.ledger.verify(database.db, p.platform.id)).problems).toEqual([]);
    const held = await services.ledger.transactionsWithPendingLegs(database.db, p.platform.id);
    expect(await services.transactions.terminalAmong(database.db, held)).toEqual([]);
    expect(held).toEqual([]);
  } finally {
    await t.close();
  }
});

describe('POST /transfer-out on the sandbox rail', () => {
  it('completions due together settle in one batch (one balance event for the account); a failure due with them still applies alone', async () => {
    const bob = await newCustomer(p, 'Bob Batch');
    await p.api.post(`/sandbox/internal-accounts/${bob.usd}/fund`, { amount: 100_000 });
    const [ok, rejected] = [await externalAccount(p, bob.id, '001'), await externalAccount(p, bob.id, '004')];
    const send = async (destination: string) =>
      expectCreated(await p.api.post('/transfer-out', { source: { accountId: bob.usd }, destination: { accountId: destination }, amount: 1_000 })).id as string;
    const completing = [await send(ok), await send(ok), await send(ok)];
    const failing = await send(rejected);
    const balanceEvents = async () =>
      (
        await t.corridor.database.db
          .selectFrom('events')
          .select('id')
          .where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED')
          .where(sql<string>`data->>'id'`, '=', bob.usd)
          .execute()
      ).length;
    const before = await balanceEvents();

    await advance(1);
    for (const id of completing) {
      expect(await getTx(id)).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
      expect(await paymentEvents(id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED']);
      expect(await ledgerStates(id)).toEqual(['POSTED']);
    }
    expect(await getTx(failing)).toMatchObject({ status: 'FAILED', failureDetail: 'BANK_REJECTED' });
    expect(await ledgerStates(failing)).toEqual(['VOIDED']);
    // One ledger call posted the three holds: one balance event, not three; the failure released its own.
    expect(await balanceEvents()).toBe(before + 2);
    expect(await balance(bob.usd)).toEqual({ available: 97_000, total: 97_000 });
    expect(t.logs.filter((line) => line.includes('job batch failed'))).toEqual([]);
    expect((await t.corridor.services.ledger.verify(t.corridor.database.db, p.platform.id)).problems).toEqual([]);
  });

  it('succeeds (other suffixes): held at once, PROCESSING, COMPLETED after ~1 s with the hold posted', async () => {
    const destination = await externalAccount(p, alice.id, '001');
    const before = await balance(alice.usd);
    const body = expectCreated(await p.api.post('/transfer-out', { source: { accountId: alice.usd }, destination: { accountId: destination }, amount: 2_500 }));
    expect(body).toMatchObject({
      id: expect.stringMatching(/^Transaction:/),
      status: 'PROCESSING',
      type: 'OUTGOING',
      source: { sourceType: 'ACCOUNT', accountId: alice.usd, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: destination, currency: 'USD' },
      customerId: alice.id,
      platformCustomerId: alice.platformCustomerId,
      sentAmount: { amount: 2_500, currency: { code: 'USD', decimals: 2 } },
      receivedAmount: { amount: 2_500, currency: { code: 'USD' } },
      fees: 0,
      reconciliationInstructions: { reference: expect.stringMatching(/^CR[0-9A-Z]{12}$/) },
    });
    expect(body.settledAt).toBeUndefined();
    expect(body.failureReason).toBeUndefined();
    expect(body.agentId).toBeUndefined();
    expect(await balance(alice.usd)).toEqual({ available: before.available - 2_500, total: before.total });
    expect(await paymentEvents(body.id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING']);
    expect(await ledgerStates(body.id)).toEqual(['PENDING']);

    await advance(1);
    const done = await getTx(body.id);
    expect(done).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
    expect(done.failureReason).toBeUndefined();
    expect(await balance(alice.usd)).toEqual({ available: before.available - 2_500, total: before.total - 2_500 });
    expect(await paymentEvents(body.id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED']);
    expect(await ledgerStates(body.id)).toEqual(['POSTED']);
    const completedEvent = await t.corridor.database.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'OUTGOING_PAYMENT.COMPLETED')
      .where(sql<string>`data->>'id'`, '=', body.id)
      .executeTakeFirstOrThrow();
    expect(completedEvent.data).toMatchObject({ id: body.id, status: 'COMPLETED', settledAt: done.settledAt });
  });

  it.each([
    ['002', 'INSUFFICIENT_FUNDS'],
    ['003', 'ACCOUNT_CLOSED'],
  ])('suffix %s fails at once (%s) and releases the hold in the same request', async (suffix, detail) => {
    const destination = await externalAccount(p, alice.id, suffix);
    const before = await balance(alice.usd);
    const body = expectCreated(await p.api.post('/transfer-out', { source: { accountId: alice.usd }, destination: { accountId: destination }, amount: 700 }));
    expect(body).toMatchObject({ status: 'FAILED', failureReason: 'COUNTERPARTY_POST_TX_FAILED', failureDetail: detail });
    expect(body.settledAt).toBeUndefined();
    expect(await balance(alice.usd)).toEqual(before);
    expect(await paymentEvents(body.id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.FAILED']);
    expect(await ledgerStates(body.id)).toEqual(['VOIDED']);
  });

  it.each([
    ['004', 'BANK_REJECTED', 1],
    ['005', 'TIMEOUT', 30],
  ])('suffix %s stays PROCESSING with the funds held, then fails (%s) after %i s', async (suffix, detail, seconds) => {
    const destination = await externalAccount(p, alice.id, suffix);
    const before = await balance(alice.usd);
    const body = expectCreated(await p.api.post('/transfer-out', { source: { accountId: alice.usd }, destination: { accountId: destination }, amount: 900 }));
    expect(body.status).toBe('PROCESSING');
    if (seconds > 1) {
      await advance(seconds - 1);
      expect((await getTx(body.id)).status).toBe('PROCESSING');
    }
    expect(await balance(alice.usd)).toEqual({ available: before.available - 900, total: before.total });
    await advance(1);
    expect(await getTx(body.id)).toMatchObject({ status: 'FAILED', failureReason: 'COUNTERPARTY_POST_TX_FAILED', failureDetail: detail });
    expect(await balance(alice.usd)).toEqual(before);
    expect(await paymentEvents(body.id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.FAILED']);
    expect(await ledgerStates(body.id)).toEqual(['VOIDED']);
  });

  it('one long clock advance settles and fails each transfer as of its due time, not the advance\'s end', async () => {
    const send = async (suffix: string) =>
      expectCreated(await p.api.post('/transfer-out', { source: { accountId: alice.usd }, destination: { accountId: await externalAccount(p, alice.id, suffix) }, amount: 100 }));
    const [completing, timingOut] = [await send('001'), await send('005')];
    await advance(3_600);
    const [completed, failed] = [await getTx(completing.id), await getTx(timingOut.id)];
    expect(completed.status).toBe('COMPLETED');
    expect(failed.status).toBe('FAILED');
    const after = (from: { createdAt: string }, at: string) => Date.parse(at) - Date.parse(from.createdAt);
    // To within the job runner's due-time window of a second.
    expect(after(completing, completed.settledAt)).toBeGreaterThanOrEqual(1_000);
    expect(after(completing, completed.settledAt)).toBeLessThan(2_000);
    expect(after(timingOut, failed.updatedAt)).toBeGreaterThanOrEqual(30_000);
    expect(after(timingOut, failed.updatedAt)).toBeLessThan(31_000);
  });

  it('moves the platform\'s own money to the platform\'s external account', async () => {
    const own = (await p.api.get('/platform/internal-accounts', { currency: 'USD' })).body.data[0].id;
    await p.api.post(`/sandbox/internal-accounts/${own}/fund`, { amount: 10_000 });
    const destination = await externalAccount(p, undefined, '001');
    const body = expectCreated(await p.api.post('/transfer-out', { source: { accountId: own }, destination: { accountId: destination }, amount: 10_000 }));
    expect(body).toMatchObject({ status: 'PROCESSING', customerId: p.platform.id, platformCustomerId: p.platform.id });
    for (const filter of ['customerId', 'platformCustomerId']) {
      const listed = (await p.api.get('/transactions', { [filter]: p.platform.id, limit: 100 })).body.data.map((x: { id: string }) => x.id);
      expect(listed).toEqual([body.id]);
    }
    await advance(1);
    expect((await getTx(body.id)).status).toBe('COMPLETED');
    expect(await balance(own)).toEqual({ available: 0, total: 0 });
  });

  it('records the agent that initiated it (service call with agentId)', async () => {
    const destination = await externalAccount(p, alice.id, '001');
    const { database } = t.corridor;
    const ctx = { platform: p.platform, agentId: 'Agent:test', tx: <T>(work: (trx: any) => Promise<T>) => database.db.transaction().execute(work) };
    const view = await t.corridor.services.transfers.transferOut(ctx, { source: { accountId: alice.usd }, destination: { accountId: destination }, amount: 100 });
    expect(view).toMatchObject({ status: 'PROCESSING', agentId: 'Agent:test' });
    expect((await getTx(view.id)).agentId).toBe('Agent:test');
    await advance(1);
    expect((await getTx(view.id)).status).toBe('COMPLETED');
  });
});

describe('POST /transfer-in on the sandbox rail', () => {
  it('completions due together each credit their account, settled in one batch', async () => {
    const carol = await newCustomer(p, 'Carol Batch');
    const source = await externalAccount(p, carol.id, '001');
    const pull = async (amount: number) =>
      expectCreated(await p.api.post('/transfer-in', { source: { accountId: source }, destination: { accountId: carol.usd }, amount })).id as string;
    const ids = [await pull(1_000), await pull(2_000), await pull(3_000)];
    await advance(1);
    for (const id of ids) {
      expect(await getTx(id)).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
      expect(await ledgerStates(id)).toEqual(['POSTED']);
    }
    expect(await balance(carol.usd)).toEqual({ available: 6_000, total: 6_000 });
    expect((await t.corridor.services.ledger.verify(t.corridor.database.db, p.platform.id)).problems).toEqual([]);
  });

  it('succeeds (other suffixes): nothing held, credited when it completes after ~1 s', async () => {
    const source = await externalAccount(p, alice.id, '009');
    const before = await balance(alice.usd);
    const body = expectCreated(await p.api.post('/transfer-in', { source: { accountId: source }, destination: { accountId: alice.usd }, amount: 12_550 }));
    expect(body).toMatchObject({
      status: 'PROCESSING',
      type: 'INCOMING',
      source: { sourceType: 'ACCOUNT', accountId: source, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: alice.usd, currency: 'USD' },
      customerId: alice.id,
      receivedAmount: { amount: 12_550, currency: { code: 'USD' } },
      reconciliationInstructions: { reference: expect.any(String) },
    });
    expect(body.sentAmount).toBeUndefined();
    expect(await balance(alice.usd)).toEqual(before);

    await advance(1);
    expect(await getTx(body.id)).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
    expect(await balance(alice.usd)).toEqual({ available: before.available + 12_550, total: before.total + 12_550 });
    expect(await paymentEvents(body.id)).toEqual(['INCOMING_PAYMENT.COMPLETED']);
    expect(await ledgerStates(body.id)).toEqual(['POSTED']);
  });

  it('a transfer in that the balance cannot take is refused; one that loses its room before it completes fails (BALANCE_LIMIT), alone or in a batch', async () => {
    const dave = await newCustomer(p, 'Dave Full');
    // Funded to 50,000,000 below the limit (a transfer in may be at most 100,000,000 here).
    const funded = Number.MAX_SAFE_INTEGER - 50_000_000;
    for (const amount of [9_000_000_000_000_000, funded - 9_000_000_000_000_000]) {
      expect((await p.api.post(`/sandbox/internal-accounts/${dave.usd}/fund`, { amount })).status).toBe(200);
    }
    const room = 50_000_000;
    const source = await externalAccount(p, dave.id, '001');
    const pull = async (amount: number) =>
      expectCreated(await p.api.post('/transfer-in', { source: { accountId: source }, destination: { accountId: dave.usd }, amount })).id as string;

    const refused = await p.api.post('/transfer-in', { source: { accountId: source }, destination: { accountId: dave.usd }, amount: room + 1 });
    expectError(refused, 400, 'AMOUNT_OUT_OF_RANGE');

    // Accepted with room to spare, then a deposit takes one unit of it before the credit.
    const late = await pull(room);
    expect((await p.api.post(`/sandbox/internal-accounts/${dave.usd}/fund`, { amount: 1 })).status).toBe(200);
    await advance(1);
    expect(await getTx(late)).toMatchObject({ status: 'FAILED', failureReason: 'OFFRAMP_FAILED', failureDetail: 'BALANCE_LIMIT' });
    expect(await paymentEvents(late)).toEqual(['INCOMING_PAYMENT.FAILED']);
    expect(await ledgerStates(late)).toEqual([]);

    // Each fits alone, not both: the batch that settles them together fails, then each runs alone.
    const half = Math.floor((room - 1) / 2) + 1;
    const both = [await pull(half), await pull(half)];
    await advance(1);
    const outcomes = await Promise.all(both.map(getTx));
    expect(outcomes.map((tx) => tx.status).sort()).toEqual(['COMPLETED', 'FAILED']);
    expect(outcomes.find((tx) => tx.status === 'FAILED')).toMatchObject({ failureReason: 'OFFRAMP_FAILED', failureDetail: 'BALANCE_LIMIT' });
    expect(await balance(dave.usd)).toEqual({ available: funded + 1 + half, total: funded + 1 + half });
    const jobs = await t.corridor.database.db.selectFrom('jobs').select('id').where('platform_id', '=', p.platform.id).where('kind', '=', 'transfers.step').execute();
    expect(jobs).toEqual([]);
    expect((await t.corridor.services.ledger.verify(t.corridor.database.db, p.platform.id)).problems).toEqual([]);
  });

  it.each([
    ['002', 'INSUFFICIENT_FUNDS', 0],
    ['003', 'ACCOUNT_CLOSED', 0],
    ['004', 'BANK_REJECTED', 1],
    ['005', 'TIMEOUT', 30],
  ])('suffix %s fails (%s) after %i s and credits nothing', async (suffix, detail, seconds) => {
    const source = await externalAccount(p, alice.id, suffix);
    const before = await balance(alice.usd);
    const body = expectCreated(await p.api.post('/transfer-in', { source: { accountId: source }, destination: { accountId: alice.usd }, amount: 5_000 }));
    if (seconds === 0) {
      expect(body).toMatchObject({ status: 'FAILED', failureReason: 'OFFRAMP_FAILED', failureDetail: detail });
    } else {
      expect(body.status).toBe('PROCESSING');
      if (seconds > 1) {
        await advance(seconds - 1);
        expect((await getTx(body.id)).status).toBe('PROCESSING');
      }
      await advance(1);
      expect(await getTx(body.id)).toMatchObject({ status: 'FAILED', failureReason: 'OFFRAMP_FAILED', failureDetail: detail });
    }
    expect(await balance(alice.usd)).toEqual(before);
    expect(await paymentEvents(body.id)).toEqual(['INCOMING_PAYMENT.FAILED']);
    expect(await ledgerStates(body.id)).toEqual([]);
  });
});

describe('POST /transfer-out decided on a customer row that changed before the write', () => {
  async function payer(name: string) {
    const c = await newCustomer(p, name);
    expect((await p.api.post(`/sandbox/internal-accounts/${c.usd}/fund`, { amount: 10_000 })).status).toBe(200);
    const body = { source: { accountId: c.usd }, destination: { accountId: await externalAccount(p, c.id, '001') }, amount: 100 };
    return { c, body };
  }

  it('reads it again and makes the transfer from the fresh row', async () => {
    const { c, body } = await payer('Dora Race');
    const race = changeCustomerAfterReads(t, c.id, 1);
    try {
      expectCreated(await p.api.post('/transfer-out', body));
      expect(race.reads()).toBe(2); // the first write was refused; the second read the new version
    } finally {
      race.restore();
    }
    expect(await balance(c.usd)).toEqual({ available: 9_900, total: 10_000 });
    expect((await p.api.get('/transactions', { customerId: c.id })).body.totalCount).toBe(1);
  });

  it('409 CONFLICT when it keeps changing, with nothing written or held', async () => {
    const { c, body } = await payer('Eddie Race');
    const race = changeCustomerAfterReads(t, c.id, 10);
    try {
      const res = await p.api.post('/transfer-out', body);
      expect([res.status, res.body.code]).toEqual([409, 'CONFLICT']);
      expect(race.reads()).toBe(3);
    } finally {
      race.restore();
    }
    expect(await balance(c.usd)).toEqual({ available: 10_000, total: 10_000 });
    expect((await p.api.get('/transactions', { customerId: c.id })).body.data).toEqual([]);
    expectCreated(await p.api.post('/transfer-out', body));
  });
});
