import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enqueueJobs } from '../../core/jobs.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { advance, expectLedgerClean, expiryJobs, newCustomer, usdAccount } from '../../../test/support/quotes.js';
import { EXPIRY_JOB, SWEEP_CHUNK } from './expiry.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

// Migration 0024: the partial index the expiry sweep reads must serve the sweep and no query that
// filters waiting quotes without saying `executed_at is null` (an execution's claim), or that
// query may be planned on it and scan every waiting quote of the platform.
async function plan(query: string): Promise<string> {
  return t.corridor.database.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    const { rows } = await sql<Record<string, string>>`${sql.raw(`explain ${query}`)}`.execute(trx);
    return rows.map((r) => Object.values(r)[0]).join('\n');
  });
}

it('the expiry sweep reads quotes_expiring; a claim of a waiting quote cannot', async () => {
  const now = `'2026-01-01T00:00:00Z'::timestamptz`;
  const sweep = await plan(`select id from quotes where platform_id = 'P' and status = 'PENDING' and executed_at is null and expires_at <= ${now}`);
  expect(sweep).toContain('quotes_expiring');
  const claim = await plan(`update quotes set status = 'PROCESSING' where platform_id = 'P' and id = 'Q' and status = 'PENDING' and expires_at > ${now}`);
  expect(claim).not.toContain('quotes_expiring');
  const waiting = await plan(`select id from quotes where platform_id = 'P' and status = 'PENDING' and expires_at > ${now}`);
  expect(waiting).not.toContain('quotes_expiring');
});

it('a sweep expires more quotes than one transaction takes, and a job scheduled per quote by an earlier version is a sweep at its expiresAt', async () => {
  const fresh = await t.createPlatform();
  const sender = await newCustomer(fresh);
  const payout = await usdAccount(fresh, sender.id, '001');
  const body = { source: { sourceType: 'ACCOUNT', accountId: sender.accounts.EUR }, destination: { destinationType: 'ACCOUNT', accountId: payout }, lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 1_000 };
  const ids: string[] = [];
  for (let i = 0; i < SWEEP_CHUNK + 20; i += 20) {
    const made = await Promise.all(Array.from({ length: 20 }, () => fresh.api.post('/quotes', body)));
    ids.push(...made.map((r) => r.body.id));
  }
  const { db } = t.corridor.database;
  const last = (await fresh.api.get(`/quotes/${ids.at(-1)}`)).body;
  await db.deleteFrom('jobs').where('platform_id', '=', fresh.platform.id).where('kind', '=', EXPIRY_JOB).execute();
  const old = { kind: EXPIRY_JOB, payload: { quoteId: last.id, expiresAt: last.expiresAt }, runAt: new Date(Date.now() - 1000) }; // due now
  await enqueueJobs(db, fresh.platform, [old], t.corridor.clock);
  await t.corridor.services.jobs.runDue(fresh.platform.id);
  expect((await fresh.api.get(`/quotes/${last.id}`)).body.status).toBe('PENDING');
  expect(await expiryJobs(t, fresh.platform.id)).toEqual([last.expiresAt]);
  await advance(fresh, 301);
  const rows = await db.selectFrom('quotes').innerJoin('transactions', 'transactions.id', 'quotes.transaction_id').select(['quotes.status as quote', 'transactions.status as tx']).where('quotes.id', 'in', ids).execute();
  expect(rows).toHaveLength(ids.length);
  expect(rows.filter((r) => r.quote !== 'EXPIRED' || r.tx !== 'EXPIRED')).toEqual([]);
  expect(await expiryJobs(t, fresh.platform.id)).toEqual([]);
  await expectLedgerClean(t, fresh.platform.id);
});
