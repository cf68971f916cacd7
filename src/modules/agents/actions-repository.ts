import { sql, type Selectable } from 'kysely';
import type { DB, Executor } from '../../db/database.js';
import { toJson } from '../../db/database.js';
import type { Json } from '../../db/schema.js';
import { keysetPage } from '../../http/pagination.js';
import type { ActionListQuery, ActionStatus, ActionType, ApprovalListQuery, TransferDetailsView } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    agent_actions: {
      id: string;
      platform_id: string;
      agent_id: string;
      customer_id: string;
      platform_customer_id: string;
      type: ActionType;
      status: ActionStatus;
      quote_id: string | null;
      transfer_details: Json<TransferDetailsView> | null;
      transaction_id: string | null;
      rejection_reason: string | null;
      failure_reason: string | null;
      /** Held wallet-funded quote executions: the owner's Service-Wallet-Signature, for the approval. */
      wallet_signature: string | null;
      spend_amount: number;
      spend_currency: string;
      spend_day: string;
      spend_month: string;
      created_at: Date;
      updated_at: Date;
    };
  }
}

/** An agent_actions row as read (transfer_details parsed). */
export type ActionRow = Selectable<DB['agent_actions']>;

/** The statuses whose spend counts against the limits. */
export const COUNTING_STATUSES: ActionStatus[] = ['PENDING_APPROVAL', 'APPROVED'];

export async function insertAction(ex: Executor, row: ActionRow): Promise<void> {
  await ex
    .insertInto('agent_actions')
    .values({ ...row, transfer_details: row.transfer_details && toJson(row.transfer_details) })
    .execute();
}

export async function findAction(ex: Executor, platformId: string, id: string, agentId?: string): Promise<ActionRow | undefined> {
  let query = ex.selectFrom('agent_actions').selectAll().where('id', '=', id).where(ofPlatform(platformId));
  if (agentId !== undefined) query = query.where('agent_id', '=', agentId);
  return query.executeTakeFirst();
}

/** An action of this status to execute this quote, if any. */
export async function findQuoteAction(ex: Executor, platformId: string, quoteId: string, status: ActionStatus): Promise<ActionRow | undefined> {
  return ex
    .selectFrom('agent_actions')
    .selectAll()
    .where('quote_id', '=', quoteId)
    .where(ofPlatform(platformId))
    .where('status', '=', status)
    .executeTakeFirst();
}

/** One agent's actions, newest first. */
export async function listAgentActions(ex: Executor, platformId: string, agentId: string, q: ActionListQuery) {
  let base = ex.selectFrom('agent_actions').selectAll().where('platform_id', '=', platformId).where('agent_id', '=', agentId);
  if (q.status) base = base.where('status', '=', q.status);
  return keysetPage(base, { limit: q.limit, cursor: q.cursor });
}

/** Actions waiting for the platform's decision. */
export async function listPending(ex: Executor, platformId: string, q: ApprovalListQuery) {
  let base = ex.selectFrom('agent_actions').selectAll().where('platform_id', '=', platformId).where('status', '=', 'PENDING_APPROVAL');
  if (q.agentId !== undefined) base = base.where('agent_id', '=', q.agentId);
  if (q.customerId !== undefined) base = base.where('customer_id', '=', q.customerId);
  if (q.startDate) base = base.where('created_at', '>=', new Date(q.startDate));
  if (q.endDate) base = base.where('created_at', '<=', new Date(q.endDate));
  return keysetPage(base, { limit: q.limit, cursor: q.cursor, order: q.sortOrder ?? 'desc' });
}

export interface ActionMove {
  transaction_id?: string;
  spend_day?: string;
  spend_month?: string;
  rejection_reason?: string | null;
  failure_reason?: string | null;
}

/** Moves an action from `from` to `to` (a guarded update: undefined when it was elsewhere). */
export async function moveAction(
  ex: Executor,
  platformId: string,
  id: string,
  from: ActionStatus,
  to: ActionStatus,
  patch: ActionMove,
  now: Date,
): Promise<ActionRow | undefined> {
  return ex
    .updateTable('agent_actions')
    .set({ ...patch, status: to, updated_at: now })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The action still `from` that a payment or quote names becomes FAILED, so its spend stops
 * counting: the approved action behind a payment that failed (`transaction_id`, APPROVED), or a
 * held execution whose quote expired and which approving could only fail (`quote_id`,
 * PENDING_APPROVAL).
 */
export async function failActionOf(
  ex: Executor,
  platformId: string,
  of: { column: 'transaction_id' | 'quote_id'; id: string; from: ActionStatus },
  reason: string,
  now: Date,
): Promise<void> {
  await ex
    .updateTable('agent_actions')
    .set({ status: 'FAILED', failure_reason: reason, updated_at: now })
    .where(of.column, '=', of.id)
    .where('platform_id', '=', platformId)
    .where('status', '=', of.from)
    .execute();
}

/** Pending actions of deleted agents are rejected: nobody should approve them any more. */
export async function rejectPendingOf(ex: Executor, platformId: string, agentIds: string[], reason: string, now: Date): Promise<void> {
  if (agentIds.length === 0) return;
  await ex
    .updateTable('agent_actions')
    .set({ status: 'REJECTED', rejection_reason: reason, updated_at: now })
    .where('platform_id', '=', platformId)
    .where('agent_id', 'in', agentIds)
    .where('status', '=', 'PENDING_APPROVAL')
    .execute();
}

export interface UsageRow {
  agent_id: string;
  spend_currency: string;
  daily_spend: number;
  daily_count: number;
  monthly_spend: number;
}

/** Counting spend of the given agents in one month, and in one day of it, per spend currency. */
export async function usageRows(ex: Executor, agentIds: string[], day: string, month: string): Promise<UsageRow[]> {
  if (agentIds.length === 0) return [];
  const rows = await ex
    .selectFrom('agent_actions')
    .select([
      'agent_id',
      'spend_currency',
      sql<number>`coalesce(sum(spend_amount) filter (where spend_day = ${day}), 0)::bigint`.as('daily_spend'),
      sql<number>`(count(*) filter (where spend_day = ${day}))::int`.as('daily_count'),
      sql<number>`coalesce(sum(spend_amount), 0)::bigint`.as('monthly_spend'),
    ])
    .where('agent_id', 'in', agentIds)
    .where('spend_month', '=', month)
    .where('status', 'in', COUNTING_STATUSES)
    .groupBy(['agent_id', 'spend_currency'])
    .execute();
  return rows.map((r) => ({ ...r, daily_spend: Number(r.daily_spend), daily_count: Number(r.daily_count), monthly_spend: Number(r.monthly_spend) }));
}
