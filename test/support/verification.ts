// Helpers for the verification, document and bulk-import tests: multipart bodies, sample files,
// and customers that pass verification.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from './app.js';

export interface FilePart {
  /** Form field name (default `file`). */
  field?: string;
  fileName: string;
  contentType: string;
  content: Buffer;
}

/** A multipart/form-data body with text fields and optional files. */
export function multipart(fields: Record<string, string | undefined>, files: FilePart[] = []): { payload: Buffer; contentType: string } {
  const boundary = `----corridor${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const file of files) {
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.fileName}"\r\nContent-Type: ${file.contentType}\r\n\r\n`),
      file.content,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Sends a multipart request (POST or PUT) through the test client. */
export function sendForm(p: TestPlatform, method: 'POST' | 'PUT', path: string, fields: Record<string, string | undefined>, files: FilePart[] = []): Promise<ApiResponse> {
  const { payload, contentType } = multipart(fields, files);
  return p.api.request({ method, path, body: payload, headers: { 'content-type': contentType } });
}

export const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\n', 'latin1'), randomBytes(64), Buffer.from('\n%%EOF\n')]);
export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(100)]);
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(100)]);

export const pdfFile = (fileName = 'passport.pdf'): FilePart => ({ fileName, contentType: 'application/pdf', content: PDF });

export function expectStatus(res: ApiResponse, status: number): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

/** Uploads a document for `holder` and returns it. */
export async function uploadDocument(p: TestPlatform, holder: string, documentType = 'PASSPORT', file: FilePart = pdfFile()): Promise<any> {
  return expectStatus(await sendForm(p, 'POST', '/documents', { documentHolder: holder, documentType, country: 'US' }, [file]), 201);
}

export const ADDRESS = { line1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', country: 'US' };

/** An individual customer with everything verification needs but the identity document. */
export async function completeIndividual(p: TestPlatform, fullName = 'Ada Lovelace'): Promise<any> {
  const body = { customerType: 'INDIVIDUAL', fullName, birthDate: '1990-01-15', nationality: 'US', address: ADDRESS, region: 'US' };
  return expectStatus(await p.api.post('/customers', body), 201);
}

/** A customer that passed verification (sandbox: a name that ends in neither 001 nor 002). */
export async function verifiedIndividual(p: TestPlatform, fullName = 'Ada Lovelace'): Promise<any> {
  const customer = await completeIndividual(p, fullName);
  await uploadDocument(p, customer.id);
  const verification = expectStatus(await p.api.post('/verifications', { customerId: customer.id }), 200);
  expect(verification.verificationStatus).toBe('APPROVED');
  return customer;
}

export function beneficialOwnerBody(customerId: string, lastName: string, ownershipPercentage = 50) {
  return {
    customerId,
    roles: ['UBO'],
    ownershipPercentage,
    personalInfo: {
      firstName: 'Grace',
      lastName,
      birthDate: '1970-12-09',
      nationality: 'US',
      address: ADDRESS,
      idType: 'SSN',
      identifier: '123-45-6789',
    },
  };
}

/** An app that keeps documents in a folder of its own (the default temp one is shared), removed when it closes. */
export async function startAppWithDocuments(): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'corridor-documents-test-'));
  const t = await startTestApp({ documentsDir: dir });
  return { ...t, close: () => t.close().finally(() => rmSync(dir, { recursive: true, force: true })) };
}
