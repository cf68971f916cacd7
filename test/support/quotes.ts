// Helpers shared by the quotes tests.
import { sql } from 'kysely';
import { expect } from 'vitest';
import { EXPIRY_JOB } from '../../src/modules/quotes/expiry.js';
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
