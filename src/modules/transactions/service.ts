import type { Expression, SqlBool } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { currency } from '../../core/currencies.js';
import { ServiceError } from '../../core/errors.js';
import { emitEvents, eventRows, type NewEvent } from '../../core/events.js';
import { outboxWrites } from '../../core/outbox.js';
import { newId, newReference } from '../../core/ids.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import { writeAsOne, type Clause, type Write } from '../../db/one-statement.js';
import type { Page } from '../../http/pagination.js';
import { eventFor, reasonFits, statusesBefore, type TransactionStatus } from './lifecycle.js';
import * as repo from './repository.js';
import type { TransactionRecord, TransitionPatch } from './repository.js';
import type { TransactionListQuery, TransactionView } from './schemas.js';

export type { TransactionRecord, TransitionPatch } from './repository.js';

export interface TransactionServiceDeps {
  database: Database;
  clock: Clock;
}

/** What a new transaction needs; ids, reference and timestamps are filled in. */
export type NewTransaction = Omit<
  TransactionRecord,
  'id' | 'platformId' | 'reference' | 'createdAt' | 'updatedAt' | 'awaitingApproval' | 'failureReason' | 'failureDetail' | 'rejectionReason' | 'refund' | 'settledAt'
> &
  Partial<Pick<TransactionRecord, 'awaitingApproval' | 'failureReason' | 'failureDetail' | 'refund' | 'settledAt' | 'id'>>;

/** Statuses that show why the payment ended (an expired quote's transaction says QUOTE_EXPIRED). */
const SHOWS_FAILURE_REASON: ReadonlySet<TransactionStatus> = new Set(['FAILED', 'REJECTED', 'EXPIRED']);

export function presentTransaction(t: TransactionRecord, platformId: string): TransactionView {
  const money = (amount: number, code: string) => ({ amount, currency: currency(code) });
  return {
    id: t.id,
    status: t.status,
    type: t.type,
    source: t.source,
    destination: t.destination,
    customerId: t.customerId ?? platformId,
    platformCustomerId: t.platformCustomerId ?? platformId,
    ...(t.sentAmount !== null && t.sentCurrency && { sentAmount: money(t.sentAmount, t.sentCurrency) }),
    receivedAmount: money(t.receivedAmount, t.receivedCurrency),
    ...(t.exchangeRate !== null && { exchangeRate: t.exchangeRate }),
    ...(t.fees !== null && { fees: t.fees }),
    ...(t.quoteId && { quoteId: t.quoteId }),
    ...(t.paymentInstructions && { paymentInstructions: t.paymentInstructions }),
    ...(t.refund && { refund: t.refund }),
    ...(t.settledAt && { settledAt: t.settledAt.toISOString() }),
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
    ...(t.agentId && { agentId: t.agentId }),
    ...(t.description && { description: t.description }),
    ...(t.counterpartyInformation && { counterpartyInformation: t.counterpartyInformation }),
    ...(t.status !== 'CREATED' && { reconciliationInstructions: { reference: t.reference } }),
    ...(t.rateDetails && { rateDetails: t.rateDetails }),
    ...(t.failureReason && SHOWS_FAILURE_REASON.has(t.status) && { failureReason: t.failureReason }),
    ...(t.failureDetail && t.status !== 'COMPLETED' && { failureDetail: t.failureDetail }),
    ...(t.rejectionReason && t.status === 'REJECTED' && { rejectionReason: t.rejectionReason }),
  };
}

/** A bug, not a client error: throwing rolls the caller's transaction (or statement) back. */
function checkReason(record: TransactionRecord): void {
  if (record.failureReason && !reasonFits(record.type, record.failureReason)) {
    throw new Error(`failureReason ${record.failureReason} is not one of the reference's values for ${record.type} transactions`);
  }
}

/** What another domain does, in the same transaction, when a transaction enters one of `statuses`. */
export interface TransitionHook {
  statuses: readonly TransactionStatus[];
  run: (trx: Trx, platform: PlatformRef, record: TransactionRecord) => Promise<void>;
}

/**
 * Transactions: the API's record of every payment, its status machine, and the webhooks each
 * status change announces (written in the caller's transaction, so the event exists exactly
 * when the change committed). Money itself moves in the ledger, in the same transaction.
 */
export function createTransactionService({ database, clock }: TransactionServiceDeps) {
  /** What other domains do when a transaction changes status, in the same transaction (agents fail the action of a failed payment). */
  const hooks: { transitioned: TransitionHook[] } = { transitioned: [] };

  /**
   * Whether `from` → `to` may be written inside a caller's statement: the lifecycle allows it and
   * no hook (hooks need a transaction) watches `to`.
   */
  const movableInStatement = (from: TransactionStatus, to: TransactionStatus) =>
    statusesBefore(to).includes(from) && !hooks.transitioned.some((h) => h.statuses.includes(to));

  /** The events a transaction announces as it enters its current status. */
  function announcements(platform: PlatformRef, record: TransactionRecord): NewEvent[] {
    // INCOMING_PAYMENT.PENDING asks the platform to approve (its answer decides the payment), so
    // it goes out only for payments that wait for that answer, not for the platform's own pulls.
    if (record.type === 'INCOMING' && record.status === 'PENDING' && !record.awaitingApproval) return [];
    const type = eventFor(record.type, record.status);
    return type ? [{ type, data: presentTransaction(record, platform.id) }] : [];
  }

  async function announce(trx: Trx, platform: PlatformRef, record: TransactionRecord): Promise<void> {
    await emitEvents(trx, platform, announcements(platform, record), clock);
  }

  /**
   * A new transaction and the writes that create it (its row and its event), for a caller that
   * commits them together with its own (`writeAsOne`).
   */
  function creation(platform: PlatformRef, draft: NewTransaction): { record: TransactionRecord; writes: Write[] } {
    const record = newRecord(platform, draft);
    return { record, writes: creationWrites(platform, record, announcements(platform, record)) };
  }

  /**
   * `creation` of a transaction that moves on to `to` at once: one row, in status `to`, and the
   * announcements of both statuses in order, as if created and then moved. Null when the lifecycle
   * does not allow the move or a hook watches `to` (hooks need a transaction).
   */
  function creationMovedTo(platform: PlatformRef, draft: NewTransaction, to: TransactionStatus): { record: TransactionRecord; writes: Write[] } | null {
    if (!movableInStatement(draft.status, to)) return null;
    const created = newRecord(platform, draft);
    const record: TransactionRecord = { ...created, status: to };
    checkReason(record);
    return { record, writes: creationWrites(platform, record, [...announcements(platform, created), ...announcements(platform, record)]) };
  }

  function creationWrites(platform: PlatformRef, record: TransactionRecord, announced: NewEvent[]): Write[] {
    return [repo.transactionInsert(record), ...outboxWrites({ events: eventRows(platform, announced, clock) })];
  }

  function newRecord(platform: PlatformRef, draft: NewTransaction): TransactionRecord {
    const now = clock.now(platform);
    return {
      awaitingApproval: false,
      failureReason: null,
      failureDetail: null,
      rejectionReason: null,
      refund: null,
      settledAt: null,
      ...draft,
      id: draft.id ?? newId('Transaction'),
      platformId: platform.id,
      reference: newReference(),
      createdAt: now,
      updatedAt: now,
    };
  }

  async function create(trx: Trx, platform: PlatformRef, draft: NewTransaction): Promise<TransactionRecord> {
    const { record, writes } = creation(platform, draft);
    await writeAsOne(trx, writes);
    return record;
  }

  /**
   * Moves a transaction to `to` if its current status allows it (see lifecycle.ts) and announces
   * the change. Returns undefined when it was not in a status that allows the move (already
   * moved by a concurrent worker or a retried job): callers treat that as "nothing to do".
   */
  async function transition(
    trx: Trx,
    platform: PlatformRef,
    id: string,
    to: TransactionStatus,
    patch: TransitionPatch = {},
    options: { from?: TransactionStatus[] } = {},
  ): Promise<TransactionRecord | undefined> {
    return (await transitionAll(trx, platform, [id], to, patch, options))[0];
  }

  /** `transition` for several transactions in one statement; returns those that moved. */
  async function transitionAll(
    trx: Trx,
    platform: PlatformRef,
    ids: string[],
    to: TransactionStatus,
    patch: TransitionPatch = {},
    options: { from?: TransactionStatus[] } = {},
  ): Promise<TransactionRecord[]> {
    const from = options.from ?? statusesBefore(to);
    if (from.length === 0 || ids.length === 0) return [];
    const records = (await repo.statusUpdate(trx, platform.id, ids, from, to, patch, clock.now(platform)).execute()).map(repo.toRecord);
    for (const record of records) await afterMove(trx, platform, record);
    return records;
  }

  /** What follows a transition in the same transaction: the check, the event, the hooks. */
  async function afterMove(trx: Trx, platform: PlatformRef, record: TransactionRecord): Promise<TransactionRecord> {
    checkReason(record);
    await announce(trx, platform, record);
    for (const hook of hooks.transitioned) if (hook.statuses.includes(record.status)) await hook.run(trx, platform, record);
    return record;
  }

  /**
   * `transition` of a transaction whose row the caller knows as it stands (`known`): the writes
   * that make it so and announce it, for the caller's one statement. The update is the
   * clause named `moved`; it matches only while the row is still `known` (same status and
   * updated_at) and `onlyIf` holds, and the caller's statement must fail when it did not match.
   * Null when a hook would have to run (hooks need a transaction).
   */
  function transitionFrom(platform: PlatformRef, known: TransactionRecord, to: TransactionStatus, patch: TransitionPatch, onlyIf: Expression<SqlBool>) {
    if (!movableInStatement(known.status, to)) return null;
    const now = clock.now(platform);
    const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    const record: TransactionRecord = { ...known, ...changes, status: to, updatedAt: now };
    checkReason(record);
    const update = repo.statusUpdate(database.db, platform.id, [known.id], [known.status], to, patch, now).where('updated_at', '=', known.updatedAt).where(onlyIf);
    const events = eventRows(platform, announcements(platform, record), clock);
    return [{ as: 'moved', query: update }, ...outboxWrites({ events })] as Clause[];
  }

  /**
   * `transition` split for a caller that puts the update into a statement of its own: `update`
   * moves the row only where `onlyIf` holds as well, and `moved` finishes the transition (event,
   * hooks) in the caller's transaction, given the row the update returned as `to_json` renders it.
   */
  function transitionWithin(platform: PlatformRef, id: string, to: TransactionStatus, patch: TransitionPatch, onlyIf: Expression<SqlBool>) {
    return {
      update: repo.statusUpdate(database.db, platform.id, [id], statusesBefore(to), to, patch, clock.now(platform)).where(onlyIf),
      moved: (trx: Trx, row: Record<string, unknown>) => afterMove(trx, platform, repo.recordFromJson(row)),
    };
  }

  async function require(ex: Executor, platformId: string, id: string, lock = false): Promise<TransactionRecord> {
    const record = await repo.findTransaction(ex, platformId, id, lock);
    if (!record) throw new ServiceError('TRANSACTION_NOT_FOUND', 'transaction not found');
    return record;
  }

  async function list(ctx: ServiceContext, query: TransactionListQuery, scope: repo.ListScope = {}): Promise<Page<TransactionView>> {
    const page = await repo.listTransactions(database.db, ctx.platform.id, query, scope);
    return {
      data: page.rows.map((r) => presentTransaction(r, ctx.platform.id)),
      hasMore: page.hasMore,
      nextCursor: page.nextCursor,
      totalCount: page.totalCount,
    };
  }

  return {
    hooks,
    creation,
    creationMovedTo,
    create,
    transition,
    transitionAll,
    transitionWithin,
    transitionFrom,
    require,
    find: repo.findTransaction,
    present: presentTransaction,
    async get(ctx: ServiceContext, id: string, scope: repo.ListScope = {}): Promise<TransactionView> {
      const record = await require(database.db, ctx.platform.id, id);
      if (scope.customerId && record.customerId !== scope.customerId) throw new ServiceError('TRANSACTION_NOT_FOUND', 'transaction not found');
      return presentTransaction(record, ctx.platform.id);
    },
    list,
    terminalAmong: repo.terminalAmong,
  };
}

export type TransactionService = ReturnType<typeof createTransactionService>;
