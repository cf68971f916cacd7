import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import { literalLimit, toJson } from '../../db/database.js';
import type { Json } from '../../db/schema.js';

export type ImportStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

declare module '../../db/schema.js' {
  interface DB {
    bulk_imports: {
      id: string;
      platform_id: string;
      status: ImportStatus;
      file_name: string | null;
      /** The uploaded file (UTF-8 bytes), until the import ends. */
      csv: Uint8Array | null;
      total: number;
      processed: import('kysely').Generated<number>;
      resume_byte: number | null;
      successful: import('kysely').Generated<number>;
      failed: import('kysely').Generated<number>;
      created_at: Date;
      updated_at: Date;
      completed_at: Date | null;
    };
    bulk_import_errors: {
      import_id: string;
      row_number: number;
      correlation_id: string;
      code: string;
      message: string;
      details: Json<Record<string, unknown>>;
    };
  }
}

/** An import without its file (`importCsv` reads that). */
export interface ImportRow {
  id: string;
  platform_id: string;
  status: ImportStatus;
  file_name: string | null;
  total: number;
  processed: number;
  /** Byte offset in the CSV where row `processed` starts; null: count from the header. */
  resume_byte: number | null;
  successful: number;
  failed: number;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface RowError {
  rowNumber: number;
  correlationId: string;
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** Another process recorded this row first: the caller stops and leaves the rest to it. */
export class StaleProgress extends Error {
  constructor() {
    super('bulk import progress moved on in another process');
  }
}

const COLUMNS = ['id', 'platform_id', 'status', 'file_name', 'total', 'processed', 'resume_byte', 'successful', 'failed', 'created_at', 'updated_at', 'completed_at'] as const;

export async function insertImport(trx: Trx, row: Omit<ImportRow, 'processed' | 'resume_byte' | 'successful' | 'failed'> & { csv: Uint8Array }): Promise<void> {
  await trx.insertInto('bulk_imports').values(row).execute();
}

/** The import without its file, which progress polls have no use for. */
export async function findImport(ex: Executor, platformId: string | null, id: string): Promise<ImportRow | undefined> {
  let query = ex.selectFrom('bulk_imports').select(COLUMNS).where('id', '=', id);
  if (platformId) query = query.where('platform_id', '=', platformId);
  return query.executeTakeFirst();
}

/**
 * `length` bytes of the stored CSV from byte `from` (0-based; fewer at its end), read by the
 * database from the stored value without the rest of it; null once the import has ended.
 */
export async function csvSlice(ex: Executor, id: string, from: number, length: number): Promise<Uint8Array | null> {
  const row = await ex
    .selectFrom('bulk_imports')
    .select(sql<Uint8Array | null>`substring(csv from ${from + 1} for ${length})`.as('slice'))
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.slice ?? null;
}

export async function markProcessing(ex: Executor, id: string, now: Date): Promise<void> {
  await ex.updateTable('bulk_imports').set({ status: 'PROCESSING', updated_at: now }).where('id', '=', id).where('status', '=', 'PENDING').execute();
}

/**
 * Records row `index` (0-based) as done, in the transaction that did its work: only when it is
 * the next row, so a row is counted, and its customer created, exactly once. `next` is where the
 * following row starts in the CSV, in bytes; it moves with the count, so a run that dies resumes at the
 * first row not counted.
 */
export async function advance(trx: Trx, id: string, step: { index: number; next: number; ok: boolean }, now: Date): Promise<void> {
  const { index, next, ok } = step;
  const result = await trx
    .updateTable('bulk_imports')
    .set({
      processed: sql`processed + 1`,
      resume_byte: next,
      successful: ok ? sql`successful + 1` : sql`successful`,
      failed: ok ? sql`failed` : sql`failed + 1`,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', '=', 'PROCESSING')
    .where('processed', '=', index)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw new StaleProgress();
}

export async function insertRowError(trx: Trx, importId: string, error: RowError): Promise<void> {
  await trx
    .insertInto('bulk_import_errors')
    .values({ import_id: importId, row_number: error.rowNumber, correlation_id: error.correlationId, code: error.code, message: error.message, details: toJson(error.details) })
    .execute();
}

export async function rowErrors(ex: Executor, importId: string, limit?: number): Promise<RowError[]> {
  let query = ex.selectFrom('bulk_import_errors').selectAll().where('import_id', '=', importId).orderBy('row_number');
  if (limit) query = query.limit(literalLimit(limit));
  const rows = await query.execute();
  return rows.map((r) => ({ rowNumber: r.row_number, correlationId: r.correlation_id, code: r.code, message: r.message, details: r.details }));
}

/** PROCESSING with every row done → COMPLETED (or FAILED when no row succeeded); the file is dropped. */
export async function finishImport(trx: Trx, id: string, now: Date): Promise<ImportRow | undefined> {
  return trx
    .updateTable('bulk_imports')
    .set({ status: sql`case when successful = 0 then 'FAILED' else 'COMPLETED' end`, completed_at: now, updated_at: now, csv: null })
    .where('id', '=', id)
    .where('status', '=', 'PROCESSING')
    .whereRef('processed', '=', 'total')
    .returning(COLUMNS)
    .executeTakeFirst();
}
