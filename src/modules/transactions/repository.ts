import { sql, type Selectable } from 'kysely';
import type { DB, Executor } from '../../db/database.js';
import { toJson } from '../../db/database.js';
import type { Json, WithDefault } from '../../db/schema.js';
import { maintainedCount } from '../../db/list-counts.js';
import { rowInsert } from '../../db/row-insert.js';
import { ofPlatform } from '../../db/tenant.js';
import { keysetPage, onlyPages } from '../../http/pagination.js';
import type { PaymentInstructions } from '../accounts/schemas.js';
import type { FailureDetail, FailureReason, TransactionStatus, TransactionType } from './lifecycle.js';
import type { RateDetails, Refund, TransactionDestination, TransactionListQuery, TransactionSource } from './schemas.js';

declare module '../../db/schema.js' {
  interface DB {
    transactions: {
      id: string;
      platform_id: string;
      type: TransactionType;
      status: TransactionStatus;
      customer_id: string | null;
      platform_customer_id: string | null;
      source: Json<TransactionSource>;
      destination: Json<TransactionDestination>;
      source_identifier: string | null;
      destination_identifier: string | null;
      sent_amount: number | null;
      sent_currency: string | null;
      received_amount: number;
      received_currency: string;
      exchange_rate: number | null;
      fees: number | null;
      quote_id: string | null;
      reference: string;
      description: string | null;
      counterparty_information: Json<Record<string, unknown>> | null;
      rate_details: Json<RateDetails> | null;
      payment_instructions: Json<PaymentInstructions[]> | null;
      failure_reason: FailureReason | null;
      failure_detail: FailureDetail | null;
      rejection_reason: WithDefault<string | null>;
      refund: Json<Refund> | null;
      agent_id: string | null;
      awaiting_approval: WithDefault<boolean>;
      settled_at: Date | null;
      created_at: Date;
      updated_at: Date;
    };
  }
}

export interface TransactionRecord {
  id: string;
  platformId: string;
  type: TransactionType;
  status: TransactionStatus;
  customerId: string | null;
  platformCustomerId: string | null;
  source: TransactionSource;
  destination: TransactionDestination;
  sentAmount: number | null;
  sentCurrency: string | null;
  receivedAmount: number;
  receivedCurrency: string;
  exchangeRate: number | null;
  fees: number | null;
  quoteId: string | null;
  reference: string;
  description: string | null;
  counterpartyInformation: Record<string, unknown> | null;
  rateDetails: RateDetails | null;
  paymentInstructions: PaymentInstructions[] | null;
  failureReason: FailureReason | null;
  failureDetail: FailureDetail | null;
  rejectionReason: string | null;
  refund: Refund | null;
  agentId: string | null;
  awaitingApproval: boolean;
  settledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

type Row = Selectable<DB['transactions']>;

export function toRecord(row: Row): TransactionRecord {
  return {
    id: row.id,
    platformId: row.platform_id,
    type: row.type,
    status: row.status,
    customerId: row.customer_id,
    platformCustomerId: row.platform_customer_id,
    source: row.source,
    destination: row.destination,
    sentAmount: row.sent_amount,
    sentCurrency: row.sent_currency,
    receivedAmount: row.received_amount,
    receivedCurrency: row.received_currency,
    exchangeRate: row.exchange_rate,
    fees: row.fees,
    quoteId: row.quote_id,
    reference: row.reference,
    description: row.description,
    counterpartyInformation: row.counterparty_information,
    rateDetails: row.rate_details,
    paymentInstructions: row.payment_instructions,
    failureReason: row.failure_reason,
    failureDetail: row.failure_detail,
    rejectionReason: row.rejection_reason,
    refund: row.refund,
    agentId: row.agent_id,
    awaitingApproval: row.awaiting_approval,
    settledAt: row.settled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function identifierOf(side: { accountId?: string; umaAddress?: string }): string | null {
  return side.accountId ?? side.umaAddress ?? null;
}

/** The insert of a new transaction (for `writeAsOne` or the write batcher). */
export function transactionInsert(t: TransactionRecord) {
  return rowInsert('transactions', {
    id: t.id,
    platform_id: t.platformId,
    type: t.type,
    status: t.status,
    customer_id: t.customerId,
    platform_customer_id: t.platformCustomerId,
    source: toJson(t.source),
    destination: toJson(t.destination),
    source_identifier: identifierOf(t.source),
    destination_identifier: identifierOf(t.destination),
    sent_amount: t.sentAmount,
    sent_currency: t.sentCurrency,
    received_amount: t.receivedAmount,
    received_currency: t.receivedCurrency,
    exchange_rate: t.exchangeRate,
    fees: t.fees,
    quote_id: t.quoteId,
    reference: t.reference,
    description: t.description,
    counterparty_information: t.counterpartyInformation && toJson(t.counterpartyInformation),
    rate_details: t.rateDetails && toJson(t.rateDetails),
    payment_instructions: t.paymentInstructions && toJson(t.paymentInstructions),
    failure_reason: t.failureReason,
    failure_detail: t.failureDetail,
    refund: t.refund && toJson(t.refund),
    agent_id: t.agentId,
    awaiting_approval: t.awaitingApproval,
    settled_at: t.settledAt,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  });
}

/** Fields a status change may set alongside the status. */
export interface TransitionPatch {
  failureReason?: FailureReason | null;
  failureDetail?: FailureDetail | null;
  rejectionReason?: string | null;
  settledAt?: Date | null;
  refund?: Refund | null;
  awaitingApproval?: boolean;
  counterpartyInformation?: Record<string, unknown> | null;
}

/** A transaction row as `to_json` renders it (timestamps as text), as a record. */
export function recordFromJson(row: Record<string, unknown>): TransactionRecord {
  const at = (value: unknown) => (value === null ? null : new Date(value as string));
  return toRecord({ ...row, settled_at: at(row.settled_at), created_at: at(row.created_at), updated_at: at(row.updated_at) } as Row);
}

/**
 * Moves every transaction of `ids` that is in one of `from` (not empty), returning the rows it
 * moved: to run, or to put in a caller's statement.
 */
export function statusUpdate(
  ex: Executor,
  platformId: string,
  ids: string[],
  from: TransactionStatus[],
  to: TransactionStatus,
  patch: TransitionPatch,
  at: Date,
) {
  return ex
    .updateTable('transactions')
    .set({
      status: to,
      updated_at: at,
      ...(patch.failureReason !== undefined && { failure_reason: patch.failureReason }),
      ...(patch.failureDetail !== undefined && { failure_detail: patch.failureDetail }),
      ...(patch.rejectionReason !== undefined && { rejection_reason: patch.rejectionReason }),
      ...(patch.settledAt !== undefined && { settled_at: patch.settledAt }),
      ...(patch.refund !== undefined && { refund: patch.refund && toJson(patch.refund) }),
      ...(patch.awaitingApproval !== undefined && { awaiting_approval: patch.awaitingApproval }),
      ...(patch.counterpartyInformation !== undefined && {
        counterparty_information: patch.counterpartyInformation && toJson(patch.counterpartyInformation),
      }),
    })
    .where(ids.length === 1 ? sql<boolean>`id = ${ids[0]}` : sql<boolean>`id = any(${ids}::text[])`)
    .where(ofPlatform(platformId))
    .where('status', 'in', from)
    .returningAll();
}

export async function findTransaction(ex: Executor, platformId: string, id: string, lock = false): Promise<TransactionRecord | undefined> {
  let query = ex.selectFrom('transactions').selectAll().where('id', '=', id).where(ofPlatform(platformId));
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && toRecord(row);
}

export interface ListScope {
  /** Restrict to one customer (agents see only their customer's payments). */
  customerId?: string;
}

export async function listTransactions(ex: Executor, platformId: string, q: TransactionListQuery, scope: ListScope = {}) {
  let base = ex.selectFrom('transactions').selectAll().where('platform_id', '=', platformId);
  if (scope.customerId) base = base.where('customer_id', '=', scope.customerId);
  // The platform's own payments store no customer; the API shows the platform's id in both fields.
  if (q.customerId) base = q.customerId === platformId ? base.where('customer_id', 'is', null) : base.where('customer_id', '=', q.customerId);
  if (q.platformCustomerId) {
    const id = q.platformCustomerId;
    base = id === platformId ? base.where('platform_customer_id', 'is', null) : base.where('platform_customer_id', '=', id);
  }
  if (q.accountIdentifier) {
    const id = q.accountIdentifier;
    base = base.where((eb) => eb.or([eb('source_identifier', '=', id), eb('destination_identifier', '=', id)]));
  }
  if (q.senderAccountIdentifier) base = base.where('source_identifier', '=', q.senderAccountIdentifier);
  if (q.receiverAccountIdentifier) base = base.where('destination_identifier', '=', q.receiverAccountIdentifier);
  if (q.status) base = base.where('status', '=', q.status);
  if (q.type) base = base.where('type', '=', q.type);
  if (q.reference) base = base.where('reference', '=', q.reference);
  if (q.startDate) base = base.where('created_at', '>=', new Date(q.startDate));
  if (q.endDate) base = base.where('created_at', '<=', new Date(q.endDate));
  const total = !scope.customerId && onlyPages(q) ? maintainedCount(ex, platformId, 'transactions') : undefined;
  const page = await keysetPage(base, { limit: q.limit, cursor: q.cursor, order: q.sortOrder ?? 'desc', total });
  return { ...page, rows: page.rows.map(toRecord) };
}

/** Of the given transactions, those in a final status (used to find holds nobody will resolve). */
export async function terminalAmong(ex: Executor, ids: string[]): Promise<{ id: string; status: TransactionStatus }[]> {
  if (ids.length === 0) return [];
  return ex
    .selectFrom('transactions')
    .select(['id', 'status'])
    .where('id', 'in', ids)
    .where('status', 'in', ['COMPLETED', 'FAILED', 'REJECTED', 'REFUNDED', 'EXPIRED'])
    .execute();
}
