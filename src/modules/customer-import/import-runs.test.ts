import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectStatus, sendForm } from '../../../test/support/verification.js';
import type { CustomerService } from '../customers/service.js';
import { createCustomerImport } from './service.js';

let t: TestApp;

const HEADER = 'platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country';
const ROWS = 2_000;
/** Every 97th row is refused (no birth date), so refused rows move the offset too. */
const refused = (i: number) => i % 97 === 50;

/** Rows with what could throw an offset off: quoted commas, line breaks and quotes, CRLF, characters outside the BMP, blank lines. */
function bigCsv(): string {
  const lines = [`\ufeff${HEADER}`];
  for (let i = 0; i < ROWS; i++) {
    const birthDate = refused(i) ? '' : '1990-01-15';
    lines.push(`run-${i},INDIVIDUAL,"Zoë 🙂 ""${i}""",${birthDate},"${i} Main St,\r\nApt ""B""",City,ST,12345,US`);
    if (i % 500 === 0) lines.push('');
  }
  return lines.join('\r\n') + '\r\n';
}

const upload = (platform: TestPlatform, text: string) => sendForm(platform, 'POST', '/customers/bulk/csv', {}, [{ fileName: 'big.csv', contentType: 'text/csv', content: Buffer.from(text) }]);
const job = async (platform: TestPlatform, id: string) => expectStatus(await platform.api.get(`/customers/bulk/jobs/${id}`), 200);

/** Another import service on the same database, as a second process would have, with its own run budget (and size of the slices it reads). */
function anotherProcess(runBudgetMs: number, customers: Pick<CustomerService, 'create'> = t.corridor.services.customers, options: { chunkBytes?: number; database?: typeof t.corridor.database } = {}) {
  const { clock, log, services } = t.corridor;
  const database = options.database ?? t.corridor.database;
  return createCustomerImport({ database, clock, log, customers, platforms: services.platforms, maxBytes: 1 << 20, maxRows: ROWS, runBudgetMs, chunkBytes: options.chunkBytes });
}

/** The database as an import service sees it, counting the bytes of the stored file its queries return. */
function countingFileReads() {
  let bytes = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    async transformResult(args) {
      for (const row of args.result.rows as Array<Record<string, unknown>>) {
        for (const key of ['csv', 'slice']) {
          const value = row[key];
          if (typeof value === 'string') bytes += Buffer.byteLength(value);
          else if (value instanceof Uint8Array) bytes += value.length;
        }
      }
      return args.result;
    },
  };
  const database = { ...t.corridor.database, db: t.corridor.database.db.withPlugin(plugin) };
  return { database, read: () => bytes, reset: () => void (bytes = 0) };
}

beforeAll(async () => {
  t = await startTestApp({ bulkImportMaxRows: ROWS, bulkImportMaxBytes: 1 << 20 });
});
afterAll(() => t.close());

describe('bulk import runs', () => {
  it('imports a large file across many short runs in two processes, every row exactly once, reading it in slices that split records and characters', async () => {
    const p = await t.createPlatform();
    const { jobId } = expectStatus(await upload(p, bigCsv()), 202);
    // Slices of odd sizes: their ends fall inside quoted fields, CRLFs, and 2- and 4-byte characters.
    const processes = [anotherProcess(20, undefined, { chunkBytes: 61 }), anotherProcess(20, undefined, { chunkBytes: 333 })];
    let runs = 0;
    while ((await job(p, jobId)).status !== 'COMPLETED' && runs < ROWS + 10) {
      await processes[runs % 2].run(jobId);
      runs++;
      // Once, mid-way, forget the offset, as for an import counted before it was stored.
      if (runs === 10) await t.corridor.database.db.updateTable('bulk_imports').set({ resume_byte: null }).where('id', '=', jobId).execute();
    }
    expect(runs).toBeGreaterThan(10);

    const done = await job(p, jobId);
    const refusedRows = Array.from({ length: ROWS }, (_, i) => i).filter(refused);
    expect(done.progress).toEqual({ total: ROWS, processed: ROWS, successful: ROWS - refusedRows.length, failed: refusedRows.length });
    expect(done.errors.map((e: any) => [e.correlationId, e.details.row, e.details.field])).toEqual(refusedRows.map((i) => [`run-${i}`, i + 1, 'birthDate']));
    expect((await p.api.get('/customers', { limit: 1 })).body.totalCount).toBe(ROWS - refusedRows.length);
    for (const i of [0, 1, 499, 500, 501, 1234, ROWS - 1]) {
      const found = (await p.api.get('/customers', { platformCustomerId: `run-${i}` })).body.data;
      expect(found, `run-${i}`).toHaveLength(1);
      expect(found[0]).toMatchObject({ fullName: `Zoë 🙂 "${i}"`, address: { line1: `${i} Main St,\r\nApt "B"` } });
    }
  }, 300_000);

  it('a run reads the stored file from where its rows start, a slice at a time, not the whole file', async () => {
    const p = await t.createPlatform();
    const text = bigCsv();
    const { jobId } = expectStatus(await upload(p, text), 202);
    const CHUNK = 1_000;
    const counting = countingFileReads();
    const process = anotherProcess(20, undefined, { chunkBytes: CHUNK, database: counting.database });
    const offset = async () => (await t.corridor.database.db.selectFrom('bulk_imports').select('resume_byte').where('id', '=', jobId).executeTakeFirstOrThrow()).resume_byte ?? 0;
    let runs = 0;
    while ((await job(p, jobId)).status !== 'COMPLETED') {
      const before = await offset();
      counting.reset();
      await process.run(jobId);
      const after = (await job(p, jobId)).status === 'COMPLETED' ? Buffer.byteLength(text) : await offset();
      // The header's slice, the rows it imported, and at most a slice past them (to see the last one end).
      expect(counting.read(), `run ${runs}: rows from byte ${before} to ${after}`).toBeLessThanOrEqual(CHUNK + (after - before) + 2 * CHUNK);
      runs++;
    }
    expect(runs).toBeGreaterThan(10);
    expect((await job(p, jobId)).progress).toMatchObject({ total: ROWS, processed: ROWS });
  }, 300_000);

  it('a process runs at most four imports at once; a fifth is scheduled for later', async () => {
    const p = await t.createPlatform();
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const rows = Array.from({ length: 3 }, (_, i) => `par-${n}-${i},INDIVIDUAL,Par ${n},1990-01-15,1 Road,City,ST,12345,US`);
      ids.push(expectStatus(await upload(p, [HEADER, ...rows].join('\n')), 202).jobId);
    }
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const create: CustomerService['create'] = async (...args) => {
      await gate;
      return t.corridor.services.customers.create(...args);
    };
    const busy = anotherProcess(60_000, { create });
    const runs = ids.map((id, n) => busy.run(id).then(() => n));
    const deferred = await Promise.race(runs);
    release();
    await Promise.all(runs);

    for (const [n, id] of ids.entries()) expect((await job(p, id)).status).toBe(n === deferred ? 'PENDING' : 'COMPLETED');
    // Its job from the upload (which the runner has not run here) and the one a minute later.
    const jobs = await t.corridor.database.db.selectFrom('jobs').select(['payload', 'due_at']).where('platform_id', '=', p.platform.id).execute();
    const dueTimes = jobs.filter((j) => (j.payload as { importId?: string }).importId === ids[deferred]).map((j) => j.due_at.getTime());
    expect(dueTimes).toHaveLength(2);
    expect(Math.max(...dueTimes)).toBeGreaterThan(Date.now() + 50_000);

    await t.corridor.services.jobs.runDue(p.platform.id);
    expect((await job(p, ids[deferred])).status).toBe('COMPLETED');
  });
});
