import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import { maintainedCount } from '../../db/list-counts.js';
import { keysetPage, onlyPages } from '../../http/pagination.js';
import type { DocumentContentType, DocumentListQuery, DocumentType } from './document-schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    documents: DocumentRow;
  }
}

export interface DocumentRow {
  id: string;
  platform_id: string;
  holder_id: string;
  customer_id: string;
  document_type: DocumentType;
  side: 'FRONT' | 'BACK' | null;
  country: string;
  document_number: string | null;
  file_name: string;
  content_type: DocumentContentType;
  size_bytes: number;
  sha256: string;
  storage_key: string;
  created_at: Date;
  updated_at: Date;
}

export type DocumentChanges = Omit<DocumentRow, 'id' | 'platform_id' | 'holder_id' | 'customer_id' | 'created_at'>;

/**
 * The bytes the platform's documents take (kept by a trigger, migration 0033), with its row locked
 * until commit, so that concurrent uploads of the platform check the quota one after another.
 */
export async function lockPlatformStorage(trx: Trx, platformId: string): Promise<number> {
  const { rows } = await sql<{ bytes: number }>`
    insert into document_storage (platform_id, bytes) values (${platformId}, 0)
    on conflict (platform_id) do update set bytes = document_storage.bytes
    returning bytes`.execute(trx);
  return rows[0].bytes;
}

/** How many documents the customer and its beneficial owners hold. */
export async function customerDocumentCount(ex: Executor, platformId: string, customerId: string): Promise<number> {
  const row = await ex
    .selectFrom('documents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertDocument(trx: Trx, row: DocumentRow): Promise<void> {
  await trx.insertInto('documents').values(row).execute();
}

export async function findDocument(ex: Executor, platformId: string, id: string, lock = false): Promise<DocumentRow | undefined> {
  let query = ex.selectFrom('documents').selectAll().where('id', '=', id).where(ofPlatform(platformId));
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function replaceDocument(trx: Trx, id: string, changes: DocumentChanges): Promise<DocumentRow> {
  return trx.updateTable('documents').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteDocument(trx: Trx, id: string): Promise<void> {
  await trx.deleteFrom('documents').where('id', '=', id).execute();
}

/** Type and holder of every document of a customer and of its beneficial owners. */
export async function documentsOfCustomer(ex: Executor, platformId: string, customerId: string) {
  return ex
    .selectFrom('documents')
    .select(['id', 'holder_id', 'document_type'])
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .execute();
}

export async function listDocuments(ex: Executor, platformId: string, q: DocumentListQuery) {
  let base = ex.selectFrom('documents').selectAll().where('platform_id', '=', platformId);
  if (q.documentHolder !== undefined) base = base.where('holder_id', '=', q.documentHolder);
  const total = onlyPages(q) ? maintainedCount(ex, platformId, 'documents') : undefined;
  return keysetPage(base, { limit: q.limit, cursor: q.cursor, total });
}
