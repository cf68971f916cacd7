import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/quotes.js';
import { expectStatus, multipart, PNG, sendForm } from '../../../test/support/verification.js';

let t: TestApp;
let p: TestPlatform;

const HEADER = 'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,email,businessLegalName,businessRegistrationNumber,platformAccountId';

const csvFile = (text: string, contentType = 'text/csv') => ({ fileName: 'customers.csv', contentType, content: Buffer.from(text) });
const form = (text: string) => {
  const { payload, contentType } = multipart({}, [csvFile(text)]);
  return { body: payload, headers: { 'content-type': contentType } };
};
const upload = (platform: TestPlatform, text: string, contentType?: string) => sendForm(platform, 'POST', '/customers/bulk/csv', {}, [csvFile(text, contentType)]);
const job = async (platform: TestPlatform, id: string) => expectStatus(await platform.api.get(`/customers/bulk/jobs/${id}`), 200);
const runJobs = (platform: TestPlatform) => t.corridor.services.jobs.runDue(platform.platform.id);

async function customerByRef(platform: TestPlatform, platformCustomerId: string) {
  return (await platform.api.get('/customers', { platformCustomerId })).body.data;
}

async function eventsOf(platform: TestPlatform, type: string) {
  const rows = await t.corridor.database.db.selectFrom('events').select('data').where('platform_id', '=', platform.platform.id).where('type', '=', type).execute();
  return rows.map((r) => r.data as any);
}

beforeAll(async () => {
  t = await startTestApp({ bulkImportMaxRows: 10, bulkImportMaxBytes: 4096 });
  p = await t.createPlatform();
  await p.api.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'taken-1', fullName: 'Already Here' });
});
afterAll(() => t.close());

describe('POST /customers/bulk/csv', () => {
  it('imports good rows, reports bad ones by row and column, and never stops on a bad row', async () => {
    const rows = [
      'ada@imports.example,imp-ada,INDIVIDUAL,Ada Lovelace,1990-01-15,"1 Main St, Apt 2",London,LDN,N1 9GU,GB,ada@example.com,,,acct-1',
      ',imp-noaddress,INDIVIDUAL,No Address,1980-02-02,,,,,,,,,',
      '$acme@imports.example,imp-acme,BUSINESS,,,400 Commerce Way,Austin,TX,78701,US,,Acme Inc,REG-9,',
      ',imp-bad-type,PERSON,Who Knows,1980-02-02,1 Road,City,ST,12345,US,,,,',
      ',taken-1,INDIVIDUAL,Dup Licate,1980-02-02,1 Road,City,ST,12345,US,,,,',
      ',imp-bad-email,INDIVIDUAL,Bad Email,1980-02-02,1 Road,City,ST,12345,US,not-an-email,,,',
      ',imp-bad-country,INDIVIDUAL,Bad Country,1980-02-02,1 Road,City,ST,12345,XX,,,,',
      ',imp-grace,INDIVIDUAL,Grace Hopper,1906-12-09,2 Navy Rd,Arlington,VA,22201,US,,,,',
    ];
    const accepted = await upload(p, [HEADER, ...rows].join('\r\n'));
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.body).toEqual({ jobId: expect.stringMatching(/^Job:/), status: 'PENDING' });
    expect(await job(p, accepted.body.jobId)).toMatchObject({ status: 'PENDING', progress: { total: 8, processed: 0, successful: 0, failed: 0 }, errors: [] });

    await runJobs(p);
    const done = await job(p, accepted.body.jobId);
    expect(done).toMatchObject({ id: accepted.body.jobId, status: 'COMPLETED', progress: { total: 8, processed: 8, successful: 3, failed: 5 }, completedAt: expect.any(String) });
    expect(done.errors.map((e: any) => [e.correlationId, e.code, e.details.row, e.details.field])).toEqual([
      ['imp-noaddress', 'INVALID_INPUT', 2, 'addressLine1'],
      ['imp-bad-type', 'INVALID_INPUT', 4, 'customerType'],
      ['taken-1', 'PLATFORM_CUSTOMER_ID_EXISTS', 5, undefined],
      ['imp-bad-email', 'INVALID_INPUT', 6, 'email'],
      ['imp-bad-country', 'INVALID_INPUT', 7, 'country'],
    ]);
    expect(done.errors[0].details.errors.map((e: any) => e.field)).toEqual(['addressLine1', 'city', 'state', 'postalCode', 'country']);

    const [ada] = await customerByRef(p, 'imp-ada');
    expect(ada).toMatchObject({ customerType: 'INDIVIDUAL', fullName: 'Ada Lovelace', umaAddress: '$ada@imports.example', email: 'ada@example.com', address: { line1: '1 Main St, Apt 2', country: 'GB' } });
    const [acme] = await customerByRef(p, 'imp-acme');
    expect(acme).toMatchObject({ customerType: 'BUSINESS', businessInfo: { legalName: 'Acme Inc', registrationNumber: 'REG-9' } });
    expect(await customerByRef(p, 'imp-grace')).toHaveLength(1);
    expect(await customerByRef(p, 'imp-bad-type')).toHaveLength(0);

    const [event] = await eventsOf(p, 'BULK_UPLOAD.COMPLETED');
    expect(event).toEqual(done);
  });

  it('an import where every row fails is FAILED, with BULK_UPLOAD.FAILED', async () => {
    const q = await t.createPlatform();
    const accepted = expectStatus(await upload(q, `${HEADER}\n,x1,INDIVIDUAL,,,,,,,,,,,\n,x2,BUSINESS,,,,,,,,,,,`), 202);
    await runJobs(q);
    const done = await job(q, accepted.jobId);
    expect(done).toMatchObject({ status: 'FAILED', progress: { total: 2, processed: 2, successful: 0, failed: 2 } });
    expect((await eventsOf(q, 'BULK_UPLOAD.FAILED')).map((e) => e.id)).toEqual([accepted.jobId]);
  });

  it('resumes after a crash without creating any customer twice, and shows progress meanwhile', async () => {
    const q = await t.createPlatform();
    const rows = Array.from({ length: 5 }, (_, i) => `,crash-${i},INDIVIDUAL,Row ${i},1990-01-0${i + 1},1 Road,City,ST,12345,US,,,,`);
    const accepted = expectStatus(await upload(q, [HEADER, ...rows].join('\n')), 202);
    const customers = t.corridor.services.customers;
    const create = customers.create;
    let calls = 0;
    customers.create = async (...args) => {
      if (++calls === 3) throw new Error('simulated crash');
      return create(...args);
    };
    try {
      await runJobs(q);
    } finally {
      customers.create = create;
    }
    expect(await job(q, accepted.jobId)).toMatchObject({ status: 'PROCESSING', progress: { total: 5, processed: 2, successful: 2, failed: 0 } });
    // The job is retried (here at once rather than after its backoff).
    await t.corridor.database.db.updateTable('jobs').set({ due_at: new Date(0) }).where('platform_id', '=', q.platform.id).execute();
    await runJobs(q);
    expect(await job(q, accepted.jobId)).toMatchObject({ status: 'COMPLETED', progress: { total: 5, processed: 5, successful: 5, failed: 0 }, errors: [] });
    // Running the import again changes nothing.
    await t.corridor.services.customerImport.run(accepted.jobId);
    for (let i = 0; i < 5; i++) expect(await customerByRef(q, `crash-${i}`)).toHaveLength(1);
    expect((await q.api.get('/customers')).body.totalCount).toBe(5);
  });

  it('refuses bad files with the error envelope', async () => {
    const cases: Array<[string, string, string, string | undefined]> = [
      [`${HEADER},favouriteColour\n,a,INDIVIDUAL`, 'text/csv', 'header.favouriteColour', 'column'],
      ['fullName,customerType\nAda,INDIVIDUAL', 'text/csv', 'header.platformCustomerId', 'required'],
      ['platformCustomerId,customerType,platformCustomerId\na,INDIVIDUAL,b', 'text/csv', 'header.platformCustomerId', 'uniqueItems'],
      [HEADER, 'text/csv', 'file', 'minItems'],
      ['', 'text/csv', 'file', 'minSize'],
      [`${HEADER}\n"unclosed,a,INDIVIDUAL`, 'text/csv', 'file', 'format'],
      [[HEADER, ...Array.from({ length: 11 }, (_, i) => `,r${i},INDIVIDUAL`)].join('\n'), 'text/csv', 'file', 'maxItems'],
      [`${HEADER}\n${'x'.repeat(5000)}`, 'text/csv', 'file', 'maxSize'],
      [`${HEADER}\n,a,INDIVIDUAL`, 'application/json', 'file', 'fileType'],
    ];
    for (const [text, type, field, constraint] of cases) {
      const res = await upload(p, text, type);
      expectError(res, 400, 'INVALID_INPUT');
      const error = res.body.details.errors[0];
      expect(error.field, text.slice(0, 60)).toBe(field);
      if (constraint) expect(error.constraint, text.slice(0, 60)).toBe(constraint);
    }
    const binary = await sendForm(p, 'POST', '/customers/bulk/csv', {}, [{ fileName: 'x.csv', contentType: 'text/csv', content: Buffer.from([0xff, 0xfe, 0x00, 0x41]) }]);
    expectError(binary, 400, 'INVALID_INPUT');
    expectError(await sendForm(p, 'POST', '/customers/bulk/csv', {}, [{ fileName: 'x.png', contentType: 'image/png', content: PNG }]), 400, 'INVALID_INPUT');
    const none = await sendForm(p, 'POST', '/customers/bulk/csv', { note: 'no file' });
    expectError(none, 400, 'INVALID_INPUT');
    expectError(await p.api.post('/customers/bulk/csv', { file: 'a,b' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const csvBody = await p.api.post('/customers/bulk/csv', 'fullName\nAda', { 'content-type': 'text/csv' });
    expectError(csvBody, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(csvBody.body.message).toBe('send the body as multipart/form-data');
  });

  it('replays an upload retried with its Idempotency-Key, and refuses the key for a different file', async () => {
    const send = (text: string) => {
      const { body, headers } = form(text);
      return p.api.request({ method: 'POST', path: '/customers/bulk/csv', body, headers: { ...headers, 'idempotency-key': 'csv-once' } });
    };
    const text = [HEADER, ',idem-1,INDIVIDUAL,Once Only,1980-02-02,1 Road,City,ST,12345,US,,,,'].join('\n');
    const first = await send(text);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const again = await send(text);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.jobId).toBe(first.body.jobId);
    expectError(await send(text.replace('Once Only', 'Twice Over')), 422, 'IDEMPOTENCY_KEY_MISMATCH');
  });

  it('jobs of other platforms, and unknown jobs, are 404', async () => {
    const accepted = expectStatus(await upload(p, `${HEADER}\n,other-1,INDIVIDUAL,Ola,1990-01-01,1 Road,City,ST,12345,US,,,,`), 202);
    const q = await t.createPlatform();
    expectError(await q.api.get(`/customers/bulk/jobs/${accepted.jobId}`), 404, 'BULK_UPLOAD_JOB_NOT_FOUND');
    expectError(await p.api.get('/customers/bulk/jobs/Job:nope'), 404, 'BULK_UPLOAD_JOB_NOT_FOUND');
    expect((await t.anonymous.get(`/customers/bulk/jobs/${accepted.jobId}`)).status).toBe(401);
    await runJobs(p);
  });
});
