import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { beneficialOwnerBody, expectStatus, PDF, sendForm, uploadDocument } from '../../../test/support/verification.js';

// Quota: two documents per customer, and room for five PDFs per platform.
const PER_CUSTOMER = 2;
const PLATFORM_BYTES = 5 * PDF.length;
let t: TestApp;
let dir: string;

const newCustomer = async (p: TestPlatform): Promise<string> =>
  expectStatus(await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Quota Holder' }), 201).id;
const upload = (p: TestPlatform, holder: string, content = PDF) =>
  sendForm(p, 'POST', '/documents', { documentHolder: holder, documentType: 'PASSPORT', country: 'US' }, [{ fileName: 'id.pdf', contentType: 'application/pdf', content }]);
/** Every stored file of the platform (the store keeps one directory per platform). */
const storedFiles = (p: TestPlatform): string[] => {
  const { id } = p.platform;
  const root = join(dir, id.slice(id.indexOf(':') + 1));
  return existsSync(root) ? readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name) : [];
};

/** The platform's stored bytes as the quota reads them, and as its documents add up. */
async function storage(p: TestPlatform): Promise<{ counted: number; summed: number }> {
  const { rows } = await sql<{ counted: number | null; summed: number }>`
    select (select bytes from document_storage where platform_id = ${p.platform.id}) as counted,
           (select coalesce(sum(size_bytes), 0) from documents where platform_id = ${p.platform.id})::bigint as summed`.execute(t.corridor.database.db);
  return { counted: Number(rows[0].counted), summed: Number(rows[0].summed) };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'corridor-document-quota-'));
  t = await startTestApp({ documentsDir: dir, documentsPerCustomer: PER_CUSTOMER, documentStoragePerPlatform: PLATFORM_BYTES });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('document storage quota', () => {
  it('refuses a customer its third document, and takes one again after a delete', async () => {
    const p = await t.createPlatform();
    const holder = await newCustomer(p);
    const first = await uploadDocument(p, holder);
    await uploadDocument(p, holder);
    const refused = await upload(p, holder);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'documentHolder', constraint: 'documentQuota', message: 'the customer and its beneficial owners already hold 2 documents, the most allowed (DOCUMENTS_PER_CUSTOMER); delete one first' }] },
    });
    expect(storedFiles(p)).toHaveLength(2);
    expect((await p.api.delete(`/documents/${first.id}`)).status).toBe(204);
    await uploadDocument(p, holder);
    expect(await storage(p)).toEqual({ counted: 2 * PDF.length, summed: 2 * PDF.length });
  });

  it('counts a business\'s beneficial owners\' documents against the business', async () => {
    const p = await t.createPlatform();
    const business = expectStatus(await p.api.post('/customers', { customerType: 'BUSINESS', businessInfo: { legalName: 'Quota Inc' } }), 201);
    const owner = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(business.id, 'Owner')), 201);
    await uploadDocument(p, business.id);
    await uploadDocument(p, owner.id);
    expect((await upload(p, owner.id)).body.details.errors[0].constraint).toBe('documentQuota');
  });

  it('refuses a platform more bytes than its storage quota; other platforms keep theirs', async () => {
    const p = await t.createPlatform();
    for (let i = 0; i < 2; i++) {
      const holder = await newCustomer(p);
      await uploadDocument(p, holder);
      await uploadDocument(p, holder);
    }
    const last = await newCustomer(p);
    await uploadDocument(p, last);
    const refused = await upload(p, last);
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors[0]).toMatchObject({ field: 'file', constraint: 'storageQuota' });
    expect(refused.body.message).toMatch(/^the platform's documents would take [\d.]+ MiB, more than its [\d.]+ MiB \(DOCUMENT_STORAGE_PER_PLATFORM\); delete documents to make room$/);
    expect(storedFiles(p)).toHaveLength(5);
    const other = await t.createPlatform();
    await uploadDocument(other, await newCustomer(other));
  });

  it('lets a full platform replace a file with one no larger, not with a larger one', async () => {
    const p = await t.createPlatform();
    const docs: { id: string }[] = [];
    for (let i = 0; i < 5; i++) docs.push(await uploadDocument(p, await newCustomer(p)));
    const replace = (content: Buffer) =>
      sendForm(p, 'PUT', `/documents/${docs[0].id}`, { documentType: 'PASSPORT', country: 'US' }, [{ fileName: 'new.pdf', contentType: 'application/pdf', content }]);
    expect((await replace(Buffer.concat([PDF, Buffer.from('more')]))).body.details.errors[0].constraint).toBe('storageQuota');
    expect(expectStatus(await replace(PDF), 200).fileName).toBe('new.pdf');
    expect(storedFiles(p)).toHaveLength(5);
    const smaller = Buffer.concat([PDF.subarray(0, 8), Buffer.from('\n%%EOF\n')]);
    expect(expectStatus(await replace(smaller), 200).sizeBytes).toBe(smaller.length);
    expect(await storage(p)).toEqual({ counted: 4 * PDF.length + smaller.length, summed: 4 * PDF.length + smaller.length });
  });

  // PGlite runs one transaction at a time, so the race is real on PostgreSQL only (CI runs both).
  it('lets exactly the quota through when uploads for one customer race', async () => {
    const p = await t.createPlatform();
    const holder = await newCustomer(p);
    const results = await Promise.all(Array.from({ length: 6 }, () => upload(p, holder)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 400, 400, 400, 400]);
    const listed = expectStatus(await p.api.get('/documents', { documentHolder: holder }), 200);
    expect(listed.data).toHaveLength(PER_CUSTOMER);
    expect(storedFiles(p)).toHaveLength(PER_CUSTOMER);
  });
});
