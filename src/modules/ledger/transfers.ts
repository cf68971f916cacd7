import { sql, type RawBuilder } from 'kysely';
import { ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { balanceEventWrites, type BalanceEventRow } from '../../core/outbox.js';
import { isCheckViolation, type Executor, type Trx } from '../../db/database.js';
import { statementOf, type Write } from '../../db/one-statement.js';

/** An immutable ledger transfer row. */
export interface LedgerTransferRow {
  id: string;
  platform_id: string;
  transaction_id: string | null;
  debit_account_id: string;
  credit_account_id: string;
  amount: number;
  currency: string;
  state: 'PENDING' | 'POSTED' | 'VOIDED';
  code: string;
  created_at: Date;
  resolved_at: Date | null;
}

declare module '../../db/schema.js' {
  interface DB {
    ledger_transfers: LedgerTransferRow;
  }
}

/** One movement of money: `amount` leaves `debit` and arrives at `credit` (same currency). */
export interface Leg {
  debit: string;
  credit: string;
  amount: number;
  /** A hold: the debit side's available balance drops now; the money moves when posted. */
  pending?: boolean;
  /** Why the money moves (FUNDING, PAYOUT, FEE, FX, REFUND, …), for reports and audits. */
  code: string;
}

/** A balance-checked account's balances right after a change. */
export interface BalanceChange {
  accountId: string;
  available: number;
  posted: number;
  /** The account's `updated_at` as the change set it: strictly later than any earlier change's. */
  updatedAt: Date;
}

/** Whether `error` is the ledger refusing a credit over the balance limit (raw, or as mapped below). */
export function isOverBalanceLimit(error: unknown): boolean {
  const refusal = error instanceof ServiceError ? error.cause : error;
  return isCheckViolation(refusal, 'ledger_accounts_balance_limit');
}

/** A credit the balance limit refuses (migration 0032), as the API answers it. */
export function balanceLimitError(cause?: unknown): ServiceError {
  const message = `this would take the receiving account's balance above ${Number.MAX_SAFE_INTEGER} smallest units, the most the API can show exactly`;
  return new ServiceError('AMOUNT_OUT_OF_RANGE', message, { cause });
}

/** The ledger's refusals (overdraft, balance limit, unknown accounts) as service errors; other errors as they are. */
export function mapLedgerError(error: unknown): unknown {
  if (isCheckViolation(error, 'ledger_accounts_no_overdraft')) {
    return new ServiceError('INSUFFICIENT_FUNDS', 'the source account does not have enough available funds', { cause: error });
  }
  if (isCheckViolation(error, 'ledger_accounts_balance_limit')) return balanceLimitError(error);
  if ((error as { code?: string })?.code === 'LG001') {
    return new ServiceError('INVALID_INPUT', 'the accounts of this transfer do not exist or are in different currencies', { cause: error });
  }
  return error;
}

function toChanges(rows: BalanceRow[]): BalanceChange[] {
  return rows.map((r) => ({ accountId: r.account_id, available: Number(r.available), posted: Number(r.posted), updatedAt: r.updated_at }));
}

type BalanceRow = { account_id: string; available: number | string; posted: number | string; updated_at: Date };

/**
 * The ledger_record call for `legs`, selecting the new balances. `transactionId` may be an SQL
 * expression (a column of an earlier clause of the caller's statement).
 */
export function recordCall(platformId: string, transactionId: string | null | RawBuilder<string>, legs: Leg[], now: Date): RawBuilder<BalanceRow> {
  for (const leg of legs) {
    if (!Number.isSafeInteger(leg.amount) || leg.amount <= 0) throw new Error(`ledger leg amount must be a positive integer, got ${leg.amount}`);
  }
  return sql<BalanceRow>`
      select * from ledger_record(
        ${platformId}, ${transactionId}, ${now}::timestamptz,
        ${legs.map(() => newId('LedgerTransfer'))}::text[],
        ${legs.map((l) => l.debit)}::text[],
        ${legs.map((l) => l.credit)}::text[],
        ${legs.map((l) => l.amount)}::bigint[],
        ${legs.map((l) => Boolean(l.pending))}::boolean[],
        ${legs.map((l) => l.code)}::text[])`;
}

/**
 * Locks the balance-checked accounts among `ids` for update, in id order, as ledger_record and
 * ledger_resolve do, so that a transaction that takes these locks first cannot deadlock with them.
 */
export function lockAccounts(ids: string[]): RawBuilder<unknown> {
  return sql`select 1 from ledger_accounts where id = any(${ids}::text[]) and not no_balance_check order by id for update`;
}

/**
 * What rides on a ledger call's statement: balance events it finishes with the balances it
 * produces, and other writes of the same transaction (see `writeAsOne` for what they may be).
 */
export interface LedgerRiders {
  balanceEvents: BalanceEventRow[];
  writes: Write[];
}

/**
 * Writes the legs and moves the balances in one round trip (the ledger_record SQL function),
 * with the riders, if any, in the same statement.
 */
export async function recordLegs(
  trx: Trx,
  platformId: string,
  transactionId: string | null,
  legs: Leg[],
  now: Date,
  riders: LedgerRiders = { balanceEvents: [], writes: [] },
): Promise<BalanceChange[]> {
  if (legs.length === 0) return [];
  const call = recordCall(platformId, transactionId, legs, now);
  try {
    const { rows } = await withRiders(call, riders).execute(trx);
    return toChanges(rows);
  } catch (error) {
    throw mapLedgerError(error);
  }
}

/** Which pending transfers to resolve: by id, by the transaction they belong to, or both. */
export interface ResolveTarget {
  transferIds?: string[];
  transactionId?: string;
  /** Several transactions at once (their accounts are still locked in one ordered pass). */
  transactionIds?: string[];
  /**
   * The internal accounts the caller expects the call to change (a payment's source, say): their
   * balance events then ride on the call's statement, so the accounts' rows stay locked for the
   * commit's round trip only. Any other account that changes is announced after the call.
   */
  accounts?: string[];
}

/** Posts or voids pending transfers, with the riders in the same statement; already-resolved ones are skipped. */
export async function resolvePending(
  trx: Trx,
  platformId: string,
  target: ResolveTarget,
  outcome: 'POST' | 'VOID',
  now: Date,
  riders: LedgerRiders = { balanceEvents: [], writes: [] },
): Promise<BalanceChange[]> {
  const byTransactions = target.transactionIds?.length
    ? sql`array(select id from ledger_transfers where transaction_id = any(${target.transactionIds}::text[]))`
    : sql`'{}'::text[]`;
  const call = sql<BalanceRow>`
      select * from ledger_resolve(${platformId}, ${target.transferIds ?? []}::text[] || ${byTransactions}, ${target.transactionId ?? null},
                                   ${outcome === 'POST'}, ${now}::timestamptz)`;
  try {
    const { rows } = await withRiders(call, riders).execute(trx);
    return toChanges(rows);
  } catch (error) {
    throw mapLedgerError(error);
  }
}

/** A ledger call and its riders as one statement that selects the call's balances. */
function withRiders(call: RawBuilder<BalanceRow>, riders: LedgerRiders): RawBuilder<BalanceRow> {
  const writes = [...balanceEventWrites(riders.balanceEvents), ...riders.writes];
  return writes.length === 0 ? call : statementOf([{ as: 'balances', query: call }, ...writes], sql<BalanceRow>`select * from balances`);
}

export type TransferRow = Pick<
  LedgerTransferRow,
  'id' | 'debit_account_id' | 'credit_account_id' | 'amount' | 'currency' | 'state' | 'code'
>;

export async function transfersOf(ex: Executor, platformId: string, transactionId: string): Promise<TransferRow[]> {
  return ex
    .selectFrom('ledger_transfers')
    .select(['id', 'debit_account_id', 'credit_account_id', 'amount', 'currency', 'state', 'code'])
    .where('platform_id', '=', platformId)
    .where('transaction_id', '=', transactionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Transactions that still have pending (held) legs. */
export async function transactionsWithPendingLegs(ex: Executor, platformId?: string): Promise<string[]> {
  let query = ex.selectFrom('ledger_transfers').select('transaction_id').distinct().where('state', '=', 'PENDING').where('transaction_id', 'is not', null);
  if (platformId) query = query.where('platform_id', '=', platformId);
  const rows = await query.execute();
  return rows.map((r) => r.transaction_id as string);
}
