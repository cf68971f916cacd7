import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { sandboxRail } from '../rails/sandbox-rail.js';
import { DRIVE_JOB, STEP_JOB } from './driver.js';
import { watchTransitions } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let counter = 40_000;

const person = { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Maria Walker', birthDate: '1985-06-30', nationality: 'US' };

async function customerWithAccounts(platform: TestPlatform, fullName: string, fund: number) {
  const created = await platform.api.post('/customers', { customerType: 'INDIVIDUAL', fullName, region: 'US' });
  const usd = (await platform.api.get('/customers/internal-accounts', { customerId: created.body.id, currency: 'USD' })).body.data[0].id as string;
  if (fund > 0) expect((await platform.api.post(`/sandbox/internal-accounts/${usd}/fund`, { amount: fund })).status).toBe(200);
  return { id: created.body.id as string, usd };
}

async function external(platform: TestPlatform, customerId: string, suffix: string): Promise<string> {
  const res = await platform.api.post('/customers/external-accounts', {
    customerId,
    currency: 'USD',
    accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: `${++counter}${suffix}`, routingNumber: '021000021', beneficiary: person },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function balance(app: TestApp, accountId: string) {
  const b = (await app.corridor.services.ledger.balances(app.corridor.database.db, [accountId])).get(accountId)!;
  return { available: b.available, total: b.posted };
}

async function ledgerIsClean(app: TestApp, platformId: string) {
  const { database, services } = app.corridor;
  expect((await services.ledger.verify(database.db, platformId)).problems).toEqual([]);
  const held = await services.ledger.transactionsWithPendingLegs(database.db, platformId);
  expect(await services.transactions.terminalAmong(database.db, held)).toEqual([]);
}

const out = (source: string, destination: string, amount: number) => ({ source: { accountId: source }, destination: { accountId: destination }, amount });

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

describe('Idempotency-Key on POST /transfer-out', () => {
  it('a replay answers the accepted transfer and moves no more money; another body is 422', async () => {
    const c = await customerWithAccounts(p, 'Ida Empotent', 10_000);
    const destination = await external(p, c.id, '001');
    const headers = { 'idempotency-key': 'transfer-once' };
    const first = await p.api.post('/transfer-out', out(c.usd, destination, 4_000), headers);
    expect(first.status).toBe(201);
    expect(first.body.status).toBe('PROCESSING');
    const again = await p.api.post('/transfer-out', out(c.usd, destination, 4_000), headers);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The sandbox rail's later outcome was planned in the acceptance itself: the replay is the first answer.
    expect(again.body).toEqual(first.body);
    expect(await balance(t, c.usd)).toEqual({ available: 6_000, total: 10_000 });
    const listed = await p.api.get('/transactions', { customerId: c.id });
    expect(listed.body.totalCount).toBe(1);
    expect((await p.api.post('/transfer-out', out(c.usd, destination, 4_001), headers)).status).toBe(422);
  });

  it('a replay of a transfer the rail failed at once answers FAILED, as the first answer did, and releases nothing twice', async () => {
    const c = await customerWithAccounts(p, 'Ivo Mmediate', 10_000);
    const destination = await external(p, c.id, '002');
    const headers = { 'idempotency-key': 'transfer-failed-at-once' };
    const first = await p.api.post('/transfer-out', out(c.usd, destination, 4_000), headers);
    expect(first.body).toMatchObject({ status: 'FAILED', failureDetail: 'INSUFFICIENT_FUNDS' });
    const again = await p.api.post('/transfer-out', out(c.usd, destination, 4_000), headers);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The rail answered after the acceptance committed; the answer replaced the provisional record.
    expect(again.body).toEqual(first.body);
    expect(await balance(t, c.usd)).toEqual({ available: 10_000, total: 10_000 });
  });
});

describe('concurrent transfers against one balance', () => {
  it('200 parallel transfer-outs against a balance for 100: exactly 100 succeed and the balance ends at 0', async () => {
    const c = await customerWithAccounts(p, 'Connie Current', 100 * 150);
    const destination = await external(p, c.id, '001');
    const results = await Promise.all(Array.from({ length: 200 }, () => p.api.post('/transfer-out', out(c.usd, destination, 150))));
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(accepted).toHaveLength(100);
    expect(refused.every((r) => r.status === 400 && r.body.code === 'INSUFFICIENT_FUNDS')).toBe(true);
    expect(await balance(t, c.usd)).toEqual({ available: 0, total: 15_000 });

    await p.api.post('/sandbox/clock/advance', { seconds: 1 });
    for (const r of accepted) expect((await p.api.get(`/transactions/${r.body.id}`)).body.status).toBe('COMPLETED');
    expect(await balance(t, c.usd)).toEqual({ available: 0, total: 0 });
    expect((await p.api.get('/transactions', { customerId: c.id })).body.totalCount).toBe(100);
    await ledgerIsClean(t, p.platform.id);
  });

  it('40 parallel transfer-ins each get their own transaction and credit the account once', async () => {
    const c = await customerWithAccounts(p, 'Ines Inflow', 0);
    const source = await external(p, c.id, '001');
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => p.api.post('/transfer-in', { source: { accountId: source }, destination: { accountId: c.usd }, amount: 100 + i })));
    expect(results.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(40);
    await p.api.post('/sandbox/clock/advance', { seconds: 1 });
    for (const r of results) expect((await p.api.get(`/transactions/${r.body.id}`)).body.status).toBe('COMPLETED');
    expect(await balance(t, c.usd)).toEqual({ available: 40 * 100 + (39 * 40) / 2, total: 40 * 100 + (39 * 40) / 2 });
    await ledgerIsClean(t, p.platform.id);
  });
});

describe('durable delays', () => {
  it('a delay scheduled before a restart fires after it, in a new Corridor instance on the same database', async () => {
    const c = await customerWithAccounts(p, 'Rhea Start', 5_000);
    const slow = await p.api.post('/transfer-out', out(c.usd, await external(p, c.id, '005'), 1_000));
    const fine = await p.api.post('/transfer-out', out(c.usd, await external(p, c.id, '001'), 2_000));
    expect([slow.body.status, fine.body.status]).toEqual(['PROCESSING', 'PROCESSING']);
    await t.close();

    t = await startTestApp();
    p = { ...p, api: apiClient(t.corridor, p.credentials) };
    expect(await balance(t, c.usd)).toEqual({ available: 2_000, total: 5_000 });
    await p.api.post('/sandbox/clock/advance', { seconds: 1 });
    expect((await p.api.get(`/transactions/${fine.body.id}`)).body.status).toBe('COMPLETED');
    expect((await p.api.get(`/transactions/${slow.body.id}`)).body.status).toBe('PROCESSING');
    await p.api.post('/sandbox/clock/advance', { seconds: 29 });
    expect((await p.api.get(`/transactions/${slow.body.id}`)).body).toMatchObject({ status: 'FAILED', failureDetail: 'TIMEOUT' });
    expect(await balance(t, c.usd)).toEqual({ available: 3_000, total: 3_000 });
    await ledgerIsClean(t, p.platform.id);
  });

  it("accepts a sandbox transfer with a later outcome straight into PROCESSING: its step job, no recovery job, both events in order", async () => {
    const c = await customerWithAccounts(p, 'Stella Tement', 5_000);
    const res = await p.api.post('/transfer-out', out(c.usd, await external(p, c.id, '001'), 1_000));
    expect(res.body.status).toBe('PROCESSING');
    const jobs = await t.corridor.database.db
      .selectFrom('jobs')
      .select('kind')
      .where('kind', 'in', [STEP_JOB, DRIVE_JOB])
      .where(sql<string>`payload->>'transactionId'`, '=', res.body.id)
      .execute();
    expect(jobs.map((j) => j.kind)).toEqual([STEP_JOB]);
    const events = await t.corridor.database.db
      .selectFrom('events')
      .select(['type', sql<string>`data->>'status'`.as('status')])
      .where('type', 'like', 'OUTGOING_PAYMENT.%')
      .where(sql<string>`data->>'id'`, '=', res.body.id)
      .orderBy('id')
      .execute();
    expect(events).toEqual([
      { type: 'OUTGOING_PAYMENT.PENDING', status: 'PENDING' },
      { type: 'OUTGOING_PAYMENT.PROCESSING', status: 'PROCESSING' },
    ]);
    expect(await balance(t, c.usd)).toEqual({ available: 4_000, total: 5_000 });
    await p.api.post('/sandbox/clock/advance', { seconds: 1 });
    expect((await p.api.get(`/transactions/${res.body.id}`)).body.status).toBe('COMPLETED');
    expect(await balance(t, c.usd)).toEqual({ available: 4_000, total: 4_000 });
    await ledgerIsClean(t, p.platform.id);
  });

  it('runs a transition hook watching PROCESSING: the transfer is then accepted PENDING and moved in a transaction', async () => {
    const c = await customerWithAccounts(p, 'Hugo Oked', 5_000);
    const destination = await external(p, c.id, '001');
    const watch = watchTransitions(t, ['PROCESSING']);
    let res;
    try {
      res = await p.api.post('/transfer-out', out(c.usd, destination, 1_000));
    } finally {
      watch.stop();
    }
    expect(res.body.status).toBe('PROCESSING');
    expect(watch.seen).toEqual([`${res.body.id} PROCESSING`]);
    expect(await balance(t, c.usd)).toEqual({ available: 4_000, total: 5_000 });
  });

  it('a transfer whose rail call never happened is initiated by the recovery job', async () => {
    const c = await customerWithAccounts(p, 'Rico Very', 5_000);
    const destination = await external(p, c.id, '001');
    const spy = vi.spyOn(sandboxRail, 'initiate').mockRejectedValueOnce(new Error('connection reset'));
    const res = await p.api.post('/transfer-out', out(c.usd, destination, 1_500));
    spy.mockRestore();
    // Accepted and held; the rail was unreachable, so it waits for the recovery job.
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PENDING');
    expect(await balance(t, c.usd)).toEqual({ available: 3_500, total: 5_000 });

    await t.close(); // and a restart on top, for good measure
    t = await startTestApp();
    p = { ...p, api: apiClient(t.corridor, p.credentials) };
    await p.api.post('/sandbox/clock/advance', { seconds: 10 });
    expect((await p.api.get(`/transactions/${res.body.id}`)).body.status).toBe('PROCESSING');
    await p.api.post('/sandbox/clock/advance', { seconds: 1 });
    expect((await p.api.get(`/transactions/${res.body.id}`)).body.status).toBe('COMPLETED');
    expect(await balance(t, c.usd)).toEqual({ available: 3_500, total: 3_500 });
    const types = await t.corridor.database.db
      .selectFrom('events')
      .select('type')
      .where('type', 'like', 'OUTGOING_PAYMENT.%')
      .where(sql<string>`data->>'id'`, '=', res.body.id)
      .orderBy('id')
      .execute();
    expect(types.map((e) => e.type)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED']);
    await ledgerIsClean(t, p.platform.id);
  });

  it('a rail that refuses after acceptance fails the transfer and releases the hold', async () => {
    const c = await customerWithAccounts(p, 'Ray Fused', 5_000);
    const destination = await external(p, c.id, '001');
    const { ServiceError } = await import('../../core/errors.js');
    const spy = vi.spyOn(sandboxRail, 'initiate').mockRejectedValueOnce(new ServiceError('NOT_IMPLEMENTED', 'rail switched off'));
    const res = await p.api.post('/transfer-out', out(c.usd, destination, 1_500));
    spy.mockRestore();
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'FAILED', failureReason: 'COUNTERPARTY_POST_TX_FAILED', failureDetail: 'NO_RAIL_CONFIGURED' });
    expect(await balance(t, c.usd)).toEqual({ available: 5_000, total: 5_000 });
    await ledgerIsClean(t, p.platform.id);
  });
});
