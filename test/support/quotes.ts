// Helpers shared by the quotes tests.
import { sql } from 'kysely';
import { expect } from 'vitest';
import { RECOVERY_JOB } from '../../src/modules/quotes/execute.js';
import { EXPIRY_JOB } from '../../src/modules/quotes/expiry.js';
import { STEP_JOB } from '../../src/modules/quotes/outcomes.js';
import type { TransactionStatus } from '../../src/modules/transactions/lifecycle.js';
import type { TransitionHook } from '../../src/modules/transactions/service.js';
import type { ApiResponse, TestApp, TestPlatform } from './app.js';

let counter = 100_000 + Math.floor(Math.random() * 800_000);

export interface TestCustomer {
  id: string;
  platformCustomerId: string;
  /** Internal account id per currency. */
  accounts: Record<string, string>;
}

export { expectError } from './errors.js';

function expectStatus(res: ApiResponse, status: number): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
}

export async function newCustomer(p: TestPlatform, fullName = 'Quinn Sender'): Promise<TestCustomer> {
  const created = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName, region: 'US', birthDate: '1990-01-15', nationality: 'US' });
  expectStatus(created, 201);
  const list = await p.api.get('/customers/internal-accounts', { customerId: created.body.id, limit: 100 });
  const accounts: Record<string, string> = {};
  for (const a of list.body.data) if (a.type !== 'EMBEDDED_WALLET') accounts[a.balance.currency.code] = a.id;
  return { id: created.body.id, platformCustomerId: created.body.platformCustomerId, accounts };
}

export async function fund(p: TestPlatform, accountId: string, amount: number): Promise<void> {
  const res = await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount });
  expectStatus(res, 200);
}

/** A USD bank account whose number ends in `suffix` (the sandbox outcome). */
export async function usdAccount(p: TestPlatform, customerId: string | undefined, suffix = '001'): Promise<string> {
  const res = await p.api.post('/customers/external-accounts', {
    ...(customerId && { customerId }),
    currency: 'USD',
    accountInfo: {
      accountType: 'USD_ACCOUNT',
      accountNumber: `${++counter}${suffix}`,
      routingNumber: '021000021',
      beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Rita Receiver', birthDate: '1985-06-30', nationality: 'US' },
    },
  });
  expectStatus(res, 201);
  return res.body.id;
}

export async function balances(t: TestApp, accountId: string): Promise<{ available: number; posted: number }> {
  const b = (await t.corridor.services.ledger.balances(t.corridor.database.db, [accountId])).get(accountId);
  return { available: b?.available ?? 0, posted: b?.posted ?? 0 };
}

/** Types of the events that carry this transaction, oldest first. */
export async function transactionEvents(t: TestApp, platformId: string, transactionId: string): Promise<string[]> {
  const rows = await t.corridor.database.db
    .selectFrom('events')
    .select(['type'])
    .where('platform_id', '=', platformId)
    .where(sql<string>`data->>'id'`, '=', transactionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.type);
}

export async function expectLedgerClean(t: TestApp, platformId: string): Promise<void> {
  const report = await t.corridor.services.ledger.verify(t.corridor.database.db, platformId);
  expect(report.problems).toEqual([]);
}

export async function legsOf(t: TestApp, platformId: string, transactionId: string) {
  return t.corridor.services.ledger.transfersOf(t.corridor.database.db, platformId, transactionId);
}

export function advance(p: TestPlatform, seconds: number) {
  return p.api.post('/sandbox/clock/advance', { seconds });
}

/**
 * Registers a transition hook on `statuses` (as another module would) until `stop`: a hook needs
 * a transaction, so a payment moving into one of them must take its transactional path.
 */
export function watchTransitions(t: TestApp, statuses: TransactionStatus[]) {
  const { hooks } = t.corridor.services.transactions;
  const seen: string[] = [];
  const hook: TransitionHook = { statuses, run: async (_trx, _platform, record) => void seen.push(`${record.id} ${record.status}`) };
  hooks.transitioned.push(hook);
  return { seen, stop: () => void hooks.transitioned.splice(hooks.transitioned.indexOf(hook), 1) };
}

/** The end of the second of `expiresAt` (ISO): when the expiry job covering it is due. */
export function expirySecond(expiresAt: string): string {
  return new Date(Math.ceil(Date.parse(expiresAt) / 1000) * 1000).toISOString();
}

/** The `until` of each quote expiry job of the platform not yet run, in due order. */
export async function expiryJobs(t: TestApp, platformId: string): Promise<string[]> {
  const rows = await t.corridor.database.db
    .selectFrom('jobs')
    .select(sql<string>`payload->>'until'`.as('until'))
    .where('platform_id', '=', platformId)
    .where('kind', '=', EXPIRY_JOB)
    .orderBy('due_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.until);
}

/** Funds of a payout scenario's sender. */
export const PAYOUT_FUNDS = 1_000_000;

/** A fresh sender funded in EUR, a USD payout account of `payeeId` with the suffix, and a quote between them. */
export async function payoutScenario(p: TestPlatform, payeeId: string, suffix: string, amount = 10_000, funds = PAYOUT_FUNDS) {
  const sender = await newCustomer(p);
  if (funds > 0) await fund(p, sender.accounts.EUR, funds);
  const payout = await usdAccount(p, payeeId, suffix);
  const res = await p.api.post('/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: sender.accounts.EUR },
    destination: { destinationType: 'ACCOUNT', accountId: payout },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  });
  expectStatus(res, 201);
  return { sender, account: sender.accounts.EUR, quote: res.body };
}

/** A quote and its transaction as the API shows them, with the payment's events and its legs as `code:state`. */
export async function quoteState(t: TestApp, p: TestPlatform, q: { id: string; transactionId: string }) {
  const [quote, tx, events, legs] = await Promise.all([
    p.api.get(`/quotes/${q.id}`),
    p.api.get(`/transactions/${q.transactionId}`),
    transactionEvents(t, p.platform.id, q.transactionId),
    legsOf(t, p.platform.id, q.transactionId),
  ]);
  return { quote: quote.body, tx: tx.body, events, legs: legs.map((l) => `${l.code}:${l.state}`) };
}

/** Kinds of the rail-step and recovery jobs queued for a quote. */
export async function followUpJobs(t: TestApp, quoteId: string): Promise<string[]> {
  const rows = await t.corridor.database.db
    .selectFrom('jobs')
    .select('kind')
    .where('kind', 'in', [STEP_JOB, RECOVERY_JOB])
    .where(sql<string>`payload->>'quoteId'`, '=', quoteId)
    .execute();
  return rows.map((r) => r.kind);
}

/** A payout's three legs (fee, conversion, payout) in each ledger state. */
export const HELD = ['FEE:PENDING', 'FX:PENDING', 'PAYOUT:PENDING'];
export const POSTED = ['FEE:POSTED', 'FX:POSTED', 'PAYOUT:POSTED'];
export const VOIDED = ['FEE:VOIDED', 'FX:VOIDED', 'PAYOUT:VOIDED'];
