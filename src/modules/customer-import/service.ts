import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError, type FieldError } from '../../core/errors.js';
import { emitEvents } from '../../core/events.js';
import { newId } from '../../core/ids.js';
import { enqueueJobs, type JobRunner } from '../../core/jobs.js';
import type { Database } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { UploadedFile } from '../../http/multipart.js';
import type { CustomerService } from '../customers/service.js';
import type { Platform, PlatformService } from '../platform/service.js';
import { CsvSyntaxError, csvRecords, csvRecordsOfBytes, type CsvRecord, type ReadBytes } from './csv.js';
import * as repo from './repository.js';
import type { ImportRow, RowError } from './repository.js';
import { CSV_COLUMNS, customerFromRow, HEADER_REQUIRED, toColumn } from './rows.js';
import type { ImportAccepted, ImportJobView } from './schemas.js';

/** Job that imports the rows of one upload (continuing where an earlier run stopped). */
export const IMPORT_JOB = 'customers.bulk-import';
/**
 * One job run stops after this long and schedules the rest: well inside the job lease, and short,
 * since the other jobs of the runner's round (other platforms' payments among them) end with it.
 */
const RUN_BUDGET_MS = 2_000;
/**
 * Runs one process does at once; an import over the limit is scheduled again a run budget later.
 * The runner claims up to 160 jobs in a round, and without a limit as many imports would create
 * customers at once (each run held its whole file too, before runs read it in slices).
 */
const PARALLEL_RUNS = 4;
/** A run reads its stored file this many bytes at a time, from where its rows start. */
const CHUNK_BYTES = 64 * 1024;
/** The header is read in a smaller slice (it is read again by every run). */
const HEADER_CHUNK_BYTES = 4 * 1024;
/** Errors carried in the BULK_UPLOAD.* webhook; the job resource lists them all. */
const WEBHOOK_ERRORS = 100;
const CSV_TYPES = new Set(['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel', 'application/octet-stream']);

export interface CustomerImportDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  customers: Pick<CustomerService, 'create'>;
  platforms: Pick<PlatformService, 'get'>;
  maxBytes: number;
  maxRows: number;
  wakeWebhooks?: () => void;
  /** How long one job run imports rows before it schedules the rest (default 2 s; tests shorten it). */
  runBudgetMs?: number;
  /** Bytes of the stored file a run reads at a time (default 64 KiB; tests shorten it). */
  chunkBytes?: number;
}

/** The stored file is gone: the import ended (in another process) while this run read it. */
class ImportEnded extends Error {}

/**
 * The file checked as a whole (encoding, syntax, header and row count), and the bytes to store:
 * those of the text parsed here, which the decoder read without its byte-order mark.
 */
function readCsv(file: UploadedFile | undefined, maxRows: number): { rows: number; bytes: Buffer } {
  if (!file?.bytes) throw invalidInput('file', 'a CSV file is required, in the `file` field', 'required');
  if (file.size === 0) throw invalidInput('file', 'the file is empty', 'minSize');
  if (!CSV_TYPES.has(file.declaredType)) throw invalidInput('file', `the file must be CSV (text/csv), not ${file.declaredType}`, 'fileType');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file.bytes);
  } catch {
    throw invalidInput('file', 'the file is not UTF-8 text', 'encoding');
  }
  if (text.includes('\u0000')) throw invalidInput('file', 'the file is not text', 'encoding');
  const { header, rows } = countRecords(text);
  checkHeader(header.map((h) => h.trim()));
  if (rows === 0) throw invalidInput('file', 'the file has a header but no customer rows', 'minItems');
  if (rows > maxRows) throw invalidInput('file', `the file has ${rows} rows; at most ${maxRows} are accepted in one import`, 'maxItems');
  const bytes = file.bytes;
  return { rows, bytes: bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes };
}

/** The header and the number of rows after it; the rows are read and let go, one at a time. */
function countRecords(text: string): { header: string[]; rows: number } {
  try {
    const records = csvRecords(text);
    const header = records.next().value?.values ?? [];
    let rows = 0;
    for (const _ of records) rows++;
    return { header, rows };
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw invalidInput('file', `the CSV is malformed on line ${error.line}: ${error.message}`, 'format');
    throw error;
  }
}

function checkHeader(header: string[]): void {
  const known = new Set<string>(CSV_COLUMNS);
  const problems: FieldError[] = [];
  header.forEach((column, i) => {
    if (!known.has(column)) problems.push({ field: `header.${column || i}`, constraint: 'column', message: `unknown column "${column}"` });
    else if (header.indexOf(column) !== i) problems.push({ field: `header.${column}`, constraint: 'uniqueItems', message: `column "${column}" appears twice` });
  });
  for (const column of HEADER_REQUIRED) {
    if (!header.includes(column)) problems.push({ field: `header.${column}`, constraint: 'required', message: `the header needs a ${column} column` });
  }
  if (problems.length > 0) throw new ServiceError('INVALID_INPUT', `file: ${problems[0].message}`, { details: { errors: problems } });
}

function rowError(rowNumber: number, platformCustomerId: string | undefined, code: string, message: string, errors: FieldError[]): RowError {
  const field = errors[0]?.field;
  return { rowNumber, correlationId: platformCustomerId || `row ${rowNumber}`, code, message, details: { row: rowNumber, ...(field && { field }), errors } };
}

/** A data row: its 0-based index and its record (which says where the next one starts). */
interface RowAt {
  index: number;
  record: CsvRecord;
}

/**
 * The header's columns, and the rows from row `processed` on, read from the stored file a slice
 * at a time from the byte offset stored with the count: rows done by earlier runs are neither
 * read nor parsed again. An import counted before the offset was stored has none, and reads past
 * `processed` rows from the header.
 */
async function rowsFrom(read: ReadBytes, job: ImportRow, chunkBytes: number): Promise<{ columns: string[]; rows: AsyncIterable<CsvRecord> }> {
  const fromStart = csvRecordsOfBytes(read, 0, job.resume_byte === null ? chunkBytes : Math.min(HEADER_CHUNK_BYTES, chunkBytes));
  const columns = ((await fromStart.next()).value as CsvRecord).values.map((h) => h.trim());
  if (job.resume_byte !== null) {
    await fromStart.return(undefined);
    return { columns, rows: csvRecordsOfBytes(read, job.resume_byte, chunkBytes) };
  }
  for (let skipped = 0; skipped < job.processed; skipped++) await fromStart.next();
  return { columns, rows: fromStart };
}

function present(row: ImportRow, errors: RowError[]): ImportJobView {
  return {
    id: row.id,
    status: row.status,
    progress: { total: row.total, processed: row.processed, successful: row.successful, failed: row.failed },
    errors: errors.map((e) => ({ correlationId: e.correlationId, code: e.code, message: e.message, details: e.details as ImportJobView['errors'][number]['details'] })),
    ...(row.completed_at && { completedAt: row.completed_at.toISOString() }),
  };
}

export function createCustomerImport(deps: CustomerImportDeps) {
  const { database, clock } = deps;
  const { db } = database;
  const runBudgetMs = deps.runBudgetMs ?? RUN_BUDGET_MS;
  const chunkBytes = deps.chunkBytes ?? CHUNK_BYTES;
  /** Imports this process is running now. */
  let running = 0;

  /** POST /customers/bulk/csv: checks the file, stores it with its job, and answers at once. */
  async function accept(ctx: ServiceContext<Platform>, file: UploadedFile | undefined): Promise<ImportAccepted> {
    const { platform } = ctx;
    const { rows, bytes } = readCsv(file, deps.maxRows);
    const now = clock.now(platform);
    const id = newId('Job');
    return ctx.tx(async (trx) => {
      // The text's UTF-8 (it was decoded from these bytes, strictly), read back in slices by runs.
      await repo.insertImport(trx, { id, platform_id: platform.id, status: 'PENDING', file_name: file!.fileName, csv: bytes, total: rows, created_at: now, updated_at: now, completed_at: null });
      await enqueueJobs(trx, platform, [{ kind: IMPORT_JOB, payload: { importId: id }, maxAttempts: 20 }], clock);
      return { jobId: id, status: 'PENDING' as const };
    });
  }

  async function get(ctx: ServiceContext, jobId: string): Promise<ImportJobView> {
    const row = await repo.findImport(db, ctx.platform.id, jobId);
    if (!row) throw new ServiceError('BULK_UPLOAD_JOB_NOT_FOUND', 'bulk import job not found');
    return present(row, await repo.rowErrors(db, row.id));
  }

  /** Records a refused row with its progress step; false when another process got there first. */
  async function recordFailure(platform: Platform, importId: string, row: RowAt, error: RowError): Promise<boolean> {
    try {
      await transact(db, async (trx) => {
        await repo.advance(trx, importId, { index: row.index, next: row.record.next, ok: false }, clock.now(platform));
        await repo.insertRowError(trx, importId, error);
      });
      return true;
    } catch (failure) {
      if (failure instanceof repo.StaleProgress) return false;
      throw failure;
    }
  }

  /** Imports one row: the customer and the progress step commit together. False: stop, another process has it. */
  async function importRow(platform: Platform, importId: string, header: string[], row: RowAt, lastTry: boolean): Promise<boolean> {
    const { values } = row.record;
    const rowNumber = row.index + 1;
    const { body, problems } = customerFromRow(header, values);
    const platformCustomerId = body?.platformCustomerId ?? values[header.indexOf('platformCustomerId')]?.trim();
    if (!body) return recordFailure(platform, importId, row, rowError(rowNumber, platformCustomerId, 'INVALID_INPUT', `${problems[0].field}: ${problems[0].message}`, problems));
    const ctx: ServiceContext<Platform> = {
      platform,
      tx: (work) =>
        transact(db, async (trx) => {
          const result = await work(trx);
          await repo.advance(trx, importId, { index: row.index, next: row.record.next, ok: true }, clock.now(platform));
          return result;
        }),
    };
    try {
      await deps.customers.create(ctx, body);
      return true;
    } catch (error) {
      if (error instanceof repo.StaleProgress) return false;
      if (!(error instanceof ServiceError)) {
        // Unexpected failures retry the job; on its last try the row is refused so the import can end.
        if (!lastTry) throw error;
        deps.log.error({ err: error, importId, row: rowNumber }, 'bulk import row failed unexpectedly');
        return recordFailure(platform, importId, row, rowError(rowNumber, platformCustomerId, 'INTERNAL_ERROR', 'unexpected error; the details are in the server log', []));
      }
      const errors = ((error.details?.errors as FieldError[] | undefined) ?? []).map(toColumn);
      return recordFailure(platform, importId, row, rowError(rowNumber, platformCustomerId, error.code, error.message, errors));
    }
  }

  async function finish(platform: Platform, importId: string): Promise<void> {
    await transact(db, async (trx) => {
      const done = await repo.finishImport(trx, importId, clock.now(platform));
      if (!done) return;
      const view = present(done, await repo.rowErrors(trx, importId, WEBHOOK_ERRORS));
      await emitEvents(trx, platform, [{ type: done.status === 'FAILED' ? 'BULK_UPLOAD.FAILED' : 'BULK_UPLOAD.COMPLETED', data: view }], clock);
    });
    deps.wakeWebhooks?.();
  }

  /** Schedules the import's next run as a new job, which any process may take. */
  async function continueLater(platform: Platform, importId: string, delayMs = 0): Promise<void> {
    const runAt = new Date(clock.now(platform).getTime() + delayMs);
    await transact(db, (trx) => enqueueJobs(trx, platform, [{ kind: IMPORT_JOB, payload: { importId }, runAt, maxAttempts: 20 }], clock));
  }

  /** The job: imports rows for a run budget, unless this process already runs PARALLEL_RUNS imports. */
  async function run(importId: string, lastTry = false): Promise<void> {
    const job = await repo.findImport(db, null, importId);
    const platform = job && (await deps.platforms.get(job.platform_id));
    if (!job || !platform || job.status === 'COMPLETED' || job.status === 'FAILED') return;
    if (running >= PARALLEL_RUNS) return continueLater(platform, importId, runBudgetMs);
    running++;
    try {
      await importRows(platform, job, lastTry);
    } finally {
      running--;
    }
  }

  /** Rows from where the last run stopped until the budget is spent (one at least), then the rest in a new job. */
  async function importRows(platform: Platform, job: ImportRow, lastTry: boolean): Promise<void> {
    const read: ReadBytes = async (from, length) => {
      const slice = await repo.csvSlice(db, job.id, from, length);
      if (slice === null) throw new ImportEnded();
      return slice;
    };
    try {
      const { columns, rows } = await rowsFrom(read, job, chunkBytes);
      await repo.markProcessing(db, job.id, clock.now(platform));
      const deadline = clock.realNowMs() + runBudgetMs;
      let index = job.processed;
      for await (const record of rows) {
        if (!(await importRow(platform, job.id, columns, { index, record }, lastTry))) return;
        index++;
        if (index < job.total && clock.realNowMs() > deadline) return continueLater(platform, job.id);
      }
    } catch (error) {
      if (error instanceof ImportEnded) return;
      throw error;
    }
    await finish(platform, job.id);
  }

  function registerJobs(jobs: JobRunner): void {
    jobs.register(IMPORT_JOB, (job) => run(String(job.payload.importId), job.attempts >= job.maxAttempts));
  }

  return { accept, get, registerJobs, maxBytes: deps.maxBytes, run };
}

export type CustomerImportService = ReturnType<typeof createCustomerImport>;
