import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueJobs } from '../../core/jobs.js';
import { STEP_JOB } from './outcomes.js';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import {
  HELD,
  PAYOUT_FUNDS,
  POSTED,
  VOIDED,
  advance,
  balances,
  expectLedgerClean,
  followUpJobs,
  fund,
  newCustomer,
  payoutScenario,
  quoteState,
  usdAccount,
  watchTransitions,
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

async function countEvents(type: string, objectId: string): Promise<number> {
  const rows = await t.corridor.database.db
    .selectFrom('events')
    .select('id')
    .where('platform_id', '=', p.platform.id)
    .where('type', '=', type)
    .where(sql<string>`data->>'id'`, '=', objectId)
    .execute();
  return rows.length;
}

/** The platform-clock time of each event of a transaction, by type. */
async function eventTimes(transactionId: string): Promise<Record<string, number>> {
  const rows = await t.corridor.database.db
    .selectFrom('events')
    .select(['type', 'created_at'])
    .where('platform_id', '=', p.platform.id)
    .where(sql<string>`data->>'id'`, '=', transactionId)
    .execute();
  return Object.fromEntries(rows.map((r) => [r.type, r.created_at.getTime()]));
}

/** `later` came `ms` after `earlier`, to within the job runner's due-time window (a second). */
function expectAfter(earlier: number, later: number, ms: number): void {
  expect(later - earlier).toBeGreaterThanOrEqual(ms);
  expect(later - earlier).toBeLessThan(ms + 1_000);
}

describe('sandbox outcomes of a payout (SPEC 4.7, by the external account suffix)', () => {
  it('other suffixes: PROCESSING with the funds held, COMPLETED a second later', async () => {
    const { quote, account } = await scenario('001');
    const executed = await p.api.post(`/quotes/${quote.id}/execute`);
    expect(executed.status).toBe(200);
    expect(executed.body.status).toBe('PROCESSING');
    expect(await balances(t, account)).toEqual({ available: FUNDS - 10_000, posted: FUNDS });
    expect((await state(quote)).legs).toEqual(HELD);

    await advance(p, 2);
    const after = await state(quote);
    expect(after.quote.status).toBe('COMPLETED');
    expect(after.tx).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
    expect(after.tx.failureReason).toBeUndefined();
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`]);
    expect(after.legs).toEqual(POSTED);
    expect(await balances(t, account)).toEqual({ available: FUNDS - 10_000, posted: FUNDS - 10_000 });
    await expectLedgerClean(t, p.platform.id);
  });

  it('runs a transition hook watching PROCESSING: the execution then takes its transactional path', async () => {
    const { quote } = await scenario('001');
    const watch = watchTransitions(t, ['PROCESSING']);
    try {
      expect((await p.api.post(`/quotes/${quote.id}/execute`)).body.status).toBe('PROCESSING');
    } finally {
      watch.stop();
    }
    expect(watch.seen).toEqual([`${quote.transactionId} PROCESSING`]);
    await advance(p, 2); // completes it, so that no job of it is left for the tests after this one
    expect((await p.api.get(`/transactions/${quote.transactionId}`)).body.status).toBe('COMPLETED');
  });

  it("stores the sandbox rail's plan with the claim: the first step's job is scheduled, no recovery job", async () => {
    const { quote } = await scenario('001');
    await p.api.post(`/quotes/${quote.id}/execute`);
    const row = await t.corridor.database.db
      .selectFrom('quotes')
      .select(['rail_plan', 'rail_initiated_at', 'executed_at'])
      .where('id', '=', quote.id)
      .executeTakeFirstOrThrow();
    expect(row.rail_plan).toEqual({ steps: [{ afterMs: 1000, event: { kind: 'COMPLETED' } }] });
    expect(row.rail_initiated_at).toEqual(row.executed_at);
    expect(await followUpJobs(t, quote.id)).toEqual([STEP_JOB]);
  });

  it('completions due together settle in one batch; other outcomes due with them still apply alone', async () => {
    const sender = await newCustomer(p);
    await fund(p, sender.accounts.EUR, FUNDS);
    const quoteTo = async (suffix: string) => {
      const res = await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: sender.accounts.EUR },
        destination: { destinationType: 'ACCOUNT', accountId: await usdAccount(p, alice.id, suffix) },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 10_000,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    const completing = [await quoteTo('001'), await quoteTo('001'), await quoteTo('001')];
    const failing = await quoteTo('004');
    for (const q of [...completing, failing]) expect((await p.api.post(`/quotes/${q.id}/execute`)).body.status).toBe('PROCESSING');
    const balanceEvents = () => countEvents('INTERNAL_ACCOUNT.BALANCE_UPDATED', sender.accounts.EUR);
    const before = await balanceEvents();

    await advance(p, 2);
    for (const q of completing) {
      const after = await state(q);
      expect(after.tx).toMatchObject({ status: 'COMPLETED', settledAt: expect.any(String) });
      expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`]);
      expect(after.legs).toEqual(POSTED);
    }
    const failed = await state(failing);
    expect(failed.tx.status).toBe('FAILED');
    expect(failed.legs).toEqual(VOIDED);
    // One ledger call posted the three holds: one balance event for the account, not three; the
    // failure released its hold on its own.
    expect(await balanceEvents()).toBe(before + 2);
    expect(await balances(t, sender.accounts.EUR)).toEqual({ available: FUNDS - 30_000, posted: FUNDS - 30_000 });
    expect(t.logs.filter((line) => line.includes('job batch failed'))).toEqual([]);
    await expectLedgerClean(t, p.platform.id);

    // The same steps claimed again (a job retried after its work committed) change nothing.
    const again = completing.slice(0, 2).map((q) => ({ kind: STEP_JOB, payload: { quoteId: q.id, step: 0, event: { kind: 'COMPLETED' } } }));
    await t.corridor.database.db.transaction().execute((trx) => enqueueJobs(trx, p.platform, again, t.corridor.clock));
    await advance(p, 1);
    for (const q of completing) expect((await state(q)).events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`]);
    expect(await balanceEvents()).toBe(before + 2);
    const left = await t.corridor.database.db.selectFrom('jobs').select('id').where('kind', '=', STEP_JOB).where('platform_id', '=', p.platform.id).execute();
    expect(left).toEqual([]);
    await expectLedgerClean(t, p.platform.id);
  });

  it('002: execution fails in the execute call itself; nothing moves', async () => {
    const { quote, account } = await scenario('002');
    const executed = await p.api.post(`/quotes/${quote.id}/execute`);
    expect(executed.status).toBe(200);
    expect(executed.body.status).toBe('FAILED');
    const after = await state(quote);
    expect(after.tx).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'EXECUTION_FAILED' });
    expect(after.tx.refund).toBeUndefined();
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}FAILED`]);
    expect(after.legs).toEqual(VOIDED);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    await expectLedgerClean(t, p.platform.id);
  });

  it('002 under an Idempotency-Key: the replay answers FAILED, as the first answer did', async () => {
    const { quote } = await scenario('002');
    const request = { method: 'POST', path: `/quotes/${quote.id}/execute`, headers: { 'idempotency-key': `execute-${quote.id}` } };
    const first = await p.api.request(request);
    expect(first.body.status).toBe('FAILED');
    const replay = await p.api.request(request);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('003: stays PROCESSING for about 6 minutes, then completes', async () => {
    const { quote, account } = await scenario('003');
    expect((await p.api.post(`/quotes/${quote.id}/execute`)).body.status).toBe('PROCESSING');
    await advance(p, 300); // past the recovery job and the quote's own expiry time: neither disturbs it
    expect((await state(quote)).quote.status).toBe('PROCESSING');
    expect((await balances(t, account)).available).toBe(FUNDS - 10_000);
    await advance(p, 60);
    const after = await state(quote);
    expect(after.quote.status).toBe('COMPLETED');
    expect(after.tx.status).toBe('COMPLETED');
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`]);
    expect(after.legs).toEqual(POSTED);
    await expectLedgerClean(t, p.platform.id);
  });

  it('004: counterparty delivery fails; the hold is released and the refund is complete', async () => {
    const { quote, account } = await scenario('004');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 2);
    const after = await state(quote);
    expect(after.quote.status).toBe('FAILED');
    expect(after.tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'COUNTERPARTY_POST_TX_FAILED',
      failureDetail: 'COUNTERPARTY_DELIVERY_FAILED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED', reference: expect.stringMatching(/^RF/), settledAt: expect.any(String) },
    });
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}FAILED`, `${P}REFUND_COMPLETED`]);
    expect(after.legs).toEqual(VOIDED);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    await expectLedgerClean(t, p.platform.id);
  });

  it('005: completes, then the receiving bank returns it: FAILED with everything refunded, fees included', async () => {
    const { quote, account } = await scenario('005');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 2);
    let now = await state(quote);
    expect(now.quote.status).toBe('COMPLETED');
    expect(now.tx.status).toBe('COMPLETED');
    expect(await balances(t, account)).toEqual({ available: FUNDS - 10_000, posted: FUNDS - 10_000 });

    await advance(p, 60);
    now = await state(quote);
    expect(now.quote.status).toBe('FAILED');
    expect(now.tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'COUNTERPARTY_POST_TX_FAILED',
      failureDetail: 'RETURNED_BY_RECEIVING_BANK',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
    });
    expect(now.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`, `${P}FAILED`, `${P}REFUND_COMPLETED`]);
    expect(now.legs).toEqual([...POSTED, 'REFUND:POSTED', 'REFUND:POSTED', 'REFUND:POSTED']);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    await expectLedgerClean(t, p.platform.id);
  });

  it('005 returned to a sender whose balance has no room left under the limit: the refund fails, nothing is credited', async () => {
    const { quote, account } = await scenario('005');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 2);
    const full = Number.MAX_SAFE_INTEGER - 5_000;
    await fund(p, account, 9_000_000_000_000_000);
    await fund(p, account, full - 9_000_000_000_000_000 - (FUNDS - 10_000));
    expect(await balances(t, account)).toEqual({ available: full, posted: full });

    await advance(p, 60);
    const after = await state(quote);
    expect(after.quote.status).toBe('FAILED');
    expect(after.tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'COUNTERPARTY_POST_TX_FAILED',
      failureDetail: 'RETURNED_BY_RECEIVING_BANK',
      refund: { status: 'FAILED', reason: 'TRANSACTION_FAILED' },
    });
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`, `${P}FAILED`, `${P}REFUND_FAILED`]);
    expect(after.legs).toEqual(POSTED);
    expect(await balances(t, account)).toEqual({ available: full, posted: full });
    expect(await followUpJobs(t, quote.id)).toEqual([]);
    await expectLedgerClean(t, p.platform.id);
  });

  it('005 with one long clock jump applies both steps in order, each as of its due time', async () => {
    const { quote, account } = await scenario('005');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 600);
    const after = await state(quote);
    expect(after.quote.status).toBe('FAILED');
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}COMPLETED`, `${P}FAILED`, `${P}REFUND_COMPLETED`]);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
    // Completed a second after the execution and returned a minute after it, not both at the advance's end.
    const at = await eventTimes(quote.transactionId);
    expectAfter(at[`${P}PROCESSING`], at[`${P}COMPLETED`], 1_000);
    expectAfter(at[`${P}PROCESSING`], at[`${P}FAILED`], 60_000);
    expectAfter(at[`${P}PROCESSING`], at[`${P}REFUND_COMPLETED`], 60_000);
  });

  it('003 with one long clock jump settles six minutes after the execution, not at the advance\'s end', async () => {
    const { quote } = await scenario('003');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 3_600);
    const after = await state(quote);
    expect(after.tx.status).toBe('COMPLETED');
    const at = await eventTimes(quote.transactionId);
    expectAfter(at[`${P}PROCESSING`], Date.parse(after.tx.settledAt), 360_000);
    expectAfter(at[`${P}PROCESSING`], at[`${P}COMPLETED`], 360_000);
  });

  it('006: the user cancels; refunded with reason USER_CANCELLATION', async () => {
    const { quote, account } = await scenario('006');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 2);
    const after = await state(quote);
    expect(after.quote.status).toBe('FAILED');
    expect(after.tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'COUNTERPARTY_POST_TX_FAILED',
      failureDetail: 'USER_CANCELLATION',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
    });
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}FAILED`, `${P}REFUND_COMPLETED`]);
    expect(after.legs).toEqual(VOIDED);
    expect(await balances(t, account)).toEqual({ available: FUNDS, posted: FUNDS });
  });

  it('007: payout and refund both fail; the money is gone and the refund is FAILED', async () => {
    const { quote, account } = await scenario('007');
    await p.api.post(`/quotes/${quote.id}/execute`);
    await advance(p, 2);
    const after = await state(quote);
    expect(after.quote.status).toBe('FAILED');
    expect(after.tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'COUNTERPARTY_POST_TX_FAILED',
      failureDetail: 'PAYOUT_AND_REFUND_FAILED',
      refund: { status: 'FAILED', reason: 'TRANSACTION_FAILED' },
    });
    expect(after.tx.refund.settledAt).toBeUndefined();
    expect(after.events).toEqual([`${P}PENDING`, `${P}PROCESSING`, `${P}FAILED`, `${P}REFUND_FAILED`]);
    expect(after.legs).toEqual(POSTED);
    expect(await balances(t, account)).toEqual({ available: FUNDS - 10_000, posted: FUNDS - 10_000 });
    await expectLedgerClean(t, p.platform.id);
  });
});
