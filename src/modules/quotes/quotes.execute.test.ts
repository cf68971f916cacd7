import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECOVERY_JOB } from './execute.js';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import {
  HELD,
  PAYOUT_FUNDS,
  advance,
  balances,
  expectError,
  expectLedgerClean,
  expiryJobs,
  expirySecond,
  followUpJobs,
  fund,
  newCustomer,
  payoutScenario,
  quoteState,
  usdAccount,
  type TestCustomer,
} from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let alice: TestCustomer;

const FUNDS = PAYOUT_FUNDS;
const P = 'OUTGOING_PAYMENT.';

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Ng');
});
afterAll(() => t.close());

/** A fresh funded sender, a payout account of Alice's with the suffix, and a quote between them. */
const scenario = (suffix: string, amount?: number, funds?: number) => payoutScenario(p, alice.id, suffix, amount, funds);
const state = (q: { id: string; transactionId: string }) => quoteState(t, p, q);

describe('POST /quotes/{quoteId}/execute', () => {
  it('a second execute is 409 QUOTE_ALREADY_EXECUTED; a repeated Idempotency-Key replays the first answer', async () => {
    const { quote } = await scenario('001');
    const headers = { 'idempotency-key': `exec-${quote.id}` };
    const first = await p.api.post(`/quotes/${quote.id}/execute`, undefined, headers);
    const replay = await p.api.post(`/quotes/${quote.id}/execute`, undefined, headers);
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expectError(await p.api.post(`/quotes/${quote.id}/execute`), 409, 'QUOTE_ALREADY_EXECUTED');
    await advance(p, 2);
    expectError(await p.api.post(`/quotes/${quote.id}/execute`), 409, 'QUOTE_ALREADY_EXECUTED');
  });

  it('a quote whose external account was deleted since is refused with 404: nothing held, and it stays PENDING', async () => {
    const { quote, account } = await scenario('001');
    const payout = quote.destination.accountId;
    expect((await p.api.delete(`/customers/external-accounts/${payout}`)).status).toBe(204);
    // The first call tries the one-statement claim (this process made the quote), the second goes straight to the transaction.
    for (let i = 0; i < 2; i++) {
      const refused = await p.api.post(`/quotes/${quote.id}/execute`);
      expectError(refused, 404, 'NOT_FOUND');
      expect(refused.body.details).toEqual({ accountId: payout });
    }
    const now = await state(quote);
    expect(now.quote.status).toBe('PENDING');
    expect(now.tx.status).toBe('PENDING');
    expect(now.legs).toEqual([]);
    expect(now.events).toEqual([`${P}PENDING`]);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    expect(await followUpJobs(t, quote.id)).toEqual([]);
    // An executed quote is told so, whatever became of its account.
    const { quote: executed } = await scenario('001');
    expect((await p.api.post(`/quotes/${executed.id}/execute`)).status).toBe(200);
    expect((await p.api.delete(`/customers/external-accounts/${executed.destination.accountId}`)).status).toBe(204);
    expectError(await p.api.post(`/quotes/${executed.id}/execute`), 409, 'QUOTE_ALREADY_EXECUTED');
  });

  it('a quote moved on since this process created it: the one-statement execution writes nothing, and the answer is 409', async () => {
    const { quote, account } = await scenario('001');
    // As another process would: the quote failed after this one remembered it as PENDING.
    await t.corridor.database.db.updateTable('quotes').set({ status: 'FAILED' }).where('id', '=', quote.id).execute();
    expectError(await p.api.post(`/quotes/${quote.id}/execute`), 409, 'QUOTE_ALREADY_EXECUTED');
    const now = await state(quote);
    expect(now.tx.status).toBe('PENDING');
    expect(now.legs).toEqual([]);
    expect(now.events).toEqual([`${P}PENDING`]);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    expect(await followUpJobs(t, quote.id)).toEqual([]);
  });

  it('a transaction changed since its quote was created executes from its stored row, not the remembered one', async () => {
    const { quote } = await scenario('001');
    await t.corridor.database.db
      .updateTable('transactions')
      .set({ description: 'changed elsewhere', updated_at: sql<Date>`updated_at + interval '1 millisecond'` })
      .where('id', '=', quote.transactionId)
      .execute();
    expect((await p.api.post(`/quotes/${quote.id}/execute`)).body.status).toBe('PROCESSING');
    const processing = await t.corridor.database.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', `${P}PROCESSING`)
      .where(sql<string>`data->>'id'`, '=', quote.transactionId)
      .execute();
    expect(processing.map((e) => e.data)).toEqual([expect.objectContaining({ status: 'PROCESSING', description: 'changed elsewhere' })]);
    expect((await state(quote)).legs).toEqual(HELD);
    await expectLedgerClean(t, p.platform.id);
  });

  it('50 parallel executes of one quote: one execution, one set of legs', async () => {
    const { quote, account } = await scenario('001');
    const results = await Promise.all(Array.from({ length: 50 }, () => p.api.post(`/quotes/${quote.id}/execute`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.code === 'QUOTE_ALREADY_EXECUTED')).toBe(true);
    expect((await state(quote)).legs).toEqual(HELD);
    expect((await balances(t, account)).available).toBe(FUNDS - 10_000);
    const rows = await t.corridor.database.db.selectFrom('transactions').select('id').where('quote_id', '=', quote.id).execute();
    expect(rows).toHaveLength(1);
    await advance(p, 2);
    await expectLedgerClean(t, p.platform.id);
  });

  it('insufficient funds: 400, nothing held, the quote stays PENDING and can run once funded', async () => {
    const { quote, account } = await scenario('001', 10_000, 9_999);
    const res = await p.api.post(`/quotes/${quote.id}/execute`);
    expectError(res, 400, 'INSUFFICIENT_FUNDS');
    expect(await balances(t, account)).toEqual({ available: 9_999, posted: 9_999 });
    const now = await state(quote);
    expect(now.quote.status).toBe('PENDING');
    expect(now.tx.status).toBe('PENDING');
    expect(now.legs).toEqual([]);
    expect(now.events).toEqual([`${P}PENDING`]);
    await fund(p, account, 1);
    expect((await p.api.post(`/quotes/${quote.id}/execute`)).status).toBe(200);
    expect(await balances(t, account)).toEqual({ available: 0, posted: 10_000 });
  });

  it('an unexecuted quote expires at expiresAt with its transaction; executing it is 409 QUOTE_EXPIRED', async () => {
    const { quote, account } = await scenario('001');
    await advance(p, 299);
    expect((await state(quote)).quote.status).toBe('PENDING');
    await advance(p, 3_600);
    const after = await state(quote);
    expect(after.quote.status).toBe('EXPIRED');
    expect(after.tx).toMatchObject({ status: 'EXPIRED', failureReason: 'QUOTE_EXPIRED' });
    // As of its expiry (swept on the next whole second, run within a second), not the advance's end.
    const expiredAfterMs = Date.parse(after.tx.updatedAt) - Date.parse(quote.expiresAt);
    expect(expiredAfterMs).toBeGreaterThanOrEqual(0);
    expect(expiredAfterMs).toBeLessThan(2_000);
    expect(after.events).toEqual([`${P}PENDING`, `${P}EXPIRED`]);
    expectError(await p.api.post(`/quotes/${quote.id}/execute`), 409, 'QUOTE_EXPIRED');
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
  });

  it('quotes due to expire together expire together; one executed meanwhile is left as it is', async () => {
    const [executed, ...unexecuted] = await Promise.all([scenario('001'), scenario('001'), scenario('001')]);
    expect((await p.api.post(`/quotes/${executed.quote.id}/execute`)).status).toBe(200);
    await advance(p, 301);
    for (const { quote, account } of unexecuted) {
      const after = await state(quote);
      expect([after.quote.status, after.tx.status]).toEqual(['EXPIRED', 'EXPIRED']);
      expect(after.events).toEqual([`${P}PENDING`, `${P}EXPIRED`]);
      expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    }
    expect((await state(executed.quote)).tx.status).toBe('COMPLETED');
    expect(await expiryJobs(t, p.platform.id)).toEqual([]);
  });

  it('an expiry job that runs before its second leaves the quote pending and is scheduled again', async () => {
    const { quote } = await scenario('001');
    const { db } = t.corridor.database;
    const until = expirySecond(quote.expiresAt);
    const jobOf = () => db.selectFrom('jobs').select('due_at').where('kind', '=', 'quote.expire').where(sql<string>`payload->>'until'`, '=', until).execute();
    await db.updateTable('jobs').set({ due_at: new Date() }).where('kind', '=', 'quote.expire').where(sql<string>`payload->>'until'`, '=', until).execute(); // a skewed clock
    await t.corridor.services.jobs.runDue(p.platform.id);
    expect((await state(quote)).quote.status).toBe('PENDING');
    const [again, ...more] = await jobOf();
    expect(more).toEqual([]);
    expect(again.due_at.getTime()).toBeGreaterThan(Date.now() + 290_000); // at expiresAt, 5 minutes on
    await advance(p, 301);
    expect((await state(quote)).quote.status).toBe('EXPIRED');
  });

  it('refuses a quote past expiresAt even before the expiry job ran', async () => {
    const { quote } = await scenario('001');
    // Push the deadline into the past without running jobs.
    await t.corridor.database.db.updateTable('quotes').set({ expires_at: new Date(Date.now() - 60_000) }).where('id', '=', quote.id).execute();
    expectError(await p.api.post(`/quotes/${quote.id}/execute`), 409, 'QUOTE_EXPIRED');
    expect((await p.api.get(`/quotes/${quote.id}`)).body.status).toBe('PENDING');
  });

  it('immediatelyExecute creates and executes in one call; without funds nothing is created', async () => {
    const sender = await newCustomer(p);
    await fund(p, sender.accounts.EUR, 50_000);
    const payout = await usdAccount(p, alice.id, '001');
    const body = {
      source: { sourceType: 'ACCOUNT', accountId: sender.accounts.EUR },
      destination: { destinationType: 'ACCOUNT', accountId: payout },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 20_000,
      immediatelyExecute: true,
    };
    const res = await p.api.post('/quotes', body);
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PROCESSING');
    // Written with the quote, in case the process stops before the rail is asked.
    expect(await followUpJobs(t, res.body.id)).toContain(RECOVERY_JOB);
    expect((await balances(t, sender.accounts.EUR)).available).toBe(30_000);
    await advance(p, 2);
    const after = await state(res.body);
    expect(after.quote.status).toBe('COMPLETED');
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`]);

    const count = async () => (await t.corridor.database.db.selectFrom('quotes').select('id').where('platform_id', '=', p.platform.id).execute()).length;
    const before = await count();
    expectError(await p.api.post('/quotes', { ...body, lockedCurrencyAmount: 40_000 }), 400, 'INSUFFICIENT_FUNDS');
    expect(await count()).toBe(before);

    const internal = await p.api.post('/quotes', { ...body, destination: { destinationType: 'ACCOUNT', accountId: alice.accounts.USD } });
    expect(internal.body.status).toBe('COMPLETED');
    expect(await followUpJobs(t, internal.body.id)).toEqual([]);
    expect((await state(internal.body)).events).toEqual([`${P}PENDING`, `${P}COMPLETED`]);
    await expectLedgerClean(t, p.platform.id);
  });

  it('a production platform without a rail fails the payout clearly and releases the hold', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const sender = await newCustomer(production);
    const payout = await usdAccount(production, sender.id, '001');
    // Production has no fund endpoint: give the account money through the ledger directly.
    const source = await t.corridor.services.ledger.systemAccount(production.platform.id, 'EUR', 'RAIL_SETTLEMENT');
    await t.corridor.database.db
      .transaction()
      .execute((trx) => t.corridor.services.ledger.record(trx, production.platform, [{ debit: source, credit: sender.accounts.EUR, amount: 50_000, code: 'TEST' }]));
    const q = await production.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: sender.accounts.EUR },
      destination: { destinationType: 'ACCOUNT', accountId: payout },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    const res = await production.api.post(`/quotes/${q.body.id}/execute`);
    expect(res.body.status).toBe('FAILED');
    // A real rail is only called once the claim committed, so the claim scheduled a recovery job.
    expect(await followUpJobs(t, q.body.id)).toEqual([RECOVERY_JOB]);
    const tx = (await production.api.get(`/transactions/${q.body.transactionId}`)).body;
    expect(tx).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'NO_RAIL_CONFIGURED' });
    expect((await balances(t, sender.accounts.EUR)).available).toBe(50_000);
  });

  it('REALTIME_FUNDING quotes are not executed by this endpoint', async () => {
    const res = await p.api.post('/quotes', {
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: alice.accounts.EUR },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expectError(await p.api.post(`/quotes/${res.body.id}/execute`), 400, 'INVALID_INPUT');
  });
});
