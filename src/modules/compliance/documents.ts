import type { ServiceContext } from '../../core/context.js';
import { isCountryCode } from '../../core/countries.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Executor, Trx } from '../../db/database.js';
import type { UploadedFile } from '../../http/multipart.js';
import type { Page } from '../../http/pagination.js';
import type { Platform } from '../platform/service.js';
import type { ComplianceServiceDeps, DocumentQuota } from './deps.js';
import * as repo from './document-repository.js';
import type { DocumentChanges, DocumentRow } from './document-repository.js';
import type { DocumentContentType, DocumentListQuery, DocumentReplaceForm, DocumentUploadForm, DocumentView } from './document-schemas.js';
import type { DocumentStore } from './document-store.js';
import { openVerificationOf } from './repository.js';

/** Recognises PDF, JPEG and PNG files by their first bytes. */
export function sniffContentType(head: Buffer): DocumentContentType | undefined {
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  return undefined;
}

/** Declared types that say nothing about the content (curl sends the first for unknown extensions). */
const NEUTRAL_TYPES = new Set(['application/octet-stream', 'binary/octet-stream']);
const ALIASES: Record<string, string> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'application/x-pdf': 'application/pdf' };

/** The file's type, from its content; the type the client declared must agree. */
function checkFile(file: UploadedFile | undefined): DocumentContentType {
  if (!file?.path) throw invalidInput('file', 'a file is required, in the `file` field', 'required');
  if (file.size === 0) throw invalidInput('file', 'the file is empty', 'minSize');
  const type = sniffContentType(file.head);
  if (!type) throw invalidInput('file', 'the file must be a PDF, JPEG or PNG (its content is none of these)', 'fileType');
  const declared = ALIASES[file.declaredType] ?? file.declaredType;
  if (!NEUTRAL_TYPES.has(declared) && declared !== type) {
    throw invalidInput('file', `the file was sent as ${file.declaredType} but its content is ${type}`, 'fileType');
  }
  return type;
}

function checkCountry(country: string): void {
  if (!isCountryCode(country)) throw invalidInput('country', `${country} is not an ISO 3166-1 alpha-2 country code`, 'country');
}

function present(row: DocumentRow): DocumentView {
  return {
    id: row.id,
    documentHolder: row.holder_id,
    documentType: row.document_type,
    ...(row.side && { side: row.side }),
    country: row.country,
    ...(row.document_number && { documentNumber: row.document_number }),
    fileName: row.file_name,
    contentType: row.content_type,
    sizeBytes: row.size_bytes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function contentOf(form: DocumentReplaceForm, file: UploadedFile, type: DocumentContentType, key: string, now: Date): DocumentChanges {
  return {
    document_type: form.documentType,
    side: form.side ?? null,
    country: form.country,
    document_number: form.documentNumber ?? null,
    file_name: file.fileName,
    content_type: type,
    size_bytes: file.size,
    sha256: file.sha256,
    storage_key: key,
    updated_at: now,
  };
}

const documentNotFound = () => new ServiceError('NOT_FOUND', 'document not found');

const MIB = 1_048_576;
const inMiB = (bytes: number) => `${Math.round((bytes / MIB) * 10) / 10} MiB`;

/**
 * Refuses a write past the storage quota, in the caller's transaction, which it makes wait for
 * the platform's other uploads: `adding` documents to the customer, and `bytes` more stored for
 * the platform (negative when a replacement is smaller).
 */
async function checkQuota(trx: Trx, quota: DocumentQuota, platformId: string, customerId: string, adding: number, bytes: number): Promise<void> {
  const stored = await repo.lockPlatformStorage(trx, platformId);
  if (adding > 0) {
    const held = await repo.customerDocumentCount(trx, platformId, customerId);
    if (held + adding > quota.perCustomer) {
      throw invalidInput('documentHolder', `the customer and its beneficial owners already hold ${held} documents, the most allowed (DOCUMENTS_PER_CUSTOMER); delete one first`, 'documentQuota');
    }
  }
  if (bytes > 0 && stored + bytes > quota.platformBytes) {
    throw invalidInput('file', `the platform's documents would take ${inMiB(stored + bytes)}, more than its ${inMiB(quota.platformBytes)} (DOCUMENT_STORAGE_PER_PLATFORM); delete documents to make room`, 'storageQuota');
  }
}

function holderNotFound(holderId: string): ServiceError {
  return new ServiceError('NOT_FOUND', 'document holder not found', { details: { errors: [{ field: 'documentHolder', constraint: 'exists', message: `${holderId} not found` }] } });
}

export interface DocumentDeps extends ComplianceServiceDeps {
  store: DocumentStore;
  /** The business a BeneficialOwner id belongs to (undefined when unknown on the platform). */
  customerOfOwner(ex: Executor, platformId: string, ownerId: string): Promise<string | undefined>;
}

export function createDocuments(deps: DocumentDeps) {
  const { database, clock, customers, store } = deps;
  const { db } = database;

  /** The customer a holder id is or belongs to; 404 for ids unknown on the platform. */
  async function customerOfHolder(platformId: string, holderId: string): Promise<string> {
    if (holderId.startsWith('Customer:')) {
      const customer = await customers.findActive(db, platformId, { id: holderId });
      if (!customer) throw holderNotFound(holderId);
      return customer.id;
    }
    if (holderId.startsWith('BeneficialOwner:')) {
      const customerId = await deps.customerOfOwner(db, platformId, holderId);
      if (!customerId) throw holderNotFound(holderId);
      return customerId;
    }
    throw invalidInput('documentHolder', 'documentHolder must be a Customer or BeneficialOwner id', 'format');
  }

  /**
   * Locks the holder's customer (shared) until `trx` ends, and 404s when it was deleted since.
   * A verification is decided under the exclusive lock (verifications.ts): a change checked under
   * this one cannot slip in between its reading of the documents and its commit.
   */
  async function lockHolder(trx: Trx, platformId: string, customerId: string, holderId: string): Promise<void> {
    if (!(await customers.lockActive(trx, platformId, customerId))) throw holderNotFound(holderId);
  }

  /** Moves the received file into the store, runs `write`, and removes the file again if `write` fails. */
  async function keepWhile<T>(file: UploadedFile, platformId: string, documentId: string, type: DocumentContentType, write: (key: string) => Promise<T>): Promise<T> {
    const key = await store.keep(file.path!, platformId, documentId, type);
    try {
      return await write(key);
    } catch (error) {
      await store.remove(key);
      throw error;
    }
  }

  /** While a verification is under review, the documents it is being decided on stay as they are. */
  async function refuseWhileUnderReview(trx: Trx, platformId: string, customerId: string, change: 'replaced' | 'deleted'): Promise<void> {
    if (await openVerificationOf(trx, platformId, customerId)) {
      throw new ServiceError('CONFLICT', `the document belongs to a verification under review and cannot be ${change} until it is decided`);
    }
  }

  async function upload(ctx: ServiceContext<Platform>, form: DocumentUploadForm, file: UploadedFile | undefined): Promise<DocumentView> {
    const { platform } = ctx;
    const type = checkFile(file);
    checkCountry(form.country);
    const customerId = await customerOfHolder(platform.id, form.documentHolder);
    const id = newId('Document');
    const now = clock.now(platform);
    return keepWhile(file!, platform.id, id, type, (key) =>
      ctx.tx(async (trx) => {
        await lockHolder(trx, platform.id, customerId, form.documentHolder);
        await checkQuota(trx, deps.documentQuota, platform.id, customerId, 1, file!.size);
        const row: DocumentRow = { id, platform_id: platform.id, holder_id: form.documentHolder, customer_id: customerId, created_at: now, ...contentOf(form, file!, type, key, now) };
        await repo.insertDocument(trx, row);
        return present(row);
      }),
    );
  }

  async function replace(ctx: ServiceContext<Platform>, id: string, form: DocumentReplaceForm, file: UploadedFile | undefined): Promise<DocumentView> {
    const { platform } = ctx;
    const existing = await repo.findDocument(db, platform.id, id);
    if (!existing) throw documentNotFound();
    // A deleted holder takes no new file, as it takes no new document (its documents can only go).
    await customerOfHolder(platform.id, existing.holder_id);
    const type = checkFile(file);
    checkCountry(form.country);
    let oldKey = '';
    const view = await keepWhile(file!, platform.id, id, type, (key) =>
      ctx.tx(async (trx) => {
        const current = await repo.findDocument(trx, platform.id, id, true);
        if (!current) throw documentNotFound();
        await lockHolder(trx, platform.id, current.customer_id, current.holder_id);
        await refuseWhileUnderReview(trx, platform.id, current.customer_id, 'replaced');
        await checkQuota(trx, deps.documentQuota, platform.id, current.customer_id, 0, file!.size - current.size_bytes);
        oldKey = current.storage_key;
        return present(await repo.replaceDocument(trx, id, contentOf(form, file!, type, key, clock.now(platform))));
      }),
    );
    await store.remove(oldKey);
    return view;
  }

  async function get(ctx: ServiceContext, id: string): Promise<DocumentView> {
    const row = await repo.findDocument(db, ctx.platform.id, id);
    if (!row) throw documentNotFound();
    return present(row);
  }

  async function list(ctx: ServiceContext, query: DocumentListQuery): Promise<Page<DocumentView>> {
    const page = await repo.listDocuments(db, ctx.platform.id, query);
    return { data: page.rows.map(present), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  /** Deletes the document and its file; refused (409) while its customer's verification is under review. */
  async function remove(ctx: ServiceContext, id: string): Promise<void> {
    const { platform } = ctx;
    const key = await ctx.tx(async (trx) => {
      const row = await repo.findDocument(trx, platform.id, id, true);
      if (!row) throw documentNotFound();
      // A deleted customer's documents may still go; a live one's wait for a decision in progress.
      await customers.lockActive(trx, platform.id, row.customer_id);
      await refuseWhileUnderReview(trx, platform.id, row.customer_id, 'deleted');
      await repo.deleteDocument(trx, id);
      return row.storage_key;
    });
    await store.remove(key);
  }

  return { upload, replace, get, list, remove, stagePath: store.stagePath, maxBytes: deps.documentMaxBytes };
}
