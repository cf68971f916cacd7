import type { Executor } from '../../db/database.js';
import { keysetPage } from '../../http/pagination.js';
import type { Permission, TokenListQuery } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    api_tokens: TokenRow;
  }
}

export interface TokenRow {
  id: string;
  platform_id: string;
  client_id: string;
  name: string;
  permissions: Permission[];
  secret_salt: string;
  secret_hash: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export async function insertToken(ex: Executor, row: TokenRow): Promise<void> {
  await ex.insertInto('api_tokens').values(row).execute();
}

export async function findActiveByClientId(ex: Executor, clientId: string): Promise<TokenRow | undefined> {
  return ex
    .selectFrom('api_tokens')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findToken(ex: Executor, platformId: string, id: string): Promise<TokenRow | undefined> {
  return ex
    .selectFrom('api_tokens')
    .selectAll()
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listTokens(ex: Executor, platformId: string, q: TokenListQuery) {
  let base = ex.selectFrom('api_tokens').selectAll().where('platform_id', '=', platformId).where('deleted_at', 'is', null);
  if (q.name !== undefined) base = base.where('name', '=', q.name);
  if (q.createdAfter) base = base.where('created_at', '>=', new Date(q.createdAfter));
  if (q.createdBefore) base = base.where('created_at', '<=', new Date(q.createdBefore));
  if (q.updatedAfter) base = base.where('updated_at', '>=', new Date(q.updatedAfter));
  if (q.updatedBefore) base = base.where('updated_at', '<=', new Date(q.updatedBefore));
  return keysetPage(base, { limit: q.limit, cursor: q.cursor });
}

export async function softDeleteToken(ex: Executor, platformId: string, id: string, at: Date): Promise<string | undefined> {
  const row = await ex
    .updateTable('api_tokens')
    .set({ deleted_at: at, updated_at: at })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('deleted_at', 'is', null)
    .returning('client_id')
    .executeTakeFirst();
  return row?.client_id;
}

export async function replaceSecret(ex: Executor, id: string, salt: string, hash: string, at: Date): Promise<void> {
  await ex.updateTable('api_tokens').set({ secret_salt: salt, secret_hash: hash, updated_at: at }).where('id', '=', id).execute();
}
