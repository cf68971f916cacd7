import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/quotes.js';
import { beneficialOwnerBody, expectStatus, JPEG, PDF, pdfFile, PNG, sendForm, uploadDocument } from '../../../test/support/verification.js';

const MAX_BYTES = 4096;
let t: TestApp;
let p: TestPlatform;
let dir: string;
let customer: { id: string };

const meta = (holder: string, extra: Record<string, string> = {}) => ({ documentHolder: holder, documentType: 'PASSPORT', country: 'US', ...extra });
const storageKey = async (id: string) =>
  (await t.corridor.database.db.selectFrom('documents').select('storage_key').where('id', '=', id).executeTakeFirstOrThrow()).storage_key;
const incoming = () => (existsSync(join(dir, '.incoming')) ? readdirSync(join(dir, '.incoming')) : []);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'corridor-documents-test-'));
  t = await startTestApp({ documentsDir: dir, documentMaxBytes: MAX_BYTES });
  p = await t.createPlatform();
  customer = expectStatus(await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Doc Holder' }), 201);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /documents', () => {
  it('stores a PDF on disk and describes it', async () => {
    const doc = await uploadDocument(p, customer.id, 'PASSPORT', { fileName: 'scans/my passport.pdf', contentType: 'application/pdf', content: PDF });
    expect(doc).toMatchObject({
      id: expect.stringMatching(/^Document:/),
      documentHolder: customer.id,
      documentType: 'PASSPORT',
      country: 'US',
      fileName: 'my passport.pdf',
      contentType: 'application/pdf',
      sizeBytes: PDF.length,
    });
    const hidden = await uploadDocument(p, customer.id, 'PASSPORT', { fileName: '../../evil\u202efdp.exe\u200b\u0085', contentType: 'application/pdf', content: PDF });
    expect(hidden.fileName).toBe('evilfdp.exe');
    const key = await storageKey(doc.id);
    expect(key).toMatch(/^[0-9a-f-]{36}\/[0-9a-f-]{36}\/[0-9a-f-]{36}\.pdf$/);
    expect(readFileSync(join(dir, key)).equals(PDF)).toBe(true);
    expect(incoming()).toEqual([]);
    expect(expectStatus(await p.api.get(`/documents/${doc.id}`), 200)).toEqual(doc);
  });

  it('accepts PNG and JPEG, metadata fields, and a beneficial owner as holder', async () => {
    const business = expectStatus(await p.api.post('/customers', { customerType: 'BUSINESS', businessInfo: { legalName: 'Owned Inc' } }), 201);
    const owner = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(business.id, 'Owner')), 201);
    const png = expectStatus(
      await sendForm(p, 'POST', '/documents', meta(owner.id, { documentType: 'DRIVERS_LICENSE', side: 'FRONT', documentNumber: 'D123' }), [{ fileName: 'front.png', contentType: 'image/png', content: PNG }]),
      201,
    );
    expect(png).toMatchObject({ documentHolder: owner.id, contentType: 'image/png', side: 'FRONT', documentNumber: 'D123' });
    // A neutral declared type is fine: the content decides.
    const jpeg = expectStatus(await sendForm(p, 'POST', '/documents', meta(owner.id), [{ fileName: 'id', contentType: 'application/octet-stream', content: JPEG }]), 201);
    expect(jpeg.contentType).toBe('image/jpeg');
    const listed = expectStatus(await p.api.get('/documents', { documentHolder: owner.id }), 200);
    expect(listed.data.map((d: { id: string }) => d.id)).toEqual([jpeg.id, png.id]);
  });

  it('refuses files over the size limit, and leaves nothing on disk', async () => {
    const big = Buffer.concat([PDF, Buffer.alloc(MAX_BYTES)]);
    const res = await sendForm(p, 'POST', '/documents', meta(customer.id), [{ fileName: 'big.pdf', contentType: 'application/pdf', content: big }]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: 400,
      code: 'INVALID_INPUT',
      message: `the file is larger than the limit of ${MAX_BYTES} bytes`,
      details: { errors: [{ field: 'file', constraint: 'maxSize', message: `the file is larger than the limit of ${MAX_BYTES} bytes` }] },
    });
    expect(incoming()).toEqual([]);
  });

  it.each([
    ['a text file', { fileName: 'notes.pdf', contentType: 'application/pdf', content: Buffer.from('just some text, not a PDF') }, 'fileType'],
    ['a GIF', { fileName: 'a.gif', contentType: 'image/gif', content: Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1') }, 'fileType'],
    ['a PNG sent as a PDF', { fileName: 'x.pdf', contentType: 'application/pdf', content: PNG }, 'fileType'],
    ['an empty file', { fileName: 'empty.pdf', contentType: 'application/pdf', content: Buffer.alloc(0) }, 'minSize'],
  ])('refuses %s', async (_name, file, constraint) => {
    const res = await sendForm(p, 'POST', '/documents', meta(customer.id), [file]);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0]).toMatchObject({ field: 'file', constraint });
    expect(incoming()).toEqual([]);
  });

  it('refuses bad forms with the error envelope', async () => {
    const cases: Array<[Record<string, string>, Parameters<typeof sendForm>[4], number, string, string]> = [
      [meta(customer.id), [], 400, 'INVALID_INPUT', 'file'],
      [meta(customer.id, { documentType: 'DIARY' }), [pdfFile()], 400, 'INVALID_INPUT', 'documentType'],
      [meta(customer.id, { country: 'usa' }), [pdfFile()], 400, 'INVALID_INPUT', 'country'],
      [meta(customer.id, { country: 'XX' }), [pdfFile()], 400, 'INVALID_INPUT', 'country'],
      [meta(customer.id, { side: 'LEFT' }), [pdfFile()], 400, 'INVALID_INPUT', 'side'],
      [meta(customer.id, { colour: 'blue' }), [pdfFile()], 400, 'INVALID_INPUT', 'colour'],
      [meta(customer.id, { documentNumber: 'ab\u0000cd' }), [pdfFile()], 400, 'INVALID_INPUT', 'documentNumber'],
      [{ documentType: 'PASSPORT', country: 'US' }, [pdfFile()], 400, 'INVALID_INPUT', 'documentHolder'],
      [meta('Customer:unknown'), [pdfFile()], 404, 'NOT_FOUND', 'documentHolder'],
      [meta('BeneficialOwner:unknown'), [pdfFile()], 404, 'NOT_FOUND', 'documentHolder'],
      [meta('Account:123'), [pdfFile()], 400, 'INVALID_INPUT', 'documentHolder'],
      [meta(customer.id), [pdfFile(), { ...pdfFile('second.pdf') }], 400, 'INVALID_INPUT', 'file'],
      [meta(customer.id), [{ ...pdfFile(), field: 'document' }], 400, 'INVALID_INPUT', 'file'],
    ];
    for (const [fields, files, status, code, field] of cases) {
      const res = await sendForm(p, 'POST', '/documents', fields, files);
      expectError(res, status, code);
      expect(res.body.details?.errors?.map((e: { field: string }) => e.field), JSON.stringify(fields)).toContain(field);
    }
    expect(incoming()).toEqual([]);
  });

  it('wants multipart/form-data and authentication', async () => {
    expectError(await p.api.post('/documents', meta(customer.id)), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await t.anonymous.request({ method: 'POST', path: '/documents', body: 'x', headers: { 'content-type': 'multipart/form-data; boundary=x' } })).status).toBe(401);
  });

  it('another platform\'s customers and documents are 404', async () => {
    const doc = await uploadDocument(p, customer.id);
    const q = await t.createPlatform();
    expectError(await sendForm(q, 'POST', '/documents', meta(customer.id), [pdfFile()]), 404, 'NOT_FOUND');
    expectError(await q.api.get(`/documents/${doc.id}`), 404, 'NOT_FOUND');
    expectError(await sendForm(q, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US' }, [pdfFile()]), 404, 'NOT_FOUND');
    expectError(await q.api.delete(`/documents/${doc.id}`), 404, 'NOT_FOUND');
    expect(expectStatus(await q.api.get('/documents'), 200).totalCount).toBe(0);
    expect(existsSync(join(dir, await storageKey(doc.id)))).toBe(true);
  });
});

describe('PUT /documents/{documentId}', () => {
  it('replaces file and metadata, and deletes the old file', async () => {
    const doc = await uploadDocument(p, customer.id);
    const oldKey = await storageKey(doc.id);
    const replaced = expectStatus(
      await sendForm(p, 'PUT', `/documents/${doc.id}`, { documentType: 'NATIONAL_ID', country: 'FR', side: 'BACK' }, [{ fileName: 'id-back.png', contentType: 'image/png', content: PNG }]),
      200,
    );
    expect(replaced).toMatchObject({ id: doc.id, documentHolder: customer.id, documentType: 'NATIONAL_ID', country: 'FR', side: 'BACK', fileName: 'id-back.png', contentType: 'image/png', createdAt: doc.createdAt });
    const newKey = await storageKey(doc.id);
    expect(newKey).not.toBe(oldKey);
    expect(existsSync(join(dir, oldKey))).toBe(false);
    expect(readFileSync(join(dir, newKey)).equals(PNG)).toBe(true);
  });

  it('refuses a bad replacement and keeps the document as it was', async () => {
    const doc = await uploadDocument(p, customer.id);
    const key = await storageKey(doc.id);
    const res = await sendForm(p, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US' }, [{ fileName: 'x.txt', contentType: 'text/plain', content: Buffer.from('hello') }]);
    expectError(res, 400, 'INVALID_INPUT');
    expect(await storageKey(doc.id)).toBe(key);
    expect(existsSync(join(dir, key))).toBe(true);
    expectError(await sendForm(p, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US', documentHolder: customer.id }, [pdfFile()]), 400, 'INVALID_INPUT');
    expectError(await sendForm(p, 'PUT', '/documents/Document:nope', { documentType: 'PASSPORT', country: 'US' }, [pdfFile()]), 404, 'NOT_FOUND');
    expect(incoming()).toEqual([]);
  });
});

describe('DELETE /documents/{documentId}', () => {
  it('deletes the document and its file', async () => {
    const doc = await uploadDocument(p, customer.id);
    const key = await storageKey(doc.id);
    expect(existsSync(join(dir, key))).toBe(true);
    const res = await p.api.delete(`/documents/${doc.id}`);
    expect(res.status).toBe(204);
    expect(existsSync(join(dir, key))).toBe(false);
    expectError(await p.api.get(`/documents/${doc.id}`), 404, 'NOT_FOUND');
    expectError(await p.api.delete(`/documents/${doc.id}`), 404, 'NOT_FOUND');
  });
});
