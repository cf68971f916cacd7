import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/errors.js';

let t: TestApp;
let a: TestPlatform;
let b: TestPlatform;

const jane = {
  customerType: 'INDIVIDUAL',
  fullName: 'Jane Smith',
  birthDate: '1990-01-15',
  nationality: 'US',
  region: 'US',
  email: 'jane@example.com',
  address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
};
const acme = {
  customerType: 'BUSINESS',
  region: 'US',
  address: { line1: '100 Main St', postalCode: '10001', country: 'US' },
  businessInfo: {
    legalName: 'Acme Corporation',
    country: 'US',
    incorporatedOn: '2018-03-14',
    entityType: 'LLC',
    countriesOfOperation: ['US', 'MX'],
    businessType: 'INFORMATION',
    expectedMonthlyTransactionCount: 'COUNT_100_TO_500',
  },
};

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

beforeAll(async () => {
  t = await startTestApp();
  a = await t.createPlatform();
  b = await t.createPlatform();
});
afterAll(() => t.close());

describe('POST /customers', () => {
  it('creates an individual with generated identifiers and unverified KYC', async () => {
    const created = await a.api.post('/customers', jane);
    expect(created.status).toBe(201);
    const { id, platformCustomerId, umaAddress, ...rest } = created.body;
    expect(id).toMatch(/^Customer:[0-9a-f-]{36}$/);
    expect(platformCustomerId).toBe(id.slice('Customer:'.length));
    expect(umaAddress).toMatch(new RegExp(`^\\$jane\\.smith\\.[0-9a-z]+@${a.platform.umaDomain.replace(/\./g, '\\.')}$`));
    expect(rest).toMatchObject({ ...jane, currencies: ['USD', 'EUR', 'MXN'], kycStatus: 'UNVERIFIED', isDeleted: false });
    expect(rest.createdAt).toBe(rest.updatedAt);
    expect((await a.api.get(`/customers/${id}`)).body).toEqual(created.body);
  });

  it('spells accented and non-decomposing Latin letters out in a generated UMA address', async () => {
    for (const [fullName, slug] of [['Ølaf Straße', 'olaf.strasse'], ['Łukasz Æbelø', 'lukasz.aebelo'], ['José Núñez', 'jose.nunez'], ['李小龙', 'customer']]) {
      const created = await a.api.post('/customers', { ...jane, platformCustomerId: `slug-${slug}-${fullName.length}`, fullName });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.umaAddress, fullName).toMatch(new RegExp(`^\\$${slug.replace('.', '\\.')}\\.[0-9a-z]+@`));
    }
  });

  it('creates a business with its details and unverified KYB', async () => {
    const created = await a.api.post('/customers', { ...acme, platformCustomerId: 'biz-1', currencies: ['USD'], umaAddress: '$acme@example.com' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...acme, platformCustomerId: 'biz-1', currencies: ['USD'], umaAddress: '$acme@example.com', kybStatus: 'UNVERIFIED' });
    expect(created.body.kycStatus).toBeUndefined();
  });

  it('lets only regulated platforms set verification statuses', async () => {
    const regulated = await a.api.post('/customers', { ...jane, kycStatus: 'APPROVED' });
    expect(regulated.status).toBe(201);
    expect(regulated.body.kycStatus).toBe('APPROVED');
    const unregulated = await t.createPlatform({ regulated: false });
    expectError(await unregulated.api.post('/customers', { ...acme, kybStatus: 'APPROVED' }), 400, 'INVALID_INPUT', 'kybStatus', 'regulated');
  });

  it.each([
    ['missing customerType', { fullName: 'X' }, 'customerType', 'required'],
    ['unknown customerType', { customerType: 'ROBOT' }, 'customerType', 'enum'],
    ['unknown field', { ...jane, nickname: 'J' }, 'nickname', 'additionalProperties'],
    ['business field on an individual', { ...jane, businessInfo: { legalName: 'X' } }, 'businessInfo', 'additionalProperties'],
    ['mistyped field', { ...jane, fullName: 42 }, 'fullName', 'type'],
    ['empty name', { ...jane, fullName: '' }, 'fullName', 'minLength'],
    ['impossible date', { ...jane, birthDate: '1990-02-30' }, 'birthDate', 'format'],
    ['date-time for a date', { ...jane, birthDate: '1990-01-15T00:00:00Z' }, 'birthDate', 'format'],
    ['birth date in the future', { ...jane, birthDate: '2999-01-01' }, 'birthDate', 'maximum'],
    ['birth date too old', { ...jane, birthDate: '1850-01-01' }, 'birthDate', 'minimum'],
    ['unassigned country code', { ...jane, nationality: 'XX' }, 'nationality', 'country'],
    ['lower-case country code', { ...jane, region: 'us' }, 'region', 'pattern'],
    ['bad address country', { ...jane, address: { ...jane.address, country: 'ZZ' } }, 'address.country', 'country'],
    ['address without line1', { ...jane, address: { postalCode: '1', country: 'US' } }, 'address.line1', 'required'],
    ['malformed currency', { ...jane, currencies: ['usd'] }, 'currencies.0', 'pattern'],
    ['repeated currency', { ...jane, currencies: ['USD', 'USD'] }, 'currencies', 'uniqueItems'],
    ['bad email', { ...jane, email: 'not-an-email' }, 'email', 'format'],
    ['business without legal name', { ...acme, businessInfo: { country: 'US' } }, 'businessInfo.legalName', 'required'],
    ['bad entity type', { ...acme, businessInfo: { ...acme.businessInfo, entityType: 'GUILD' } }, 'businessInfo.entityType', 'enum'],
    ['bad country of operation', { ...acme, businessInfo: { ...acme.businessInfo, countriesOfOperation: ['US', 'QQ'] } }, 'businessInfo.countriesOfOperation.1', 'country'],
    ['future incorporation', { ...acme, businessInfo: { ...acme.businessInfo, incorporatedOn: '2999-12-31' } }, 'businessInfo.incorporatedOn', 'maximum'],
  ])('rejects %s', async (_name, body, field, constraint) => {
    expectError(await a.api.post('/customers', body), 400, 'INVALID_INPUT', field, constraint);
  });

  it.each([['JPY'], ['ABC']])('rejects the currency %s, which the platform does not support', async (code) => {
    expectError(await a.api.post('/customers', { ...jane, currencies: ['USD', code] }), 400, 'INVALID_CURRENCY', 'currencies.1', 'currency');
  });

  it.each(['john@example.com', '$@example.com', '$john doe@example.com', '$john@', '$john@-bad.com', `$${'x'.repeat(65)}@example.com`])(
    'rejects the UMA address %s',
    async (umaAddress) => {
      expectError(await a.api.post('/customers', { ...jane, umaAddress }), 400, 'INVALID_UMA_ADDRESS', 'umaAddress', 'format');
    },
  );

  it('refuses a duplicate platformCustomerId or UMA address, but not across platforms', async () => {
    const platformCustomerId = unique('dup');
    const umaAddress = `$${platformCustomerId}@example.com`;
    expect((await a.api.post('/customers', { ...jane, platformCustomerId, umaAddress })).status).toBe(201);
    expectError(await a.api.post('/customers', { ...jane, platformCustomerId }), 409, 'PLATFORM_CUSTOMER_ID_EXISTS');
    expectError(await a.api.post('/customers', { ...jane, umaAddress: umaAddress.toUpperCase() }), 409, 'UMA_ADDRESS_EXISTS');
    expect((await b.api.post('/customers', { ...jane, platformCustomerId, umaAddress })).status).toBe(201);
  });

  it('creates exactly one customer when the same platformCustomerId races', async () => {
    const platformCustomerId = unique('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => a.api.post('/customers', { ...jane, platformCustomerId })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'PLATFORM_CUSTOMER_ID_EXISTS');
    const rows = await t.corridor.database.db.selectFrom('customers').select('id').where('platform_customer_id', '=', platformCustomerId).execute();
    expect(rows).toHaveLength(1);
  });

  it('replays a request with the same Idempotency-Key and creates one customer', async () => {
    const platformCustomerId = unique('idem');
    const headers = { 'idempotency-key': platformCustomerId };
    const first = await a.api.post('/customers', { ...jane, platformCustomerId }, headers);
    const second = await a.api.post('/customers', { ...jane, platformCustomerId }, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    const rows = await t.corridor.database.db.selectFrom('customers').select('id').where('platform_customer_id', '=', platformCustomerId).execute();
    expect(rows).toHaveLength(1);
  });
});

describe('GET, PATCH and DELETE /customers/{customerId}', () => {
  it('answers 404 for unknown ids and for another platform\'s customers', async () => {
    const other = await b.api.post('/customers', jane);
    for (const id of ['Customer:00000000-0000-7000-8000-000000000000', 'nonsense', other.body.id]) {
      expectError(await a.api.get(`/customers/${encodeURIComponent(id)}`), 404, 'USER_NOT_FOUND');
      expectError(await a.api.patch(`/customers/${encodeURIComponent(id)}`, { customerType: 'INDIVIDUAL', fullName: 'X' }), 404, 'USER_NOT_FOUND');
      expectError(await a.api.delete(`/customers/${encodeURIComponent(id)}`), 404, 'USER_NOT_FOUND');
    }
    expect((await b.api.get(`/customers/${other.body.id}`)).body.fullName).toBe('Jane Smith');
  });

  it('updates the fields sent and keeps the others', async () => {
    const created = await a.api.post('/customers', jane);
    const umaAddress = `$${unique('new')}@example.com`;
    const patched = await a.api.patch(`/customers/${created.body.id}`, {
      customerType: 'INDIVIDUAL',
      fullName: 'Jane Doe',
      currencies: ['EUR'],
      umaAddress,
      address: { line1: '2 Rue X', postalCode: '75001', country: 'FR' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ fullName: 'Jane Doe', birthDate: jane.birthDate, currencies: ['EUR'], umaAddress, email: jane.email });
    expect(patched.body.address).toEqual({ line1: '2 Rue X', postalCode: '75001', country: 'FR' });
    expect(patched.body.updatedAt >= created.body.updatedAt).toBe(true);
    expect((await a.api.get(`/customers/${created.body.id}`)).body).toEqual(patched.body);
  });

  it('merges business details field by field', async () => {
    const created = await a.api.post('/customers', acme);
    const patched = await a.api.patch(`/customers/${created.body.id}`, { customerType: 'BUSINESS', businessInfo: { taxId: '47-1234567' } });
    expect(patched.status).toBe(200);
    expect(patched.body.businessInfo).toEqual({ ...acme.businessInfo, taxId: '47-1234567' });
  });

  it('validates updates', async () => {
    const created = await a.api.post('/customers', jane);
    const taken = await a.api.post('/customers', { ...jane, umaAddress: `$${unique('taken')}@example.com` });
    const path = `/customers/${created.body.id}`;
    expectError(await a.api.patch(path, { fullName: 'X' }), 400, 'INVALID_INPUT', 'customerType', 'required');
    expectError(await a.api.patch(path, { customerType: 'BUSINESS', businessInfo: { taxId: '1' } }), 400, 'INVALID_INPUT', 'customerType', 'immutable');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', platformCustomerId: 'x' }), 400, 'INVALID_INPUT', 'platformCustomerId', 'additionalProperties');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', nationality: 'XX' }), 400, 'INVALID_INPUT', 'nationality', 'country');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', currencies: ['GBP'] }), 400, 'INVALID_CURRENCY', 'currencies.0', 'currency');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', birthDate: '2001-13-01' }), 400, 'INVALID_INPUT', 'birthDate', 'format');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', umaAddress: 'nope' }), 400, 'INVALID_UMA_ADDRESS', 'umaAddress', 'format');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', umaAddress: taken.body.umaAddress }), 409, 'UMA_ADDRESS_EXISTS');
    expect((await a.api.get(path)).body).toEqual(created.body);
  });

  it('soft-deletes: the customer stays readable, a second delete is 410, its identifiers become free', async () => {
    const platformCustomerId = unique('del');
    const created = await a.api.post('/customers', { ...jane, platformCustomerId });
    const path = `/customers/${created.body.id}`;
    const deleted = await a.api.delete(path);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.body.id, isDeleted: true });
    expectError(await a.api.delete(path), 410, 'CUSTOMER_DELETED');
    expectError(await a.api.patch(path, { customerType: 'INDIVIDUAL', fullName: 'X' }), 410, 'CUSTOMER_DELETED');
    expect((await a.api.get(path)).body).toEqual(deleted.body);
    expect((await a.api.get('/customers', { platformCustomerId })).body.totalCount).toBe(0);
    expect((await a.api.get('/customers', { platformCustomerId, isIncludingDeleted: true })).body.data[0].id).toBe(created.body.id);
    const again = await a.api.post('/customers', { ...jane, platformCustomerId, umaAddress: created.body.umaAddress });
    expect(again.status).toBe(201);
  });

  it('requireCustomer returns live customers and treats deleted ones as missing', async () => {
    const { customers } = t.corridor.services;
    const db = t.corridor.database.db;
    const created = await a.api.post('/customers', jane);
    const found = await customers.requireCustomer(db, a.platform.id, created.body.id);
    expect(found).toMatchObject({ id: created.body.id, fullName: 'Jane Smith', verificationStatus: 'UNVERIFIED', isDeleted: false });
    await expect(customers.requireCustomer(db, b.platform.id, created.body.id)).rejects.toMatchObject({ code: 'USER_NOT_FOUND' });
    await a.api.delete(`/customers/${created.body.id}`);
    await expect(customers.requireCustomer(db, a.platform.id, created.body.id)).rejects.toMatchObject({ code: 'USER_NOT_FOUND' });
  });
});

describe('GET /customers', () => {
  let c: TestPlatform;
  const ids: Record<string, string> = {};
  let middle: string;

  beforeAll(async () => {
    c = await t.createPlatform();
    const bodies = [
      ['p1', { ...jane, platformCustomerId: 'p1', region: 'US', currencies: ['USD'] }],
      ['p2', { ...jane, platformCustomerId: 'p2', region: 'MX', currencies: ['MXN'], umaAddress: '$maria@example.com' }],
      ['p3', { ...acme, platformCustomerId: 'p3', region: 'US', currencies: ['USD', 'EUR'] }],
      ['p4', { ...acme, platformCustomerId: 'p4', region: 'DE', currencies: ['EUR'] }],
      ['p5', { ...jane, platformCustomerId: 'p5', region: 'US' }],
      ['p6', { ...jane, platformCustomerId: 'p6', region: 'FR', currencies: ['EUR'] }],
      ['p7', { ...jane, platformCustomerId: 'p7' }],
    ] as const;
    for (const [key, body] of bodies) {
      const res = await c.api.post('/customers', body);
      ids[key] = res.body.id;
      if (key === 'p4') middle = res.body.createdAt;
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await c.api.delete(`/customers/${ids.p7}`);
  });

  const listIds = async (query: Record<string, string | number | boolean>) => {
    const res = await c.api.get('/customers', { limit: 100, ...query });
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBe(res.body.data.length);
    return res.body.data.map((x: { platformCustomerId: string }) => x.platformCustomerId).sort();
  };

  it('pages newest first with a stable order and a total count', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await c.api.get('/customers', { limit: 2, cursor });
      expect(page.status).toBe(200);
      expect(page.body.totalCount).toBe(6);
      seen.push(...page.body.data.map((x: { platformCustomerId: string }) => x.platformCustomerId));
      cursor = page.body.hasMore ? page.body.nextCursor : undefined;
      if (!page.body.hasMore) expect(page.body.nextCursor).toBeUndefined();
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['p6', 'p5', 'p4', 'p3', 'p2', 'p1']);
  });

  it('filters by every listed field', async () => {
    expect(await listIds({ platformCustomerId: 'p2' })).toEqual(['p2']);
    expect(await listIds({ customerType: 'BUSINESS' })).toEqual(['p3', 'p4']);
    expect(await listIds({ region: 'US' })).toEqual(['p1', 'p3', 'p5']);
    expect(await listIds({ currency: 'EUR' })).toEqual(['p3', 'p4', 'p5', 'p6']);
    expect(await listIds({ umaAddress: '$MARIA@example.com' })).toEqual(['p2']);
    expect(await listIds({ createdAfter: middle })).toEqual(['p4', 'p5', 'p6']);
    expect(await listIds({ createdBefore: middle })).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(await listIds({ updatedAfter: middle, isIncludingDeleted: true })).toEqual(['p4', 'p5', 'p6', 'p7']);
    expect(await listIds({ updatedBefore: middle })).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(await listIds({ isIncludingDeleted: true })).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
    expect(await listIds({ isIncludingDeleted: false, region: 'US', customerType: 'INDIVIDUAL' })).toEqual(['p1', 'p5']);
  });

  it('rejects bad filters', async () => {
    expectError(await c.api.get('/customers', { customerType: 'ROBOT' }), 400, 'INVALID_INPUT', 'querystring.customerType', 'enum');
    expectError(await c.api.get('/customers', { createdAfter: 'yesterday' }), 400, 'INVALID_INPUT', 'querystring.createdAfter', 'format');
    expectError(await c.api.get('/customers', { limit: 0 }), 400, 'INVALID_INPUT', 'querystring.limit', 'minimum');
    expectError(await c.api.get('/customers', { cursor: 'garbage' }), 400, 'INVALID_INPUT', 'querystring.cursor', 'format');
    // Well-formed positions the database cannot compare: beyond Date's range, year 0, a NUL in the id.
    const forged = [[9e15, 'x'], [-9e15, 'x'], [Date.parse('0000-06-01T00:00:00Z'), 'x'], [0, 'a\u0000b'], [0, '']];
    for (const position of forged) {
      const cursor = Buffer.from(JSON.stringify(position)).toString('base64url');
      for (const path of ['/customers', '/transactions', '/documents', '/customers/external-accounts']) {
        expectError(await c.api.get(path, { cursor }), 400, 'INVALID_INPUT', 'querystring.cursor', 'format');
      }
    }
    expectError(await c.api.get('/customers', { isIncludingDeleted: 'maybe' }), 400, 'INVALID_INPUT', 'querystring.isIncludingDeleted', 'type');
  });

  it('keeps the unfiltered total exact through parallel creates, deletes and refused duplicates', async () => {
    const d = await t.createPlatform();
    const created = await Promise.all(
      Array.from({ length: 24 }, (_, i) => d.api.post('/customers', { ...jane, platformCustomerId: `par-${i}`, region: i % 2 ? 'US' : 'MX' })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(24).fill(201));
    const deleted = await Promise.all(created.slice(0, 8).map((r) => d.api.delete(`/customers/${r.body.id}`)));
    expect(deleted.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect((await d.api.post('/customers', { ...jane, platformCustomerId: 'par-20' })).status).toBe(409);

    const total = async (query: Record<string, string | number | boolean> = {}) => (await d.api.get('/customers', { limit: 1, ...query })).body.totalCount;
    expect(await total()).toBe(16);
    expect(await total({ isIncludingDeleted: true })).toBe(24);
    // Filtered lists count their rows; both regions together must agree with the maintained total.
    expect((await total({ region: 'US' })) + (await total({ region: 'MX' }))).toBe(16);

    // An empty page (its only row deleted since the cursor was issued) still reports the total.
    const cursor = (await d.api.get('/customers', { limit: 15 })).body.nextCursor;
    const last = await d.api.get('/customers', { limit: 1, cursor });
    expect(last.body.data).toHaveLength(1);
    expect((await d.api.delete(`/customers/${last.body.data[0].id}`)).status).toBe(200);
    const empty = await d.api.get('/customers', { limit: 1, cursor });
    expect(empty.body).toEqual({ data: [], hasMore: false, totalCount: 15 });
  });

  it('never lists another platform\'s customers', async () => {
    const listed = await a.api.get('/customers', { limit: 100, isIncludingDeleted: true });
    const own = new Set(listed.body.data.map((x: { id: string }) => x.id));
    for (const id of Object.values(ids)) expect(own.has(id)).toBe(false);
  });
});

describe('authentication', () => {
  it('answers 401 without credentials on every customer endpoint', async () => {
    const id = 'Customer:00000000-0000-7000-8000-000000000000';
    const calls = [
      t.anonymous.post('/customers', jane),
      t.anonymous.get('/customers'),
      t.anonymous.get(`/customers/${id}`),
      t.anonymous.patch(`/customers/${id}`, { customerType: 'INDIVIDUAL' }),
      t.anonymous.delete(`/customers/${id}`),
    ];
    for (const res of await Promise.all(calls)) expectError(res, 401, 'UNAUTHORIZED');
  });
});
