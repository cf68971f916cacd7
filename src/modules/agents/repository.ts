import type { Executor } from '../../db/database.js';
import { toJson } from '../../db/database.js';
import type { Json } from '../../db/schema.js';
import { keysetPage } from '../../http/pagination.js';
import type { AgentPolicy } from './policy.js';
import type { AgentListQuery } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    agents: {
      id: string;
      platform_id: string;
      customer_id: string;
      name: string;
      is_paused: boolean;
      is_connected: boolean;
      policy: Json<AgentPolicy>;
      token_id: string | null;
      token_salt: string | null;
      token_hash: string | null;
      created_at: Date;
      updated_at: Date;
      deleted_at: Date | null;
    };
    agent_device_codes: DeviceCodeRow;
  }
}

export interface AgentRow {
  id: string;
  platform_id: string;
  customer_id: string;
  name: string;
  is_paused: boolean;
  is_connected: boolean;
  policy: AgentPolicy;
  token_id: string | null;
  token_salt: string | null;
  token_hash: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface DeviceCodeRow {
  code_hash: string;
  platform_id: string;
  agent_id: string;
  expires_at: Date;
  redeemed_at: Date | null;
  created_at: Date;
}

export async function insertAgent(ex: Executor, row: AgentRow): Promise<void> {
  await ex
    .insertInto('agents')
    .values({ ...row, policy: toJson(row.policy) })
    .execute();
}

/**
 * A live (not deleted) agent of the platform; `lock` takes its row lock until the transaction
 * ends. FOR NO KEY UPDATE: it serialises the agent's decisions, but not the foreign-key checks
 * (FOR KEY SHARE) of other transactions writing rows that name the agent.
 */
export async function findAgent(ex: Executor, platformId: string, id: string, lock = false): Promise<AgentRow | undefined> {
  let query = ex.selectFrom('agents').selectAll().where('id', '=', id).where(ofPlatform(platformId)).where('deleted_at', 'is', null);
  if (lock) query = query.forNoKeyUpdate();
  return query.executeTakeFirst();
}

export async function findAgentByTokenId(ex: Executor, tokenId: string): Promise<AgentRow | undefined> {
  return ex.selectFrom('agents').selectAll().where('token_id', '=', tokenId).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function listAgents(ex: Executor, platformId: string, q: AgentListQuery) {
  let base = ex.selectFrom('agents').selectAll().where('platform_id', '=', platformId).where('deleted_at', 'is', null);
  if (q.customerId !== undefined) base = base.where('customer_id', '=', q.customerId);
  if (q.isPaused !== undefined) base = base.where('is_paused', '=', q.isPaused);
  if (q.isConnected !== undefined) base = base.where('is_connected', '=', q.isConnected);
  if (q.createdAfter) base = base.where('created_at', '>=', new Date(q.createdAfter));
  if (q.createdBefore) base = base.where('created_at', '<=', new Date(q.createdBefore));
  if (q.updatedAfter) base = base.where('updated_at', '>=', new Date(q.updatedAfter));
  if (q.updatedBefore) base = base.where('updated_at', '<=', new Date(q.updatedBefore));
  return keysetPage(base, { limit: q.limit, cursor: q.cursor });
}

export interface AgentPatch {
  name?: string;
  is_paused?: boolean;
  policy?: AgentPolicy;
}

export async function updateAgent(ex: Executor, platformId: string, id: string, patch: AgentPatch, now: Date): Promise<AgentRow | undefined> {
  const { policy, ...plain } = patch;
  return ex
    .updateTable('agents')
    .set({ ...plain, ...(policy && { policy: toJson(policy) }), updated_at: now })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Soft-deletes the given live agents; returns the rows as they were. */
export async function deleteAgents(ex: Executor, platformId: string, filter: { id: string } | { customerId: string }, now: Date): Promise<AgentRow[]> {
  let query = ex
    .updateTable('agents')
    .set({ deleted_at: now, updated_at: now })
    .where('platform_id', '=', platformId)
    .where('deleted_at', 'is', null);
  query = 'id' in filter ? query.where('id', '=', filter.id) : query.where('customer_id', '=', filter.customerId);
  return query.returningAll().execute();
}

/** Connects an agent that is not yet connected: records its access token. False when it no longer can. */
export async function connectAgent(ex: Executor, id: string, token: { id: string; salt: string; hash: string }, now: Date): Promise<boolean> {
  const row = await ex
    .updateTable('agents')
    .set({ is_connected: true, token_id: token.id, token_salt: token.salt, token_hash: token.hash, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('is_connected', '=', false)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// ── device codes ─────────────────────────────────────────────────────────────────────────────────

export async function insertDeviceCode(ex: Executor, row: DeviceCodeRow): Promise<void> {
  await ex.insertInto('agent_device_codes').values(row).execute();
}

/** Codes of the agent not yet redeemed stop working (a new one replaces them). */
export async function deleteUnredeemedCodes(ex: Executor, agentId: string): Promise<void> {
  await ex.deleteFrom('agent_device_codes').where('agent_id', '=', agentId).where('redeemed_at', 'is', null).execute();
}

export async function deleteCodesOf(ex: Executor, agentIds: string[]): Promise<void> {
  if (agentIds.length === 0) return;
  await ex.deleteFrom('agent_device_codes').where('agent_id', 'in', agentIds).execute();
}

export async function findDeviceCode(ex: Executor, codeHash: string, lock = false): Promise<DeviceCodeRow | undefined> {
  let query = ex.selectFrom('agent_device_codes').selectAll().where('code_hash', '=', codeHash);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function markRedeemed(ex: Executor, codeHash: string, now: Date): Promise<boolean> {
  const row = await ex
    .updateTable('agent_device_codes')
    .set({ redeemed_at: now })
    .where('code_hash', '=', codeHash)
    .where('redeemed_at', 'is', null)
    .returning('code_hash')
    .executeTakeFirst();
  return row !== undefined;
}
