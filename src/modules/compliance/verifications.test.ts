import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/quotes.js';
import { ADDRESS, beneficialOwnerBody, completeIndividual, expectStatus, pdfFile, sendForm, uploadDocument, startAppWithDocuments } from '../../../test/support/verification.js';

let t: TestApp;
let p: TestPlatform;

/** Types (and data) of the platform's events about `id` (a customer or verification), oldest first. */
async function eventsAbout(platformId: string, ids: string[]) {
  const rows = await t.corridor.database.db.selectFrom('events').select(['type', 'data']).where('platform_id', '=', platformId).orderBy('id').execute();
  return rows.filter((r) => ids.includes((r.data as { id?: string; customerId?: string }).id ?? '')).map((r) => r.type);
}

const verify = async (platform: TestPlatform, customerId: string) => expectStatus(await platform.api.post('/verifications', { customerId }), 200);
const customerOf = async (platform: TestPlatform, id: string) => (await platform.api.get(`/customers/${id}`)).body;

async function business(platform: TestPlatform, registrationNumber?: string) {
  const body = { customerType: 'BUSINESS', address: ADDRESS, businessInfo: { legalName: 'Acme Corp', ...(registrationNumber && { registrationNumber }) } };
  return expectStatus(await platform.api.post('/customers', body), 201);
}

/** A business with everything verification needs: a legal-presence document and one owner with an id document. */
async function completeBusiness(platform: TestPlatform, registrationNumber: string, ownerLastName = 'Hopper') {
  const customer = await business(platform, registrationNumber);
  await uploadDocument(platform, customer.id, 'CERTIFICATE_OF_INCORPORATION');
  const owner = expectStatus(await platform.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, ownerLastName)), 201);
  const ownerDocument = await uploadDocument(platform, owner.id, 'PASSPORT');
  return { customer, owner, ownerDocument };
}

beforeAll(async () => {
  t = await startAppWithDocuments();
  p = await t.createPlatform({ regulated: false });
});
afterAll(() => t.close());

describe('POST /verifications: individuals', () => {
  it('lists what is missing (RESOLVE_ERRORS) and leaves the customer UNVERIFIED', async () => {
    const customer = expectStatus(await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Nobody Yet' }), 201);
    const v = await verify(p, customer.id);
    expect(v).toMatchObject({ id: expect.stringMatching(/^Verification:/), customerId: customer.id, verificationStatus: 'RESOLVE_ERRORS', kycStatus: 'UNVERIFIED' });
    expect(v.errors).toEqual([
      { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.birthDate', reason: expect.any(String) },
      { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.address', reason: expect.any(String) },
      { resourceId: customer.id, type: 'MISSING_IDENTITY_DOCUMENT', acceptedDocumentTypes: ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'], reason: expect.any(String) },
    ]);
    expect((await customerOf(p, customer.id)).kycStatus).toBe('UNVERIFIED');
    expect(await eventsAbout(p.platform.id, [v.id, customer.id])).toEqual(['VERIFICATION.RESOLVE_ERRORS']);
  });

  it.each([
    ['Ada Lovelace', 'APPROVED', 'APPROVED', []],
    ['Ada Pending 001', 'PENDING_MANUAL_REVIEW', 'PENDING', []],
    ['Ada Rejected 002', 'REJECTED', 'REJECTED', ['APPLICANT_REJECTED']],
  ])('sandbox: %s → %s, kycStatus %s, with events', async (fullName, verificationStatus, kycStatus, errorTypes) => {
    const customer = await completeIndividual(p, fullName);
    await uploadDocument(p, customer.id);
    const v = await verify(p, customer.id);
    expect(v).toMatchObject({ verificationStatus, kycStatus });
    expect(v.errors.map((e: { type: string }) => e.type)).toEqual(errorTypes);
    expect((await customerOf(p, customer.id)).kycStatus).toBe(kycStatus);
    expect(await eventsAbout(p.platform.id, [v.id, customer.id])).toEqual([`VERIFICATION.${verificationStatus}`, `CUSTOMER.KYC_${kycStatus}`]);
    const events = await t.corridor.database.db.selectFrom('events').select(['type', 'data']).where('platform_id', '=', p.platform.id).execute();
    expect(events.find((e) => e.type === `CUSTOMER.KYC_${kycStatus}` && (e.data as { id: string }).id === customer.id)?.data).toMatchObject({ id: customer.id, kycStatus });
    expect(events.find((e) => (e.data as { id: string }).id === v.id)?.data).toEqual(v);
  });

  it('a customer under review gets the same verification back; resubmitting after a decision starts a new one', async () => {
    const customer = await completeIndividual(p, 'Review Me 001');
    await uploadDocument(p, customer.id);
    const first = await verify(p, customer.id);
    const again = await verify(p, customer.id);
    expect(again.id).toBe(first.id);
    await t.corridor.services.compliance.verifications.resolve(first.id, 'APPROVED');
    const after = await verify(p, customer.id);
    expect(after.id).not.toBe(first.id);
  });

  it('refuses bad input', async () => {
    const missing = await p.api.post('/verifications', {});
    expectError(missing, 400, 'INVALID_INPUT');
    expect(missing.body.details.errors[0].field).toBe('customerId');
    expectError(await p.api.post('/verifications', { customerId: 'Customer:nope' }), 404, 'USER_NOT_FOUND');
    expectError(await p.api.post('/verifications', { customerId: 'x', extra: 1 }), 400, 'INVALID_INPUT');
  });
});

describe('POST /verifications: businesses (KYB) and beneficial owners', () => {
  it('lists what is missing for a business', async () => {
    const customer = expectStatus(await p.api.post('/customers', { customerType: 'BUSINESS', businessInfo: { legalName: 'Bare Corp' } }), 201);
    const v = await verify(p, customer.id);
    expect(v.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(v.kybStatus).toBe('UNVERIFIED');
    expect(v.errors.map((e: { type: string; field?: string }) => e.field ?? e.type)).toEqual([
      'customer.businessInfo.registrationNumber',
      'customer.address',
      'MISSING_LEGAL_PRESENCE_DOCUMENT',
      'MISSING_BENEFICIAL_OWNER',
    ]);
  });

  it('asks for each beneficial owner\'s identity document', async () => {
    const customer = await business(p, 'REG-1000');
    await uploadDocument(p, customer.id, 'ARTICLES_OF_INCORPORATION');
    const owner = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Hopper')), 201);
    const v = await verify(p, customer.id);
    expect(v.errors).toEqual([{ resourceId: owner.id, type: 'MISSING_IDENTITY_DOCUMENT', acceptedDocumentTypes: expect.any(Array), reason: expect.any(String) }]);
  });

  it.each([
    ['REG-123', 'APPROVED', 'APPROVED'],
    ['REG-001', 'PENDING_MANUAL_REVIEW', 'PENDING'],
    ['REG-002', 'REJECTED', 'REJECTED'],
  ])('sandbox: registrationNumber %s → %s, kybStatus %s, with events', async (registrationNumber, verificationStatus, kybStatus) => {
    const { customer } = await completeBusiness(p, registrationNumber);
    const v = await verify(p, customer.id);
    expect(v).toMatchObject({ verificationStatus, kybStatus });
    expect((await customerOf(p, customer.id)).kybStatus).toBe(kybStatus);
    expect(await eventsAbout(p.platform.id, [v.id, customer.id])).toEqual([`VERIFICATION.${verificationStatus}`, `CUSTOMER.KYB_${kybStatus}`]);
  });

  it('a rejected or pending beneficial owner decides over an approved registration number', async () => {
    const rejected = await completeBusiness(p, 'REG-555', 'Smith002');
    const v = await verify(p, rejected.customer.id);
    expect(v).toMatchObject({ verificationStatus: 'REJECTED', kybStatus: 'REJECTED' });
    expect(v.errors).toEqual([{ resourceId: rejected.owner.id, type: 'APPLICANT_REJECTED', reason: expect.any(String) }]);
    const pending = await completeBusiness(p, 'REG-556', 'Smith001');
    expect((await verify(p, pending.customer.id)).verificationStatus).toBe('PENDING_MANUAL_REVIEW');
  });
});

describe('beneficial owners', () => {
  it.each([
    ['Hopper', 'APPROVED'],
    ['Hopper001', 'PENDING'],
    ['Hopper002', 'REJECTED'],
  ])('sandbox KYC by lastName: %s → %s', async (lastName, kycStatus) => {
    const customer = await business(p);
    const owner = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, lastName)), 201);
    expect(owner).toMatchObject({ id: expect.stringMatching(/^BeneficialOwner:/), customerId: customer.id, roles: ['UBO'], ownershipPercentage: 50, kycStatus });
    expect(owner.personalInfo.lastName).toBe(lastName);
    expect((await p.api.get(`/beneficial-owners/${owner.id}`)).body).toEqual(owner);
  });

  it('PATCH merges personalInfo and screens a changed identity again', async () => {
    const customer = await business(p);
    const owner = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Hopper')), 201);
    const patched = expectStatus(await p.api.patch(`/beneficial-owners/${owner.id}`, { personalInfo: { lastName: 'Hopper002' }, roles: ['UBO', 'DIRECTOR'] }), 200);
    expect(patched).toMatchObject({ kycStatus: 'REJECTED', roles: ['UBO', 'DIRECTOR'], personalInfo: { firstName: 'Grace', lastName: 'Hopper002' } });
    const share = expectStatus(await p.api.patch(`/beneficial-owners/${owner.id}`, { ownershipPercentage: 80 }), 200);
    expect(share).toMatchObject({ ownershipPercentage: 80, kycStatus: 'REJECTED' });
  });

  it('lists a business\'s owners', async () => {
    const customer = await business(p);
    for (const name of ['One', 'Two', 'Three']) await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, name, 10));
    const page = expectStatus(await p.api.get('/beneficial-owners', { customerId: customer.id, limit: 2 }), 200);
    expect(page).toMatchObject({ totalCount: 3, hasMore: true });
    expect(page.data).toHaveLength(2);
    const rest = expectStatus(await p.api.get('/beneficial-owners', { customerId: customer.id, cursor: page.nextCursor }), 200);
    expect(rest.data).toHaveLength(1);
  });

  it('a business customer carries its owners, oldest first; an individual carries none', async () => {
    const customer = await business(p);
    expect(customer.beneficialOwners).toEqual([]);
    const first = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'First', 30)), 201);
    const second = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Second002', 20)), 201);
    const other = await business(p);
    const third = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(other.id, 'Third', 10)), 201);
    const person = await completeIndividual(p);

    expect((await customerOf(p, customer.id)).beneficialOwners).toEqual([first, second]);
    const patched = expectStatus(await p.api.patch(`/customers/${customer.id}`, { customerType: 'BUSINESS', email: 'ops@acme.test' }), 200);
    expect(patched.beneficialOwners).toEqual([first, second]);
    const page = expectStatus(await p.api.get('/customers', { limit: 4 }), 200);
    const byId = new Map(page.data.map((c: any) => [c.id, c]));
    expect((byId.get(customer.id) as any).beneficialOwners).toEqual([first, second]);
    expect((byId.get(other.id) as any).beneficialOwners).toEqual([third]);
    expect(byId.get(person.id)).not.toHaveProperty('beneficialOwners');
    expect((await customerOf(p, person.id))).not.toHaveProperty('beneficialOwners');
  });

  it('checks the ownership total one change at a time: parallel ones never pass 100%', async () => {
    const customer = await business(p);
    const created = await Promise.all(['A', 'B', 'C'].map((name) => p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, name, 60))));
    expect(created.map((r) => r.status).sort()).toEqual([201, 400, 400]);
    const other = await business(p);
    const owners = await Promise.all(['D', 'E'].map(async (name) => expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(other.id, name, 10)), 201)));
    const patched = await Promise.all(owners.map((o) => p.api.patch(`/beneficial-owners/${o.id}`, { ownershipPercentage: 60 })));
    expect(patched.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('refuses bad input', async () => {
    const customer = await business(p);
    const person = await completeIndividual(p);
    const cases: Array<[unknown, number, string, string]> = [
      [beneficialOwnerBody(person.id, 'X'), 400, 'INVALID_INPUT', 'customerId'],
      [beneficialOwnerBody('Customer:unknown', 'X'), 404, 'USER_NOT_FOUND', ''],
      [{ ...beneficialOwnerBody(customer.id, 'X'), ownershipPercentage: 101 }, 400, 'INVALID_INPUT', 'ownershipPercentage'],
      [{ ...beneficialOwnerBody(customer.id, 'X'), roles: [] }, 400, 'INVALID_INPUT', 'roles'],
      [{ ...beneficialOwnerBody(customer.id, 'X'), roles: ['KING'] }, 400, 'INVALID_INPUT', 'roles.0'],
      [{ ...beneficialOwnerBody(customer.id, 'X'), personalInfo: { firstName: 'A' } }, 400, 'INVALID_INPUT', 'personalInfo.lastName'],
      [{ ...beneficialOwnerBody(customer.id, 'X'), personalInfo: { ...beneficialOwnerBody(customer.id, 'X').personalInfo, nationality: 'XX' } }, 400, 'INVALID_INPUT', 'personalInfo.nationality'],
      [{ ...beneficialOwnerBody(customer.id, 'X'), personalInfo: { ...beneficialOwnerBody(customer.id, 'X').personalInfo, birthDate: '2999-01-01' } }, 400, 'INVALID_INPUT', 'personalInfo.birthDate'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await p.api.post('/beneficial-owners', body);
      expectError(res, status, code);
      if (field) expect(res.body.details.errors[0].field, JSON.stringify(body)).toBe(field);
    }
    await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Big', 70));
    const tooMuch = await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Bigger', 40));
    expectError(tooMuch, 400, 'INVALID_INPUT');
    expect(tooMuch.body.details.errors[0]).toMatchObject({ field: 'ownershipPercentage', constraint: 'maximum' });
    expectError(await p.api.patch('/beneficial-owners/BeneficialOwner:nope', { roles: ['UBO'] }), 404, 'NOT_FOUND');
    expectError(await p.api.patch('/beneficial-owners/BeneficialOwner:nope', {}), 400, 'INVALID_INPUT');
  });
});

describe('a deleted business', () => {
  it('takes its beneficial owners with it: they cannot be read, changed or given documents', async () => {
    const { customer, owner, ownerDocument } = await completeBusiness(p, 'REG-404');
    expect((await p.api.delete(`/customers/${customer.id}`)).status).toBe(200);
    expectError(await sendForm(p, 'PUT', `/documents/${ownerDocument.id}`, { documentType: 'PASSPORT', country: 'US' }, [pdfFile()]), 404, 'NOT_FOUND');
    expect((await p.api.delete(`/documents/${ownerDocument.id}`)).status).toBe(204);
    expectError(await p.api.get(`/beneficial-owners/${owner.id}`), 404, 'NOT_FOUND');
    expectError(await p.api.patch(`/beneficial-owners/${owner.id}`, { personalInfo: { lastName: 'Again002' } }), 404, 'NOT_FOUND');
    expectError(await sendForm(p, 'POST', '/documents', { documentHolder: owner.id, documentType: 'PASSPORT', country: 'US' }, [pdfFile()]), 404, 'NOT_FOUND');
    const stored = await t.corridor.database.db.selectFrom('beneficial_owners').select('kyc_status').where('id', '=', owner.id).executeTakeFirstOrThrow();
    expect(stored.kyc_status).toBe(owner.kycStatus);
  });
});

describe('production platforms: the operator decides', () => {
  it('waits in PENDING_MANUAL_REVIEW until resolved; approving approves the pending owners', async () => {
    const prod = await t.createPlatform({ mode: 'PRODUCTION', regulated: false });
    const { customer, owner } = await completeBusiness(prod, 'REG-777');
    expect(owner.kycStatus).toBe('PENDING');
    const v = await verify(prod, customer.id);
    expect(v).toMatchObject({ verificationStatus: 'PENDING_MANUAL_REVIEW', kybStatus: 'PENDING' });
    const pending = await t.corridor.services.compliance.verifications.listAll(prod.platform.id, 'PENDING_MANUAL_REVIEW');
    expect(pending.map((x) => x.id)).toEqual([v.id]);
    // Documents under review stay: neither deleted nor replaced, the owner's included.
    const doc = (await prod.api.get('/documents', { documentHolder: customer.id })).body.data[0];
    const ownerDoc = (await prod.api.get('/documents', { documentHolder: owner.id })).body.data[0];
    expectError(await prod.api.delete(`/documents/${doc.id}`), 409, 'CONFLICT');
    for (const held of [doc, ownerDoc]) {
      const replaced = await sendForm(prod, 'PUT', `/documents/${held.id}`, { documentType: 'OTHER', country: 'US' }, [pdfFile('other.pdf')]);
      expectError(replaced, 409, 'CONFLICT');
      expect((await prod.api.get(`/documents/${held.id}`)).body).toEqual(held);
    }

    const resolved = await t.corridor.services.compliance.verifications.resolve(v.id, 'APPROVED', 'documents checked');
    expect(resolved).toMatchObject({ id: v.id, verificationStatus: 'APPROVED', kybStatus: 'APPROVED', errors: [] });
    expect((await prod.api.get(`/verifications/${v.id}`)).body.verificationStatus).toBe('APPROVED');
    expect((await customerOf(prod, customer.id)).kybStatus).toBe('APPROVED');
    expect((await prod.api.get(`/beneficial-owners/${owner.id}`)).body.kycStatus).toBe('APPROVED');
    const approvedEvent = await t.corridor.database.db.selectFrom('events').select('data').where('platform_id', '=', prod.platform.id).where('type', '=', 'CUSTOMER.KYB_APPROVED').executeTakeFirstOrThrow();
    expect((approvedEvent.data as any).beneficialOwners).toEqual([{ ...owner, kycStatus: 'APPROVED', updatedAt: expect.any(String) }]);
    expect(await eventsAbout(prod.platform.id, [v.id, customer.id])).toEqual([
      'VERIFICATION.PENDING_MANUAL_REVIEW',
      'CUSTOMER.KYB_PENDING',
      'VERIFICATION.APPROVED',
      'CUSTOMER.KYB_APPROVED',
    ]);
    await expect(t.corridor.services.compliance.verifications.resolve(v.id, 'REJECTED')).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await prod.api.delete(`/documents/${doc.id}`)).status).toBe(204);
  });

  it('a customer deleted while under review leaves nothing for the operator to decide', async () => {
    const prod = await t.createPlatform({ mode: 'PRODUCTION', regulated: false });
    const customer = await completeIndividual(prod, 'Gone Soon');
    const doc = await uploadDocument(prod, customer.id);
    const v = await verify(prod, customer.id);
    expect(v.verificationStatus).toBe('PENDING_MANUAL_REVIEW');
    expect((await prod.api.delete(`/customers/${customer.id}`)).status).toBe(200);
    expect(await t.corridor.services.compliance.verifications.listAll(prod.platform.id, 'PENDING_MANUAL_REVIEW')).toEqual([]);
    await expect(t.corridor.services.compliance.verifications.resolve(v.id, 'APPROVED')).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await eventsAbout(prod.platform.id, [v.id, customer.id])).toEqual(['VERIFICATION.PENDING_MANUAL_REVIEW', 'CUSTOMER.KYC_PENDING']);
    // Its documents are no longer held by the review: the platform can delete them.
    expect((await prod.api.delete(`/documents/${doc.id}`)).status).toBe(204);
  });

  it('a rejection carries the operator\'s reason', async () => {
    const prod = await t.createPlatform({ mode: 'PRODUCTION', regulated: false });
    const customer = await completeIndividual(prod, 'Eve Example');
    await uploadDocument(prod, customer.id);
    const v = await verify(prod, customer.id);
    const resolved = await t.corridor.services.compliance.verifications.resolve(v.id, 'REJECTED', 'sanctions list match');
    expect(resolved).toMatchObject({ verificationStatus: 'REJECTED', kycStatus: 'REJECTED', errors: [{ type: 'APPLICANT_REJECTED', reason: 'sanctions list match' }] });
    await expect(t.corridor.services.compliance.verifications.resolve('Verification:nope', 'APPROVED')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('GET /verifications', () => {
  it('lists and filters; another platform\'s verifications are 404', async () => {
    const q = await t.createPlatform({ regulated: false });
    const customer = await completeIndividual(q, 'List Me');
    const first = await verify(q, customer.id);
    await uploadDocument(q, customer.id);
    const second = await verify(q, customer.id);
    const all = expectStatus(await q.api.get('/verifications'), 200);
    expect(all.data.map((v: { id: string }) => v.id)).toEqual([second.id, first.id]);
    const approved = expectStatus(await q.api.get('/verifications', { verificationStatus: 'APPROVED' }), 200);
    expect(approved.data.map((v: { id: string }) => v.id)).toEqual([second.id]);
    expect(expectStatus(await q.api.get('/verifications', { customerId: 'Customer:other' }), 200).totalCount).toBe(0);
    expect(expectStatus(await q.api.get(`/verifications/${first.id}`), 200)).toEqual(first);
    expectError(await p.api.get(`/verifications/${first.id}`), 404, 'NOT_FOUND');
    expectError(await p.api.post('/verifications', { customerId: customer.id }), 404, 'USER_NOT_FOUND');
    expectError(await q.api.get('/verifications', { verificationStatus: 'MAYBE' }), 400, 'INVALID_INPUT');
  });

  it('other platforms\' beneficial owners are 404', async () => {
    const customer = await business(p);
    const owner = expectStatus(await p.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Mine')), 201);
    const q = await t.createPlatform();
    expectError(await q.api.get(`/beneficial-owners/${owner.id}`), 404, 'NOT_FOUND');
    expectError(await q.api.patch(`/beneficial-owners/${owner.id}`, { roles: ['DIRECTOR'] }), 404, 'NOT_FOUND');
    expectError(await q.api.get('/beneficial-owners', { customerId: customer.id }), 404, 'USER_NOT_FOUND');
    expectError(await q.api.post('/beneficial-owners', beneficialOwnerBody(customer.id, 'Theirs')), 404, 'USER_NOT_FOUND');
  });

  it('needs authentication', async () => {
    expect((await t.anonymous.get('/verifications')).status).toBe(401);
    expect((await t.anonymous.post('/verifications', { customerId: 'x' })).status).toBe(401);
  });
});

describe('GET /customers/kyc-link', () => {
  it('links an existing customer to the hosted flow, passing redirectUri along', async () => {
    const customer = expectStatus(await p.api.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'kyc-link-1' }), 201);
    const link = expectStatus(await p.api.get('/customers/kyc-link', { platformCustomerId: 'kyc-link-1', redirectUri: 'https://app.example/done' }), 200);
    expect(link).toMatchObject({ platformCustomerId: 'kyc-link-1', customerId: customer.id });
    const url = new URL(link.kycUrl);
    expect(url.searchParams.get('customerId')).toBe(customer.id);
    expect(url.searchParams.get('redirectUri')).toBe('https://app.example/done');
  });

  it('refuses unknown customers and bad redirect URIs', async () => {
    expectError(await p.api.get('/customers/kyc-link', { platformCustomerId: 'nobody' }), 404, 'USER_NOT_FOUND');
    expectError(await p.api.get('/customers/kyc-link', {}), 400, 'INVALID_INPUT');
    await p.api.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'kyc-link-2' });
    const bad = await p.api.get('/customers/kyc-link', { platformCustomerId: 'kyc-link-2', redirectUri: 'javascript:alert(1)' });
    expectError(bad, 400, 'INVALID_INPUT');
    expect(bad.body.details.errors[0].field).toBe('querystring.redirectUri');
  });
});
