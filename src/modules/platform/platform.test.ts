import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { systemClock } from '../../core/clock.js';
import { enqueueJobs } from '../../core/jobs.js';

let t: TestApp;
let sandbox: TestPlatform;
let production: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  sandbox = await t.createPlatform();
  production = await t.createPlatform({ mode: 'PRODUCTION' });
});
afterAll(() => t.close());

describe('GET /config', () => {
  it('returns the platform configuration', async () => {
    const { status, body } = await sandbox.api.get('/config');
    expect(status).toBe(200);
    expect(body.id).toMatch(/^PlatformConfig:/);
    expect(body.supportedCurrencies.map((c: { currencyCode: string }) => c.currencyCode)).toEqual(['USD', 'EUR', 'MXN']);
    expect(body.supportedCurrencies[2]).toMatchObject({ providerRequiredCustomerFields: ['NATIONALITY', 'BIRTH_DATE'] });
    expect(body.isRegulatedFinancialInstitution).toBe(true);
    expect(body.fees).toEqual({ variableFeeRate: 0.003, fixedFees: [], fxSpreadBps: 25 });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
  });
});

describe('PATCH /config', () => {
  it('updates the given fields and keeps the rest', async () => {
    const { status, body } = await sandbox.api.patch('/config', {
      umaDomain: 'Pay.Example.com',
      webhookEndpoint: 'https://hooks.example.com/corridor',
      supportedCurrencies: [
        { currencyCode: 'USD', minAmount: 100, maxAmount: 500000, requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }], enabledTransactionTypes: ['OUTGOING', 'INCOMING'] },
        { currencyCode: 'JPY', minAmount: 1, maxAmount: 1000000, requiredCounterpartyFields: [], enabledTransactionTypes: ['INCOMING'] },
      ],
      fees: { variableFeeRate: 0.01, fixedFees: [{ currencyCode: 'USD', amount: 30 }], fxSpreadBps: 50 },
    });
    expect(status).toBe(200);
    expect(body.umaDomain).toBe('pay.example.com');
    expect(body.webhookEndpoint).toBe('https://hooks.example.com/corridor');
    expect(body.supportedCurrencies).toHaveLength(2);
    expect(body.fees.fixedFees).toEqual([{ currencyCode: 'USD', amount: 30 }]);
    const again = await sandbox.api.get('/config');
    expect(again.body).toEqual(body);

    const partial = await sandbox.api.patch('/config', { proxyUmaSubdomain: 'pay' });
    expect(partial.body).toMatchObject({ proxyUmaSubdomain: 'pay', umaDomain: 'pay.example.com' });
    expect(partial.body.supportedCurrencies).toHaveLength(2);

    const cleared = await sandbox.api.patch('/config', { webhookEndpoint: '' });
    expect(cleared.body.webhookEndpoint).toBeUndefined();
  });

  it('refuses a UMA domain another platform has, but not the shared default', async () => {
    const [owner, taker] = [await t.createPlatform(), await t.createPlatform()];
    const domain = `pay-${Date.now()}.example`;
    expect((await owner.api.patch('/config', { umaDomain: domain })).status).toBe(200);
    const refused = await taker.api.patch('/config', { umaDomain: domain.toUpperCase() });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['umaDomain']);
    expect((await owner.api.patch('/config', { umaDomain: domain })).status).toBe(200);
    // Platforms that already share a domain (an old default, say) can still send theirs back.
    await t.corridor.database.db.updateTable('platforms').set({ uma_domain: domain }).where('id', '=', taker.platform.id).execute();
    expect((await taker.api.patch('/config', { umaDomain: domain })).status).toBe(200);
    await t.corridor.database.db.updateTable('platforms').set({ uma_domain: 'taker.example' }).where('id', '=', taker.platform.id).execute();
    const fresh = await t.createPlatform();
    const defaultDomain = (await fresh.api.get('/config')).body.umaDomain;
    expect((await owner.api.patch('/config', { umaDomain: defaultDomain })).status).toBe(200);
    expect((await taker.api.patch('/config', { umaDomain: domain })).status).toBe(200);
  });

  it('takes back the currency list GET /config returned, read-only provider fields included', async () => {
    const platform = await t.createPlatform();
    const before = (await platform.api.get('/config')).body;
    const mxn = before.supportedCurrencies.find((c: { currencyCode: string }) => c.currencyCode === 'MXN');
    expect(mxn.providerRequiredCounterpartyCustomerFields).toEqual(['FULL_NAME']);
    const edited = before.supportedCurrencies.map((c: { currencyCode: string }) => (c.currencyCode === 'MXN' ? { ...c, maxAmount: 5000 } : c));
    const { status, body } = await platform.api.patch('/config', { supportedCurrencies: edited });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.supportedCurrencies).toEqual(edited);
    const stored = await t.corridor.database.db.selectFrom('platforms').select('supported_currencies').where('id', '=', platform.platform.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.supported_currencies)).not.toContain('providerRequired');
  });

  const usd = { currencyCode: 'USD', minAmount: 1, maxAmount: 10, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING'] };
  it.each([
    ['unknown currency', { supportedCurrencies: [{ ...usd, currencyCode: 'ABC' }] }, 'supportedCurrencies.0.currencyCode'],
    ['lower-case currency', { supportedCurrencies: [{ ...usd, currencyCode: 'usd' }] }, 'supportedCurrencies.0.currencyCode'],
    ['min above max', { supportedCurrencies: [{ ...usd, minAmount: 11 }] }, 'supportedCurrencies.0.minAmount'],
    ['duplicate currency', { supportedCurrencies: [usd, usd] }, 'supportedCurrencies.1.currencyCode'],
    ['negative amount', { supportedCurrencies: [{ ...usd, minAmount: -1 }] }, 'supportedCurrencies.0.minAmount'],
    ['empty list', { supportedCurrencies: [] }, 'supportedCurrencies'],
    ['bad field name', { supportedCurrencies: [{ ...usd, requiredCounterpartyFields: [{ name: 'SHOE_SIZE', mandatory: true }] }] }, 'supportedCurrencies.0.requiredCounterpartyFields.0.name'],
    ['bad transaction type', { supportedCurrencies: [{ ...usd, enabledTransactionTypes: ['SIDEWAYS'] }] }, 'supportedCurrencies.0.enabledTransactionTypes.0'],
    ['missing field', { supportedCurrencies: [{ currencyCode: 'USD' }] }, 'supportedCurrencies.0.minAmount'],
    ['webhook not a URL', { webhookEndpoint: 'not a url' }, 'webhookEndpoint'],
    ['webhook ftp', { webhookEndpoint: 'ftp://example.com/x' }, 'webhookEndpoint'],
    ['webhook with credentials', { webhookEndpoint: 'https://u:p@example.com/x' }, 'webhookEndpoint'],
    ['uma domain with path', { umaDomain: 'example.com/x' }, 'umaDomain'],
    ['uma domain with port 0', { umaDomain: 'example.com:0' }, 'umaDomain'],
    ['uma domain with port past 65535', { umaDomain: 'example.com:65536' }, 'umaDomain'],
    ['read-only field', { isRegulatedFinancialInstitution: false }, 'isRegulatedFinancialInstitution'],
    ['changed provider fields', { supportedCurrencies: [{ ...usd, currencyCode: 'MXN', providerRequiredCustomerFields: ['EMAIL'] }] }, 'supportedCurrencies.0.providerRequiredCustomerFields'],
    ['provider fields where the provider needs none', { supportedCurrencies: [{ ...usd, providerRequiredCounterpartyCustomerFields: ['FULL_NAME'] }] }, 'supportedCurrencies.0.providerRequiredCounterpartyCustomerFields'],
    ['fee rate too high', { fees: { variableFeeRate: 0.9, fixedFees: [], fxSpreadBps: 0 } }, 'fees.variableFeeRate'],
    ['fee currency unknown', { fees: { variableFeeRate: 0, fixedFees: [{ currencyCode: 'QQQ', amount: 1 }], fxSpreadBps: 0 } }, 'fees.fixedFees.0.currencyCode'],
  ])('rejects %s', async (_name, patch, field) => {
    const before = await production.api.get('/config');
    const { status, body } = await production.api.patch('/config', patch);
    expect(status).toBe(400);
    expect(body.code).toBe('INVALID_INPUT');
    expect(body.details.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect((await production.api.get('/config')).body).toEqual(before.body);
  });

  it('needs authentication', async () => {
    expect((await t.anonymous.patch('/config', {})).status).toBe(401);
  });
});

describe('POST /sandbox/clock/advance', () => {
  it('moves a sandbox platform clock forward', async () => {
    const first = await sandbox.api.post('/sandbox/clock/advance', { seconds: 3600 });
    expect(first.status).toBe(200);
    expect(first.body.offsetSeconds).toBe(3600);
    expect(Date.parse(first.body.now) - Date.now()).toBeGreaterThan(3590_000);
    const second = await sandbox.api.post('/sandbox/clock/advance', { seconds: 60 });
    expect(second.body.offsetSeconds).toBe(3660);
  });

  it('is refused on production platforms (403)', async () => {
    const { status, body } = await production.api.post('/sandbox/clock/advance', { seconds: 60 });
    expect(status).toBe(403);
    expect(body.code).toBe('SANDBOX_ONLY');
  });

  it('validates seconds', async () => {
    for (const seconds of [0, -5, 1.5, 'ten']) {
      const { status, body } = await sandbox.api.post('/sandbox/clock/advance', { seconds });
      expect(status).toBe(400);
      expect(body.details.errors[0].field).toBe('seconds');
    }
  });

  it('replays rather than moves again when its key is retried, even after the jobs it ran failed', async () => {
    const own = await t.createPlatform();
    const { database, services } = t.corridor;
    services.jobs.register('test.clock-noop', async () => {});
    await database.db.transaction().execute((trx) => enqueueJobs(trx, own.platform, [{ kind: 'test.clock-noop', runAt: new Date(Date.now() + 10_000) }], systemClock));
    // Claiming the job the advance made due fails, as a crash would stop it, after the clock moved.
    const fault = `clock_fault_${Date.now()}`;
    await sql.raw(`create function ${fault}() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$;
      create trigger ${fault} before update on jobs for each row when (new.platform_id = '${own.platform.id}' and new.locked_until is not null) execute function ${fault}()`).execute(database.db);
    const request = { method: 'POST', path: '/sandbox/clock/advance', body: { seconds: 60 }, headers: { 'idempotency-key': 'advance-once' } };
    try {
      expect((await own.api.request(request)).status).toBe(500);
    } finally {
      await sql.raw(`drop trigger ${fault} on jobs; drop function ${fault}()`).execute(database.db);
    }
    const replay = await own.api.request(request);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toMatchObject({ offsetSeconds: 60, jobsRun: 0 });
    expect((await services.platforms.read(database.db, own.platform.id))?.clockOffsetMs).toBe(60_000);
    // A request that answers records its final answer over the provisional one.
    const next = { ...request, headers: { 'idempotency-key': 'advance-twice' } };
    const answered = await own.api.request(next);
    expect(answered.body).toMatchObject({ offsetSeconds: 120 });
    expect((await own.api.request(next)).body).toEqual(answered.body);
  });

  it('only affects its own platform', async () => {
    const other = await t.createPlatform();
    await sandbox.api.post('/sandbox/clock/advance', { seconds: 86400 });
    const untouched = await other.api.post('/sandbox/clock/advance', { seconds: 1 });
    expect(untouched.body.offsetSeconds).toBe(1);
  });
});
