// Verifications and documents against what changes under them: a customer deleted, or a document
// deleted, between a request's check and its write. Each race is placed exactly (afterQuery) rather
// than hoped for, so each test fails every time the ordering it guards is lost.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse, TestApp, TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/errors.js';
import { afterQuery, answerWithin } from '../../../test/support/races.js';
import { completeIndividual, expectStatus, pdfFile, sendForm, startAppWithDocuments, uploadDocument } from '../../../test/support/verification.js';

let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startAppWithDocuments();
  p = await t.createPlatform({ regulated: false });
});
afterAll(() => t.close());

/** How long a request placed in a race gets to answer before the raced one goes on: a request that waits for a lock does not answer in it. */
const WAIT_MS = 1_000;

const reads = (table: string, id: string) => (sql: string, parameters: readonly unknown[]) => sql.includes(`from "${table}"`) && parameters.includes(id);

/**
 * Submits a verification of `customerId` with `send` placed right after its first query that
 * `matches`; `send` gets WAIT_MS to answer before the submission goes on. Returns both answers.
 */
async function verifyRacing(customerId: string, matches: (sql: string, parameters: readonly unknown[]) => boolean, send: () => Promise<ApiResponse>) {
  let raced: Promise<ApiResponse> | undefined;
  const race = afterQuery(t, matches, async () => {
    raced = send();
    await answerWithin(raced, WAIT_MS);
  });
  try {
    const verification = expectStatus(await p.api.post('/verifications', { customerId }), 200);
    expect(race.fired()).toBe(true);
    return { verification, raced: await raced! };
  } finally {
    race.restore();
  }
}

async function storedKycStatus(customerId: string): Promise<string | null> {
  const row = await t.corridor.database.db.selectFrom('customers').select('kyc_status').where('id', '=', customerId).executeTakeFirstOrThrow();
  return row.kyc_status;
}

describe('POST /verifications racing', () => {
  it('a document deletion: it waits for the decision, then is refused while the review is open', async () => {
    const customer = await completeIndividual(p, 'Race Review 001');
    const passport = await uploadDocument(p, customer.id);
    const { verification, raced } = await verifyRacing(customer.id, reads('documents', customer.id), () => p.api.delete(`/documents/${passport.id}`));
    expect(verification.verificationStatus).toBe('PENDING_MANUAL_REVIEW');
    expectError(raced, 409, 'CONFLICT');
    expectStatus(await p.api.get(`/documents/${passport.id}`), 200);
  });

  it('the customer\'s deletion: the deletion waits, and finds the customer as the verification left it', async () => {
    const customer = await completeIndividual(p, 'Race Deleted');
    await uploadDocument(p, customer.id);
    const { verification, raced } = await verifyRacing(customer.id, reads('customers', customer.id), () => p.api.delete(`/customers/${customer.id}`));
    const deleted = expectStatus(raced, 200);
    expect(verification.kycStatus).toBe('APPROVED');
    // Nothing changed the customer after its deletion.
    expect(deleted.kycStatus).toBe('APPROVED');
    expect(await storedKycStatus(customer.id)).toBe('APPROVED');
  });
});

describe('documents of a customer deleted after the holder check', () => {
  const firstCustomerRead = (id: string) => (sql: string, parameters: readonly unknown[]) => reads('customers', id)(sql, parameters) && !sql.includes('for share');

  it.each([
    ['POST /documents', (_docId: string, customerId: string) => sendForm(p, 'POST', '/documents', { documentHolder: customerId, documentType: 'PASSPORT', country: 'US' }, [pdfFile()])],
    ['PUT /documents/{id}', (docId: string) => sendForm(p, 'PUT', `/documents/${docId}`, { documentType: 'PASSPORT', country: 'US' }, [pdfFile()])],
  ])('%s: 404, and the customer keeps only the documents it had', async (_name, send) => {
    const customer = await completeIndividual(p, 'Race Holder');
    const before = await uploadDocument(p, customer.id);
    const race = afterQuery(t, firstCustomerRead(customer.id), async () => {
      expectStatus(await p.api.delete(`/customers/${customer.id}`), 200);
    });
    try {
      const res = await send(before.id, customer.id);
      expect(race.fired()).toBe(true);
      expectError(res, 404, 'NOT_FOUND');
      const rows = await t.corridor.database.db.selectFrom('documents').select(['id', 'file_name', 'updated_at']).where('customer_id', '=', customer.id).execute();
      expect(rows.map((r) => ({ id: r.id, fileName: r.file_name, updatedAt: r.updated_at.toISOString() }))).toEqual([{ id: before.id, fileName: before.fileName, updatedAt: before.updatedAt }]);
    } finally {
      race.restore();
    }
  });
});

describe('a replacement racing the deletion of its document', () => {
  it('PUT /documents/{id}: 404, and neither the old file nor the new one is left', async () => {
    const customer = await completeIndividual(p, 'Race Replace');
    const doc = await uploadDocument(p, customer.id);
    const folder = join(t.corridor.config.documentsDir, p.platform.id.split(':')[1], doc.id.split(':')[1]);
    expect(readdirSync(folder)).toHaveLength(1);
    // Deleted (its file and folder too) after the replacement read it, before its file is stored.
    const race = afterQuery(t, reads('documents', doc.id), async () => {
      expect((await p.api.delete(`/documents/${doc.id}`)).status).toBe(204);
    });
    try {
      const res = await sendForm(p, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US' }, [pdfFile()]);
      expect(race.fired()).toBe(true);
      expectError(res, 404, 'NOT_FOUND');
    } finally {
      race.restore();
    }
    expect(existsSync(folder)).toBe(false);
  });
});
