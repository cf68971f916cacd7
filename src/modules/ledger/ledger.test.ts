import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { sql } from 'kysely';
import { enqueueJobs } from '../../core/jobs.js';
import { transact } from '../../db/transact.js';
import type { Executor } from '../../db/database.js';
import { insertSystemAccount } from './repository.js';
import { createLedgerService } from './service.js';

let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

async function newAccount(platform: TestPlatform, currency = 'USD'): Promise<string> {
  const customer = await platform.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Ledger Tester' });
  const accounts = await platform.api.get('/customers/internal-accounts', { customerId: customer.body.id, currency });
  return accounts.body.data[0].id;
}

const ledger = () => t.corridor.services.ledger;
const db = () => t.corridor.database.db;

/** An account's INTERNAL_ACCOUNT.BALANCE_UPDATED events, by id (in the order they were prepared), as `ex` sees them. */
const balanceEventsOf = (ex: Executor, account: string) =>
  ex
    .selectFrom('events')
    .select(['data', 'created_at'])
    .where('platform_id', '=', p.platform.id)
    .where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED')
    .where(sql<string>`data->>'id'`, '=', account)
    .orderBy('id')
    .execute();

describe('POST /sandbox/internal-accounts/{id}/fund', () => {
  it('credits the account at once and returns it', async () => {
    const account = await newAccount(p);
    const funded = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 12_345 });
    expect(funded.status).toBe(200);
    expect(funded.body).toMatchObject({ id: account, balance: { amount: 12_345, currency: { code: 'USD' } }, totalBalance: { amount: 12_345 } });
    const again = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 55 });
    expect(again.body.balance.amount).toBe(12_400);
  });

  it('emits INTERNAL_ACCOUNT.BALANCE_UPDATED with the account as the API shows it', async () => {
    const account = await newAccount(p);
    const funded = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 700 });
    const events = await db().selectFrom('events').selectAll().where('platform_id', '=', p.platform.id).where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED').execute();
    const mine = events.filter((e) => (e.data as { id: string }).id === account);
    expect(mine).toHaveLength(1);
    expect(mine[0].data).toMatchObject({ id: account, balance: { amount: 700 }, totalBalance: { amount: 700 } });
    expect(mine[0].data).toEqual(funded.body);
  });

  it('announces balances with the time the ledger wrote on the accounts, however often the clock is read', async () => {
    // A clock that moves a millisecond at every reading: any reading but the ledger's own shows.
    let ms = Date.parse('2030-01-01T00:00:00Z');
    const ticking = { realNowMs: () => ms++, now: () => new Date(ms++) };
    const ledgerAt = createLedgerService({ database: t.corridor.database, clock: ticking });
    const announced: Date[] = [];
    ledgerAt.announceBalancesWith({
      prepare: async () => null,
      changed: async (_trx, _platform, changes) => void announced.push(...changes.map((c) => c.updatedAt)),
    });
    const account = await newAccount(p);
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    await db().transaction().execute((trx) => ledgerAt.record(trx, p.platform, [{ debit: rail, credit: account, amount: 5, code: 'DEPOSIT' }]));
    const row = await db().selectFrom('ledger_accounts').select('updated_at').where('id', '=', account).executeTakeFirstOrThrow();
    expect(announced.map((at) => at.toISOString())).toEqual([row.updated_at.toISOString()]);
  });

  it('orders an account\'s balance events by their time, strictly, under concurrent fundings and transfers out; the last is the account as read', async () => {
    const customer = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Order Tester', region: 'US' });
    const read = async () => (await p.api.get('/customers/internal-accounts', { customerId: customer.body.id, currency: 'USD' })).body.data[0];
    const account = (await read()).id;
    const beneficiary = { beneficiaryType: 'INDIVIDUAL', fullName: 'Order Tester', birthDate: '1985-06-30', nationality: 'US' };
    const accountInfo = { accountType: 'USD_ACCOUNT', accountNumber: '7700001', routingNumber: '021000021', beneficiary };
    const external = await p.api.post('/customers/external-accounts', { customerId: customer.body.id, currency: 'USD', accountInfo });
    expect(external.status, JSON.stringify(external.body)).toBe(201);
    await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 10_000 });
    const fundings = Array.from({ length: 60 }, (_, i) => p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 + i }));
    const transfers = Array.from({ length: 8 }, (_, i) =>
      p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: external.body.id }, amount: 1_000 + i }),
    );
    expect((await Promise.all(fundings)).map((r) => r.status)).toEqual(Array(60).fill(200));
    const sent = await Promise.all(transfers);
    expect(sent.map((r) => r.status), JSON.stringify(sent[0].body)).toEqual(Array(8).fill(201));
    const events = async () =>
      (await balanceEventsOf(db(), account)).map((e) => ({ timestamp: e.created_at.toISOString(), ...(e.data as { updatedAt: string; totalBalance: { amount: number } }) }));
    // Only credits and holds so far: by time, the total balance never goes down.
    const totals = (await events()).sort((a, b) => a.timestamp.localeCompare(b.timestamp)).map((e) => e.totalBalance.amount);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));

    await p.api.post('/sandbox/clock/advance', { seconds: 60 });
    const byTime = (await events()).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(byTime.length).toBeGreaterThanOrEqual(1 + 60 + 8 + 1);
    for (const [i, event] of byTime.entries()) {
      expect(event.updatedAt).toBe(event.timestamp);
      if (i > 0) expect(event.timestamp > byTime[i - 1].timestamp, `${byTime[i - 1].timestamp} then ${event.timestamp}`).toBe(true);
    }
    const { timestamp: _, ...latest } = byTime.at(-1)!;
    expect(latest).toEqual(await read());
    expect(latest.totalBalance.amount).toBe(10_000 + 60 * 100 + (59 * 60) / 2 - (8 * 1_000 + (7 * 8) / 2));
  });

  it('validates the amount and the account', async () => {
    const account = await newAccount(p);
    for (const amount of [0, -1, 1.5, '10', 9_000_000_000_000_001]) {
      const response = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount });
      expect(response.status).toBe(400);
      expect(response.body.details.errors[0].field).toBe('amount');
    }
    expect((await p.api.post(`/sandbox/internal-accounts/${account}/fund`, {})).status).toBe(400);
    const unknown = await p.api.post('/sandbox/internal-accounts/InternalAccount:00000000-0000-7000-8000-000000000000/fund', { amount: 1 });
    expect(unknown.status).toBe(404);
    const other = await t.createPlatform();
    expect((await other.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 1 })).status).toBe(404);
  });

  it('is refused on production platforms', async () => {
    const live = await t.createPlatform({ mode: 'PRODUCTION' });
    const account = await newAccount(live);
    const response = await live.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('SANDBOX_ONLY');
  });

  it('replays with an Idempotency-Key without crediting twice', async () => {
    const account = await newAccount(p);
    const first = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 }, { 'idempotency-key': 'fund-once' });
    const second = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 }, { 'idempotency-key': 'fund-once' });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    const balances = await ledger().balances(db(), [account]);
    expect(balances.get(account)?.available).toBe(100);
  });
});

describe('ledger transfers', () => {
  async function funded(amount: number) {
    const account = await newAccount(p);
    await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount });
    return account;
  }

  it('holds reduce the available balance; posting moves the money, voiding releases it', async () => {
    const account = await funded(1_000);
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const hold = await db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit: account, credit: rail, amount: 400, pending: true, code: 'PAYOUT' }], 'Transaction:hold-1'));
    expect(hold).toMatchObject([{ accountId: account, available: 600, posted: 1_000 }]);

    const posted = await db().transaction().execute((trx) => ledger().resolve(trx, p.platform, { transactionId: 'Transaction:hold-1' }, 'POST'));
    expect(posted).toMatchObject([{ accountId: account, available: 600, posted: 600 }]);
    const again = await db().transaction().execute((trx) => ledger().resolve(trx, p.platform, { transactionId: 'Transaction:hold-1' }, 'POST'));
    expect(again).toEqual([]);

    await db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit: account, credit: rail, amount: 100, pending: true, code: 'PAYOUT' }], 'Transaction:hold-2'));
    const voided = await db().transaction().execute((trx) => ledger().resolve(trx, p.platform, { transactionId: 'Transaction:hold-2' }, 'VOID'));
    expect(voided).toMatchObject([{ accountId: account, available: 600, posted: 600 }]);
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
  });

  it('writes the balance events, and what its transaction buffered for the outbox, in its own statement', async () => {
    const customer = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Ledger Tester' });
    const listed = async () => (await p.api.get('/customers/internal-accounts', { customerId: customer.body.id, currency: 'USD' })).body.data[0];
    const account = (await listed()).id;
    await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 1_000 });
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const probe = `ledger-rider-${account}`;
    const inside = await transact(db(), async (trx) => {
      const nextWeek = new Date(t.corridor.clock.now(p.platform).getTime() + 7 * 86_400_000);
      await enqueueJobs(trx, p.platform, [{ kind: probe, payload: {}, runAt: nextWeek }], t.corridor.clock);
      await ledger().record(trx, p.platform, [{ debit: account, credit: rail, amount: 400, pending: true, code: 'PAYOUT' }], 'Transaction:riders');
      // Read before the commit: only the ledger's statement can have written them by now.
      const jobs = await trx.selectFrom('jobs').select('kind').where('kind', '=', probe).execute();
      return { jobs, events: await balanceEventsOf(trx, account) };
    });
    expect(inside.jobs).toEqual([{ kind: probe }]);
    expect(inside.events.map((e) => (e.data as { balance: { amount: number } }).balance.amount)).toEqual([1_000, 600]);
    const view = await listed();
    expect(view.balance.amount).toBe(600);
    const held = inside.events[1].data as { updatedAt: string };
    expect(held).toEqual({ ...view, updatedAt: held.updatedAt });
    await db().deleteFrom('jobs').where('kind', '=', probe).execute();
  });

  it('resolving with the accounts it will change carries their events and the buffered outbox on its statement; other accounts are announced after', async () => {
    const [named, unnamed] = [await funded(1_000), await funded(1_000)];
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const holds = [named, unnamed].map((debit) => ({ debit, credit: rail, amount: 300, pending: true, code: 'PAYOUT' }));
    await db().transaction().execute((trx) => ledger().record(trx, p.platform, holds, 'Transaction:resolve-riders'));
    const probe = `ledger-resolve-rider-${named}`;
    const inside = await transact(db(), async (trx) => {
      const nextWeek = new Date(t.corridor.clock.now(p.platform).getTime() + 7 * 86_400_000);
      await enqueueJobs(trx, p.platform, [{ kind: probe, payload: {}, runAt: nextWeek }], t.corridor.clock);
      const changes = await ledger().resolve(trx, p.platform, { transactionId: 'Transaction:resolve-riders', accounts: [named, named] }, 'POST');
      // Read before the commit: only the ledger's statement can have written the job and the named account's event by now.
      const jobs = await trx.selectFrom('jobs').select('kind').where('kind', '=', probe).execute();
      return { changes, jobs, named: await balanceEventsOf(trx, named), unnamed: await balanceEventsOf(trx, unnamed) };
    });
    expect(inside.changes).toEqual(expect.arrayContaining([expect.objectContaining({ accountId: named, available: 700, posted: 700 }), expect.objectContaining({ accountId: unnamed, available: 700, posted: 700 })]));
    expect(inside.jobs).toEqual([{ kind: probe }]);
    const totals = (events: { data: unknown }[]) => events.map((e) => (e.data as { totalBalance: { amount: number } }).totalBalance.amount);
    expect(totals(inside.named)).toEqual([1_000, 1_000, 700]);
    expect(totals(inside.unnamed)).toEqual([1_000, 1_000]);
    expect(totals(await balanceEventsOf(db(), unnamed))).toEqual([1_000, 1_000, 700]);
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
    await db().deleteFrom('jobs').where('kind', '=', probe).execute();
  });

  it('resolves exactly the transfers named, by id or by transaction, once, and only on their platform', async () => {
    const account = await funded(1_000);
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const hold = (amount: number) => ({ debit: account, credit: rail, amount, pending: true, code: 'PAYOUT' });
    await db().transaction().execute((trx) => ledger().record(trx, p.platform, [hold(100), hold(200)], 'Transaction:pick-1'));
    await db().transaction().execute((trx) => ledger().record(trx, p.platform, [hold(50)], 'Transaction:pick-2'));
    const legs = await db().selectFrom('ledger_transfers').select(['id', 'amount']).where('transaction_id', '=', 'Transaction:pick-1').orderBy('amount').execute();

    const other = await t.createPlatform();
    const foreign = await db().transaction().execute((trx) => ledger().resolve(trx, other.platform, { transferIds: [legs[0].id], transactionId: 'Transaction:pick-1' }, 'POST'));
    expect(foreign).toEqual([]);

    const byId = await db().transaction().execute((trx) => ledger().resolve(trx, p.platform, { transferIds: [legs[0].id] }, 'POST'));
    expect(byId).toMatchObject([{ accountId: account, available: 650, posted: 900 }]);

    const racing = await Promise.all(
      Array.from({ length: 8 }, () => db().transaction().execute((trx) => ledger().resolve(trx, p.platform, { transactionId: 'Transaction:pick-1' }, 'VOID'))),
    );
    expect(racing.filter((changes) => changes.length > 0)).toMatchObject([[{ accountId: account, available: 850, posted: 900 }]]);
    const states = await db().selectFrom('ledger_transfers').select(['amount', 'state']).where('transaction_id', 'in', ['Transaction:pick-1', 'Transaction:pick-2']).orderBy('amount').execute();
    expect(states).toEqual([{ amount: 50, state: 'PENDING' }, { amount: 100, state: 'POSTED' }, { amount: 200, state: 'VOIDED' }]);
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
  });

  it('refuses to overdraw, at the database level, leaving nothing behind', async () => {
    const account = await funded(500);
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const attempt = db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit: account, credit: rail, amount: 501, pending: true, code: 'PAYOUT' }], 'Transaction:too-much'));
    await expect(attempt).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS', status: 400 });
    const transfers = await db().selectFrom('ledger_transfers').selectAll().where('transaction_id', '=', 'Transaction:too-much').execute();
    expect(transfers).toHaveLength(0);
    expect((await ledger().balances(db(), [account])).get(account)?.available).toBe(500);
  });

  it('refuses a balance the API could not show exactly (above 2^53 - 1), pending credits included', async () => {
    const account = await funded(9_000_000_000_000_000);
    const fund = (amount: number) => p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount });
    const full = await fund(Number.MAX_SAFE_INTEGER - 9_000_000_000_000_000);
    expect(full.status).toBe(200);
    expect(full.body.balance.amount).toBe(Number.MAX_SAFE_INTEGER);
    const over = await fund(1);
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('AMOUNT_OUT_OF_RANGE');
    expect((await ledger().balances(db(), [account])).get(account)).toMatchObject({ available: Number.MAX_SAFE_INTEGER, posted: Number.MAX_SAFE_INTEGER });

    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const hold = (debit: string, credit: string, id: string) =>
      db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit, credit, amount: 1_000, pending: true, code: 'PAYOUT' }], id));
    await hold(account, rail, 'Transaction:limit-out');
    await expect(hold(rail, account, 'Transaction:limit-in')).rejects.toMatchObject({ code: 'AMOUNT_OUT_OF_RANGE', status: 400 });
    await db().transaction().execute((trx) => ledger().resolve(trx, p.platform, { transactionId: 'Transaction:limit-out' }, 'POST'));
    await hold(rail, account, 'Transaction:limit-in');
    await expect(hold(rail, account, 'Transaction:limit-in-2')).rejects.toMatchObject({ code: 'AMOUNT_OUT_OF_RANGE' });
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
  });

  it('refuses legs across currencies or platforms', async () => {
    const usd = await funded(500);
    const eur = await newAccount(p, 'EUR');
    await expect(db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit: usd, credit: eur, amount: 1, code: 'X' }]))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const other = await t.createPlatform();
    const foreign = await newAccount(other);
    await expect(db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit: usd, credit: foreign, amount: 1, code: 'X' }]))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('concurrent holds never overdraw: 40 holds of 10 against 200 → exactly 20 succeed', async () => {
    const account = await funded(200);
    const rail = await ledger().systemAccount(p.platform.id, 'USD', 'RAIL_SETTLEMENT');
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        db().transaction().execute((trx) => ledger().record(trx, p.platform, [{ debit: account, credit: rail, amount: 10, pending: true, code: 'PAYOUT' }], `Transaction:race-${i}`)),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    for (const r of results) if (r.status === 'rejected') expect(r.reason.code).toBe('INSUFFICIENT_FUNDS');
    expect((await ledger().balances(db(), [account])).get(account)).toMatchObject({ available: 0, posted: 200 });
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
  });

  it('opposite transfers between two accounts never deadlock', async () => {
    const a = await funded(1_000);
    const b = await funded(1_000);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        db().transaction().execute((trx) => ledger().record(trx, p.platform, [i % 2 ? { debit: a, credit: b, amount: 1, code: 'X' } : { debit: b, credit: a, amount: 1, code: 'X' }])),
      ),
    );
    const balances = await ledger().balances(db(), [a, b]);
    expect(balances.get(a)!.posted + balances.get(b)!.posted).toBe(2_000);
  });
});

describe('system accounts', () => {
  it('concurrent creations of one system account at the database all succeed', async () => {
    const q = await t.createPlatform();
    const account = { id: `LedgerAccount:SYS:${q.platform.id}:EUR:FEES`, platformId: q.platform.id, currency: 'EUR', code: 'FEES' };
    await Promise.all(Array.from({ length: 20 }, () => insertSystemAccount(db(), account, new Date())));
    expect(await db().selectFrom('ledger_accounts').select('id').where('id', '=', account.id).execute()).toHaveLength(1);
  });

  it('concurrent first uses of one system account, even from two processes, all succeed', async () => {
    const other = await startTestApp();
    try {
      const q = await t.createPlatform();
      const ids = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? other : t).corridor.services.ledger.systemAccount(q.platform.id, 'EUR', 'FX')),
      );
      expect(new Set(ids).size).toBe(1);
      const rows = await db().selectFrom('ledger_accounts').select('id').where('id', '=', ids[0]).execute();
      expect(rows).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

describe('ledger verify', () => {
  it('passes on a consistent ledger and names the account whose columns drift', async () => {
    const account = await newAccount(p);
    await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 });
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
    await db().updateTable('ledger_accounts').set({ posted_credits: 101 }).where('id', '=', account).execute();
    const report = await ledger().verify(db(), p.platform.id);
    expect(report.problems.map((x) => x.accountId)).toContain(account);
    expect(report.problems.some((x) => x.message.includes('debits'))).toBe(true);
    await db().updateTable('ledger_accounts').set({ posted_credits: 100 }).where('id', '=', account).execute();
    expect((await ledger().verify(db(), p.platform.id)).problems).toEqual([]);
  });
});
