import { sql, type Expression, type SqlBool } from 'kysely';
import type { ClockSubject } from '../../core/clock.js';
import { uuidv7Floor } from '../../core/ids.js';
import { jobRow, type ScheduledJob } from '../../core/jobs.js';
import { outboxWrites, realDueAt } from '../../core/outbox.js';
import type { Executor } from '../../db/database.js';
import { literalLimit, toJson } from '../../db/database.js';
import { deleteSelected } from '../../db/prune.js';
import { statementOf, writeAsOne, type Clause, type Write } from '../../db/one-statement.js';
import { rowInsert } from '../../db/row-insert.js';
import type { Json, WithDefault } from '../../db/schema.js';
import type { PaymentInstructions } from '../accounts/schemas.js';
import type { RailEvent } from '../rails/rail.js';
import type { OutgoingRateDetails, PurposeOfPayment, QuoteDestination, QuoteSource, QuoteStatus, RequiredPayerField, CurrencyPreference } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

/** How the receiving side of a quote is paid. */
export type Delivery =
  /** Credit an internal account of the platform: no rail, completes at execution. */
  | { kind: 'INTERNAL'; accountId: string }
  /** Pay out through the platform's rail to an external account. */
  | { kind: 'RAIL'; externalAccountId: string; identifier: string; accountType: string }
  /** Pay an UMA address: the UMA destination handler delivers it (settled through UMA_SETTLEMENT). */
  | {
      kind: 'UMA';
      lookupId: string;
      receiverUmaAddress: string;
      /** The payer data the receiver asked for (its lookup's fields); only these are sent. Absent on quotes made before it was kept. */
      payerFields?: string[];
    };

/** What the rail said it would report, relative to `railInitiatedAt`. */
export interface StoredRailPlan {
  steps: Array<{ afterMs: number; event: RailEvent }>;
}

declare module '../../db/schema.js' {
  interface DB {
    quotes: {
      id: string;
      platform_id: string;
      status: QuoteStatus;
      source: Json<QuoteSource>;
      destination: Json<QuoteDestination>;
      sending_currency: string;
      receiving_currency: string;
      total_sending_amount: number;
      total_receiving_amount: number;
      fees_included: number;
      exchange_rate: number;
      rate_details: Json<OutgoingRateDetails>;
      payment_instructions: Json<PaymentInstructions[]> | null;
      counterparty_information: Json<Record<string, unknown>> | null;
      sender_customer_info: Json<Record<string, unknown>> | null;
      lookup_id: string | null;
      purpose_of_payment: PurposeOfPayment | null;
      description: string | null;
      customer_id: string | null;
      debit_account_id: string | null;
      debit_account_type: string | null;
      delivery: Json<Delivery>;
      funding_reference: string | null;
      transaction_id: string;
      agent_id: string | null;
      expires_at: Date;
      executed_at: Date | null;
      rail_plan: Json<StoredRailPlan> | null;
      rail_initiated_at: Date | null;
      next_step: WithDefault<number>;
      created_at: Date;
      updated_at: Date;
    };
    lookups: {
      id: string;
      platform_id: string;
      kind: 'EXTERNAL_ACCOUNT' | 'UMA';
      account_id: string | null;
      receiver_uma_address: string | null;
      customer_id: string | null;
      sender_uma_address: string | null;
      supported_currencies: Json<CurrencyPreference[]>;
      required_payer_data_fields: Json<RequiredPayerField[]>;
      expires_at: Date;
      created_at: Date;
    };
  }
}

export interface QuoteRecord {
  id: string;
  platformId: string;
  status: QuoteStatus;
  source: QuoteSource;
  destination: QuoteDestination;
  sendingCurrency: string;
  receivingCurrency: string;
  totalSendingAmount: number;
  totalReceivingAmount: number;
  feesIncluded: number;
  exchangeRate: number;
  rateDetails: OutgoingRateDetails;
  paymentInstructions: PaymentInstructions[] | null;
  counterpartyInformation: Record<string, unknown> | null;
  senderCustomerInfo: Record<string, unknown> | null;
  lookupId: string | null;
  purposeOfPayment: PurposeOfPayment | null;
  description: string | null;
  customerId: string | null;
  debitAccountId: string | null;
  debitAccountType: string | null;
  delivery: Delivery;
  fundingReference: string | null;
  transactionId: string;
  agentId: string | null;
  expiresAt: Date;
  executedAt: Date | null;
  railPlan: StoredRailPlan | null;
  railInitiatedAt: Date | null;
  nextStep: number;
  createdAt: Date;
  updatedAt: Date;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function toRecord(row: any): QuoteRecord {
  return {
    id: row.id,
    platformId: row.platform_id,
    status: row.status,
    source: row.source,
    destination: row.destination,
    sendingCurrency: row.sending_currency,
    receivingCurrency: row.receiving_currency,
    totalSendingAmount: Number(row.total_sending_amount),
    totalReceivingAmount: Number(row.total_receiving_amount),
    feesIncluded: Number(row.fees_included),
    exchangeRate: Number(row.exchange_rate),
    rateDetails: row.rate_details,
    paymentInstructions: row.payment_instructions,
    counterpartyInformation: row.counterparty_information,
    senderCustomerInfo: row.sender_customer_info,
    lookupId: row.lookup_id,
    purposeOfPayment: row.purpose_of_payment,
    description: row.description,
    customerId: row.customer_id,
    debitAccountId: row.debit_account_id,
    debitAccountType: row.debit_account_type,
    delivery: row.delivery,
    fundingReference: row.funding_reference,
    transactionId: row.transaction_id,
    agentId: row.agent_id,
    expiresAt: row.expires_at,
    executedAt: row.executed_at,
    railPlan: row.rail_plan,
    railInitiatedAt: row.rail_initiated_at,
    nextStep: row.next_step,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function quoteValues(q: QuoteRecord) {
  return {
    id: q.id,
    platform_id: q.platformId,
    status: q.status,
    source: toJson(q.source),
    destination: toJson(q.destination),
    sending_currency: q.sendingCurrency,
    receiving_currency: q.receivingCurrency,
    total_sending_amount: q.totalSendingAmount,
    total_receiving_amount: q.totalReceivingAmount,
    fees_included: q.feesIncluded,
    exchange_rate: q.exchangeRate,
    rate_details: toJson(q.rateDetails),
    payment_instructions: q.paymentInstructions && toJson(q.paymentInstructions),
    counterparty_information: q.counterpartyInformation && toJson(q.counterpartyInformation),
    sender_customer_info: q.senderCustomerInfo && toJson(q.senderCustomerInfo),
    lookup_id: q.lookupId,
    purpose_of_payment: q.purposeOfPayment,
    description: q.description,
    customer_id: q.customerId,
    debit_account_id: q.debitAccountId,
    debit_account_type: q.debitAccountType,
    delivery: toJson(q.delivery),
    funding_reference: q.fundingReference,
    transaction_id: q.transactionId,
    agent_id: q.agentId,
    expires_at: q.expiresAt,
    executed_at: q.executedAt,
    rail_plan: null,
    rail_initiated_at: null,
    created_at: q.createdAt,
    updated_at: q.updatedAt,
  };
}

/** The insert of a quote (for `writeAsOne` or the write batcher). */
export function quoteInsert(q: QuoteRecord) {
  return rowInsert('quotes', quoteValues(q));
}

/** Inserts a quote and, in the same statement, the job that follows it up (expiry or recovery). */
export async function insertQuote(ex: Executor, platform: ClockSubject & { id: string }, q: QuoteRecord, job: ScheduledJob | null): Promise<void> {
  await writeAsOne(ex, [quoteInsert(q), ...outboxWrites({ jobs: job ? [jobRow(platform, job)] : [] })]);
}

export async function findQuote(ex: Executor, platformId: string, id: string, lock = false): Promise<QuoteRecord | undefined> {
  let query = ex.selectFrom('quotes').selectAll().where('id', '=', id).where(ofPlatform(platformId));
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && toRecord(row);
}

/**
 * A claim that starts execution: PENDING → `to` only while the quote is unexpired at `now` (so of
 * many concurrent calls exactly one matches), inserting in the same statement the job that
 * follows it up (recovery, or the first step of `plan` when the rail's plan is already known and
 * stored with the claim).
 */
export interface Claim {
  platform: ClockSubject & { id: string };
  id: string;
  to: QuoteStatus;
  now: Date;
  followUp: ScheduledJob | null;
  plan?: StoredRailPlan;
}

export async function claimForExecution(ex: Executor, claim: Claim): Promise<QuoteRecord | undefined> {
  return (await claimAndMove(ex, claim))?.quote;
}

/** The insert of `job`, once for each row the statement's clause `clause` returned (none: no job). */
function jobInsertFrom(clause: 'claimed' | 'planned', platform: ClockSubject & { id: string }, job: ScheduledJob) {
  const v = jobRow(platform, job);
  const dueAt = realDueAt(sql`${v.platform_id}::text`, sql`${v.run_at}::timestamptz`);
  return sql`insert into jobs (platform_id, kind, payload, due_at, max_attempts)
    select ${v.platform_id}, ${v.kind}, ${v.payload}::json, ${dueAt}, ${v.max_attempts} from ${sql.table(clause)}`;
}

/** True inside a statement with `claimClauses` once the quote was claimed (to guard what it carries). */
export const CLAIMED: Expression<SqlBool> = sql<SqlBool>`exists (select 1 from claimed)`;

/** The claim as clauses of a caller's statement: `claimed` (the quote's new row, if it matched) and its job's insert. */
export function claimClauses({ platform, id, to, now, followUp, plan }: Claim): Clause[] {
  const planned = plan ? sql`, rail_plan = ${toJson(plan)}::json, rail_initiated_at = ${now}, next_step = 0` : sql``;
  const claimed = sql`
    update quotes set status = ${to}, executed_at = ${now}, updated_at = ${now}${planned}
    where id = ${id} and ${ofPlatform(platform.id)} and status = 'PENDING' and expires_at > ${now}
    returning *`;
  const job = followUp ? [jobInsertFrom('claimed', platform, followUp)] : [];
  return [{ as: 'claimed', query: claimed }, ...job];
}

/** The record the claim leaves behind when it matched. */
export function claimedRecord(q: QuoteRecord, { to, now, plan }: Claim): QuoteRecord {
  return { ...q, status: to, executedAt: now, updatedAt: now, ...(plan && { railPlan: plan, railInitiatedAt: now, nextStep: 0 }) };
}

/**
 * The claim, carrying in the same statement the update `move` of another table (the quote's
 * transaction), which must be guarded by `CLAIMED`; returns the row `move` returned, as JSON.
 */
export async function claimAndMove(ex: Executor, claim: Claim, move?: Write): Promise<{ quote: QuoteRecord; moved: Record<string, unknown> | null } | undefined> {
  const clauses = [...claimClauses(claim), ...(move ? [{ as: 'moved', query: move }] : [])];
  const movedRow = move ? sql`(select to_json(m) from moved m)` : sql`null`;
  const { rows } = await statementOf(clauses, sql<Record<string, unknown>>`select *, ${movedRow} as moved_row from claimed`).execute(ex);
  return rows[0] ? { quote: toRecord(rows[0]), moved: rows[0].moved_row as Record<string, unknown> | null } : undefined;
}

/** Moves a quote between statuses (only from one of `from`); undefined when it was not in them. */
export async function moveQuote(
  ex: Executor,
  platformId: string,
  id: string,
  from: QuoteStatus[],
  to: QuoteStatus,
  now: Date,
  extra: { nextStep?: number; atStep?: number } = {},
): Promise<QuoteRecord | undefined> {
  let query = ex
    .updateTable('quotes')
    .set({ status: to, updated_at: now, ...(extra.nextStep !== undefined && { next_step: extra.nextStep }) })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('status', 'in', from);
  if (extra.atStep !== undefined) query = query.where('next_step', '=', extra.atStep);
  const row = await query.returningAll().executeTakeFirst();
  return row && toRecord(row);
}

/**
 * Moves up to `limit` of the platform's quotes still PENDING and due by `now` to EXPIRED, in one
 * statement; returns those. `executed_at is null` (true of every PENDING quote) is what lets
 * this statement, and no other, use the partial index `quotes_expiring`. The outer conditions
 * are checked again on the row an execution may have claimed meanwhile.
 */
export async function expireDueQuotes(ex: Executor, platformId: string, now: Date, limit: number): Promise<QuoteRecord[]> {
  const waiting = sql<SqlBool>`platform_id = ${platformId} and status = 'PENDING' and executed_at is null and expires_at <= ${now}`;
  const due = ex.selectFrom('quotes').select('id').where(waiting).orderBy('expires_at').limit(literalLimit(limit));
  const rows = await ex
    .updateTable('quotes')
    .set({ status: 'EXPIRED', updated_at: now })
    .where(waiting)
    .where('id', 'in', due)
    .returningAll()
    .execute();
  return rows.map(toRecord);
}

/**
 * Moves each quote still at its given rail step (and in one of `from`) to `to`, one step on, in
 * one statement; returns those that moved.
 */
export async function moveQuotesAtSteps(
  ex: Executor,
  platformId: string,
  steps: Array<{ quoteId: string; step: number }>,
  from: QuoteStatus[],
  to: QuoteStatus,
  now: Date,
): Promise<QuoteRecord[]> {
  const rows = await ex
    .updateTable('quotes')
    .set({ status: to, updated_at: now, next_step: sql`next_step + 1` })
    .where('platform_id', '=', platformId)
    .where('status', 'in', from)
    .where(sql<boolean>`(id, next_step) in (select * from unnest(${steps.map((s) => s.quoteId)}::text[], ${steps.map((s) => s.step)}::int[]))`)
    .returningAll()
    .execute();
  return rows.map(toRecord);
}

/** Stores the rail's plan once (a second initiation of the same quote finds it set and stops). */
export async function recordRailPlan(ex: Executor, platformId: string, id: string, plan: StoredRailPlan, at: Date): Promise<QuoteRecord | undefined> {
  const row = await ex
    .updateTable('quotes')
    .set({ rail_plan: toJson(plan), rail_initiated_at: at, next_step: 0, updated_at: at })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('rail_plan', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return row && toRecord(row);
}

/** Like recordRailPlan, and schedules the first step's job in the same statement. */
export async function recordRailPlanAndSchedule(
  ex: Executor,
  platform: ClockSubject & { id: string },
  id: string,
  plan: StoredRailPlan,
  at: Date,
  job: ScheduledJob,
): Promise<boolean> {
  const result = await sql<{ id: number }>`
    with planned as (
      update quotes set rail_plan = ${toJson(plan)}::json, rail_initiated_at = ${at}, next_step = 0, updated_at = ${at}
      where id = ${id} and ${ofPlatform(platform.id)} and rail_plan is null
      returning id)
    ${jobInsertFrom('planned', platform, job)}
    returning id`.execute(ex);
  return result.rows.length > 0;
}

export async function setNextStep(ex: Executor, platformId: string, id: string, step: number, at: Date): Promise<void> {
  await ex.updateTable('quotes').set({ next_step: step, updated_at: at }).where('id', '=', id).where(ofPlatform(platformId)).execute();
}

// ── lookups ──────────────────────────────────────────────────────────────────────────────────────

export interface LookupRecord {
  id: string;
  platformId: string;
  kind: 'EXTERNAL_ACCOUNT' | 'UMA';
  accountId: string | null;
  receiverUmaAddress: string | null;
  customerId: string | null;
  senderUmaAddress: string | null;
  supportedCurrencies: CurrencyPreference[];
  requiredPayerDataFields: RequiredPayerField[];
  expiresAt: Date;
  createdAt: Date;
}

export async function insertLookup(ex: Executor, l: LookupRecord): Promise<void> {
  await ex
    .insertInto('lookups')
    .values({
      id: l.id,
      platform_id: l.platformId,
      kind: l.kind,
      account_id: l.accountId,
      receiver_uma_address: l.receiverUmaAddress,
      customer_id: l.customerId,
      sender_uma_address: l.senderUmaAddress,
      supported_currencies: toJson(l.supportedCurrencies),
      required_payer_data_fields: toJson(l.requiredPayerDataFields),
      expires_at: l.expiresAt,
      created_at: l.createdAt,
    })
    .execute();
}

export async function findLookup(ex: Executor, platformId: string, id: string): Promise<LookupRecord | undefined> {
  const row = await ex.selectFrom('lookups').selectAll().where('id', '=', id).where(ofPlatform(platformId)).executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    platformId: row.platform_id,
    kind: row.kind,
    accountId: row.account_id,
    receiverUmaAddress: row.receiver_uma_address,
    customerId: row.customer_id,
    senderUmaAddress: row.sender_uma_address,
    supportedCurrencies: row.supported_currencies,
    requiredPayerDataFields: row.required_payer_data_fields,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

/**
 * Deletes, in batches, lookups made in [since, before) (real time, read from the `Lookup:<uuidv7>`
 * id) that no quote names: a quote's lookup is read again when it executes (the UMA payer's).
 * Receiver lookups and UMA lookups share the id space. `since` lets a caller skip the range it
 * pruned before: what stayed there is named by a quote, and stays so.
 */
export async function pruneLookups(ex: Executor, table: 'lookups' | 'uma_lookups', before: Date, since?: Date, batch?: number): Promise<number> {
  const from = `Lookup:${since ? uuidv7Floor(since.getTime()) : ''}`;
  const upTo = `Lookup:${uuidv7Floor(before.getTime())}`;
  // Both tables have the same key; typed as the first, since Kysely wants one table name.
  const pick = () =>
    ex
      .selectFrom(`${table} as l` as 'lookups as l')
      .select('l.id')
      .where('l.id', '>=', from)
      .where('l.id', '<', upTo)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('quotes as q').select('q.id').whereRef('q.lookup_id', '=', 'l.id'))))
      .orderBy('l.id');
  return deleteSelected(ex, table, 'id', pick, batch);
}
