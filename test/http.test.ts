import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { apiClient, basicAuth, rawExchange, startTestApp, type TestApp, type TestPlatform } from './support/app.js';

let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

describe('error envelope', () => {
  it('401 without credentials, with WWW-Authenticate', async () => {
    const response = await t.anonymous.get('/config');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ status: 401, code: 'UNAUTHORIZED', message: expect.any(String) });
    expect(response.headers['www-authenticate']).toContain('Basic');
  });

  it('401 with a wrong secret or malformed header', async () => {
    const wrong = apiClient(t.corridor, { clientId: p.credentials.clientId, clientSecret: 'x'.repeat(48) });
    expect((await wrong.get('/config')).status).toBe(401);
    const malformed = await t.anonymous.request({ method: 'GET', path: '/config', headers: { authorization: 'Basic !!!' } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.code).toBe('UNAUTHORIZED');
    // A client id PostgreSQL cannot even compare (NUL) was a 500.
    for (const credentials of ['\0:\0', 'abc\0defgh:x', 'é'.repeat(10) + ':x']) {
      const odd = await t.anonymous.request({ method: 'GET', path: '/config', headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } });
      expect(odd.status).toBe(401);
      expect(odd.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('answers carry nosniff, and API answers are not to be cached, errors and shared reads included', async () => {
    const unroutable = await p.api.get('/customers/%ff');
    expect(unroutable.status).toBe(400);
    const answers = [await p.api.get('/config'), await t.anonymous.get('/config'), unroutable, ...(await Promise.all([p.api.get('/customers'), p.api.get('/customers')]))];
    for (const answer of answers) expect(answer.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
    const health = await t.corridor.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['x-content-type-options']).toBe('nosniff');
    expect(health.headers['cache-control']).toBeUndefined();
  });

  it('404 envelope for unknown routes', async () => {
    const response = await p.api.get('/no-such-thing');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('400 for malformed JSON and 415 for other content types', async () => {
    const bad = await p.api.request({
      method: 'POST',
      path: '/tokens',
      body: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });

    const text = await p.api.request({ method: 'POST', path: '/tokens', body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('413 for bodies over the limit', async () => {
    const small = await startTestApp({ bodyLimitBytes: 1024 });
    try {
      const q = await small.createPlatform();
      const response = await q.api.post('/tokens', { name: 'x'.repeat(5000), permissions: ['VIEW'] });
      expect(response.status).toBe(413);
      expect(response.body).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    } finally {
      await small.close();
    }
  });
});

describe('request logs', () => {
  it('at debug, show each request without the codes that are secrets in its path', async () => {
    const debug = await startTestApp({ logLevel: 'debug' });
    try {
      const platform = await debug.createPlatform();
      await debug.anonymous.get('/agents/device-codes/AGT-SECR-ETCO-DE12-3456/status');
      await platform.api.get('/invitations/INVITESECRET42');
      const requests = debug.logs.filter((line) => line.includes('incoming request'));
      expect(requests.some((line) => line.includes('/agents/device-codes/[redacted]/status'))).toBe(true);
      expect(requests.some((line) => line.includes('/invitations/[redacted]'))).toBe(true);
      expect(debug.logs.join('\n')).not.toMatch(/AGT-SECR|INVITESECRET42/);
    } finally {
      await debug.close();
    }
  });
});

describe('operational endpoints', () => {
  it('/healthz answers once migrations ran', async () => {
    const response = await t.anonymous.get('/healthz');
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('ok');
  });

  it('/metrics exposes Prometheus text', async () => {
    const configCount = async () => {
      const text = String((await t.anonymous.get('/metrics')).body);
      const line = text.split('\n').find((l) => l.startsWith('corridor_http_request_duration_seconds_count{method="GET",route="/2025-10-13/config",status="2xx"}'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    await p.api.get('/config');
    const before = await configCount();
    await p.api.get('/config');
    await p.api.get('/config');
    expect(await configCount()).toBe(before + 2);
    const response = await t.anonymous.get('/metrics');
    expect(response.status).toBe(200);
    expect(response.body).toMatch(/corridor_backlog\{kind="dead_jobs"\} \d+/);
    expect(response.body).toMatch(/corridor_backlog\{kind="pending_webhooks"\} \d+/);
    expect(response.body).toMatch(/^corridor_database_up 1$/m);
  });

  /** Runs `probe` while another transaction holds `table` locked, so nothing else can read it. */
  async function whileLocked<T>(table: 'jobs' | 'platforms', probe: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.corridor.database.db.transaction().execute(async (trx) => {
      await sql`lock table ${sql.table(table)} in access exclusive mode`.execute(trx);
      locked();
      await held;
    });
    try {
      await isLocked;
      return await probe();
    } finally {
      release();
      await holder;
    }
  }

  it('/metrics answers while the database cannot be read, and says so', async () => {
    const response = await whileLocked('jobs', () => t.anonymous.get('/metrics'));
    expect(response.status).toBe(200);
    expect(response.body).toMatch(/^corridor_database_up 0$/m);
    expect(response.body).toMatch(/corridor_http_request_duration_seconds_count/);
  });

  it('a request that finds the database unavailable is 503 SERVICE_UNAVAILABLE, without internals', async () => {
    const { db } = t.corridor.database;
    // The database answers as a terminated backend does (57P01) to this one insert only.
    await sql`create function corridor_test_unavailable() returns trigger language plpgsql as $$
      begin
        if new.name = 'unavailable-probe' then raise exception 'terminating connection due to administrator command' using errcode = '57P01'; end if;
        return new;
      end $$`.execute(db);
    await sql`create trigger corridor_test_unavailable before insert on api_tokens for each row execute function corridor_test_unavailable()`.execute(db);
    try {
      const unavailable = await p.api.post('/tokens', { name: 'unavailable-probe', permissions: ['VIEW'] });
      expect(unavailable.status).toBe(503);
      expect(unavailable.body).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', message: 'the database is unavailable or busy; retry in a moment' });
      expect((await p.api.post('/tokens', { name: 'available', permissions: ['VIEW'] })).status).toBe(201);
    } finally {
      await sql`drop trigger corridor_test_unavailable on api_tokens`.execute(db);
      await sql`drop function corridor_test_unavailable()`.execute(db);
    }
  });

  it('/healthz is 503 within seconds when the database does not answer', async () => {
    const startedMs = Date.now();
    const response = await whileLocked('platforms', () => t.anonymous.get('/healthz'));
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: 'database not answering' });
    expect(Date.now() - startedMs).toBeLessThan(5_000);
    expect((await t.anonymous.get('/healthz')).status).toBe(200);
  });

  it('/docs serves the reference UI', async () => {
    const response = await t.anonymous.get('/docs/');
    expect(response.status).toBe(200);
    expect(String(response.headers['content-type'])).toContain('text/html');
  });
});

describe('/openapi.json', () => {
  it('documents every operation with a summary and every field with a description', async () => {
    const { status, body: doc } = await t.anonymous.get('/openapi.json');
    expect(status).toBe(200);
    expect(doc.openapi).toMatch(/^3\./);
    const missing: string[] = [];

    const visit = (schema: any, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      if (schema.$ref) return;
      for (const [name, prop] of Object.entries<any>(schema.properties ?? {})) {
        const described = prop.description || prop.$ref || (prop.allOf ?? []).some((s: any) => s.description);
        if (!described) missing.push(`${where}.${name}`);
        visit(prop, `${where}.${name}`);
      }
      if (schema.items) visit(schema.items, `${where}[]`);
      for (const key of ['oneOf', 'anyOf', 'allOf']) for (const [i, s] of (schema[key] ?? []).entries()) visit(s, `${where}<${key}${i}>`);
    };

    const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item).map(([method, op]) => ({ id: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(5);
    for (const { id, op } of operations) {
      if (!op.summary) missing.push(`${id}: summary`);
      for (const param of op.parameters ?? []) if (!param.description && !param.schema?.description) missing.push(`${id}: parameter ${param.name}`);
      for (const content of Object.values<any>(op.requestBody?.content ?? {})) visit(content.schema, `${id} body`);
      for (const [code, response] of Object.entries<any>(op.responses ?? {})) {
        for (const content of Object.values<any>(response.content ?? {})) visit(content.schema, `${id} ${code}`);
      }
    }
    for (const [name, schema] of Object.entries<any>(doc.components?.schemas ?? {})) visit(schema, `#/components/schemas/${name}`);
    expect(missing).toEqual([]);
  });

  it('documents the blank rule: a request string that may not be empty carries the pattern \\S', async () => {
    const { body: doc } = await t.anonymous.get('/openapi.json');
    const customerBodies = doc.paths['/2025-10-13/customers'].post.requestBody.content['application/json'].schema;
    const individual = (customerBodies.oneOf ?? customerBodies.anyOf ?? [customerBodies]).find((s: any) => s.properties?.fullName);
    expect(individual.properties.fullName).toMatchObject({ minLength: 1, pattern: '\\S' });
    const token = doc.paths['/2025-10-13/tokens'].post.requestBody.content['application/json'].schema;
    expect(token.properties.name).toMatchObject({ minLength: 1, pattern: '\\S' });
    // A shared request schema too (the external account details, under components).
    const beneficiary = doc.components.schemas.ExternalAccountCreateInfo.oneOf.find((s: any) => s.properties?.beneficiary).properties.beneficiary;
    const individualBeneficiary = (beneficiary.oneOf ?? [beneficiary]).find((s: any) => s.properties?.fullName);
    expect(individualBeneficiary.properties.fullName).toMatchObject({ minLength: 1, pattern: '\\S' });
  });

  it('documents the answers any operation can give: 503; 413 and 415 with a body; 401, 403 and 429 when authenticated; 409 and 422 with an Idempotency-Key', async () => {
    const { body: doc } = await t.anonymous.get('/openapi.json');
    const undocumented: string[] = [];
    let open = 0;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      if (!path.startsWith('/2025-10-13/')) continue;
      for (const [method, op] of Object.entries<any>(item)) {
        const codes = Object.keys(op.responses ?? {});
        const expected = ['503', ...(method === 'get' ? [] : ['413', '415'])];
        if (op.security?.length === 0) open++;
        else expected.push('401', '403', '429', ...(method === 'post' ? ['409', '422'] : []));
        for (const code of expected) if (!codes.includes(code)) undocumented.push(`${method.toUpperCase()} ${path}: ${code}`);
      }
    }
    expect(open).toBeGreaterThan(0);
    expect(undocumented).toEqual([]);
  });
});

describe('request bodies', () => {
  it('a client too slow to send its body gets 408 and loses the connection', async () => {
    const slow = await startTestApp({ requestTimeoutMs: 1_000 });
    try {
      const { credentials } = await slow.createPlatform();
      const address = await slow.corridor.app.listen({ host: '127.0.0.1', port: 0 });
      const socket = connect(Number(new URL(address).port), '127.0.0.1');
      const startedMs = Date.now();
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      const headers = `Host: x\r\nAuthorization: ${basicAuth(credentials)}\r\nContent-Type: application/json\r\nContent-Length: 40`;
      socket.write(`POST /2025-10-13/tokens HTTP/1.1\r\n${headers}\r\n\r\n{`);
      await new Promise((resolve) => socket.on('close', resolve));
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 408, code: 'REQUEST_TIMEOUT' });
      expect(Date.now() - startedMs).toBeGreaterThanOrEqual(900);
      expect(Date.now() - startedMs).toBeLessThan(5_000);
    } finally {
      await slow.close();
    }
  });

  it('requests that are not HTTP, or whose headers are over 16 KiB, are answered in the envelope', async () => {
    const exchange = (request: string) => rawExchange(t, request);
    const cases = [
      ['GET /2025-10-13/config HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'INVALID_INPUT'],
      ['GET /2025-10-13/config HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400, 'INVALID_INPUT'],
      [`GET /2025-10-13/config HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
    ] as const;
    for (const [request, status, code] of cases) {
      const answer = await exchange(request);
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answer).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ status, code, message: expect.any(String) });
    }
  });

  it('a body nested deeper than 32 levels is 400, not a stack overflow where it is stored', async () => {
    const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const deep = await p.api.request({ method: 'POST', path: '/tokens', headers: { 'content-type': 'application/json' }, body: `{"name":"deep","permissions":["VIEW"],"x":${nested(5_000)}}` });
    expect(deep.status).toBe(400);
    expect(deep.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'body' }] } });
    expect(deep.body.message).toMatch(/32 deep/);
    // At the limit the body is read, and refused for what it says (an unknown field).
    const atLimit = await p.api.request({ method: 'POST', path: '/tokens', headers: { 'content-type': 'application/json' }, body: `{"name":"deep","permissions":["VIEW"],"x":${nested(31)}}` });
    expect(atLimit.status).toBe(400);
    expect(atLimit.body.details.errors[0]).toMatchObject({ field: 'x', constraint: 'additionalProperties' });
  });

  it('operations that read no body refuse one that says something; none and {} are the same', async () => {
    const saying = await p.api.post('/invitations/NOSUCHCODE/cancel', { reason: 'x' });
    expect(saying.status).toBe(400);
    expect(saying.body.details.errors[0]).toMatchObject({ field: 'body' });
    expect((await p.api.request({ method: 'DELETE', path: '/tokens/Token:nope', body: [1] })).status).toBe(400);
    expect((await p.api.post('/invitations/NOSUCHCODE/cancel', {})).status).toBe(404);
    expect((await p.api.request({ method: 'POST', path: '/invitations/NOSUCHCODE/cancel', headers: { 'content-type': 'application/json' } })).status).toBe(404);
  });

  it('a request that arrives while the server shuts down gets 503 in the error envelope', async () => {
    const closing = await startTestApp();
    const address = await closing.corridor.app.listen({ host: '127.0.0.1', port: 0 });
    const socket = connect(Number(new URL(address).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    await new Promise((resolve) => socket.on('connect', resolve));
    // Half a request: the connection is busy, so closing waits for it instead of dropping it.
    socket.write('GET /2025-10-13/config HTTP/1.1\r\nHost: x\r\n');
    // Time for the server to read the half (a loaded machine may take a while), then to start closing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closed = closing.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write('\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
  });

  it('an answer to a request in flight when the shutdown starts says Connection: close, so the client does not reuse the connection', async () => {
    const closing = await startTestApp();
    const { credentials } = await closing.createPlatform();
    const address = await closing.corridor.app.listen({ host: '127.0.0.1', port: 0 });
    const socket = connect(Number(new URL(address).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.on('connect', resolve));
    // Headers and part of the body: the request is in flight when closing starts.
    const body = JSON.stringify({ name: 'drained', permissions: ['VIEW'] });
    socket.write(`POST /2025-10-13/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth(credentials)}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closed = closing.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write(body.slice(5));
    await ended;
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  });

  it('lists at most 50 field errors, however many fields are wrong', async () => {
    const body: Record<string, unknown> = { name: 'many', permissions: ['VIEW'] };
    for (let i = 0; i < 5_000; i++) body[`unknown${i}`] = i;
    const response = await p.api.post('/tokens', body);
    expect(response.status).toBe(400);
    expect(response.body.details.errors).toHaveLength(50);
    expect(response.body.details.errors[0]).toMatchObject({ field: 'unknown0', constraint: 'additionalProperties' });
  });

  it('a body too big to list every error (80,000 unknown fields) is refused on its first one', async () => {
    const body: Record<string, unknown> = { name: 'huge', permissions: ['VIEW'] };
    for (let i = 0; i < 80_000; i++) body[`u${i}`] = 0;
    const response = await p.api.post('/tokens', body);
    expect(response.status).toBe(400);
    expect(response.body.details.errors).toEqual([{ field: 'u0', constraint: 'additionalProperties', message: 'is not a known field' }]);
    // A small body still lists every bad field.
    const small = await p.api.post('/tokens', { name: '', permissions: ['NOPE'], extra: 1 });
    expect(small.status).toBe(400);
    expect(small.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['extra', 'name', 'permissions.0']);
  });

  it('a DELETE with a JSON content type and no body is fine', async () => {
    const created = await p.api.post('/tokens', { name: 'to delete', permissions: ['VIEW'] });
    const response = await p.api.request({ method: 'DELETE', path: `/tokens/${created.body.id}`, headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(204);
  });

  it('a POST with no body where one is required is a 400 naming the body', async () => {
    const response = await p.api.request({ method: 'POST', path: '/tokens', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_INPUT');
  });

  it('refuses NUL characters and year 0000, which PostgreSQL cannot store, as bad input', async () => {
    const nul = await p.api.request({ method: 'POST', path: '/tokens', body: '{"name":"a\\u0000b","permissions":["VIEW"]}', headers: { 'content-type': 'application/json' } });
    expect(nul.status).toBe(400);
    expect(nul.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'body', constraint: 'format' }] } });
    const escaped = await p.api.request({ method: 'POST', path: '/tokens', body: '{"name":"a\\\\u0000b","permissions":["VIEW"]}', headers: { 'content-type': 'application/json' } });
    expect(escaped.status).toBe(201);
    expect(escaped.body.name).toBe('a\\u0000b');
    for (const path of ['/customers/Customer:%00', '/transactions?platformCustomerId=%00', '/customers?platformCustomerId=%C3%28', '/customers?platformCustomerId=%FF&limit=2']) {
      const response = await p.api.get(path);
      expect(response.status, path).toBe(400);
      expect(response.body.details.errors[0]).toMatchObject({ field: 'url', constraint: 'format' });
    }
    const yearZero = await p.api.get('/tokens', { createdAfter: '0000-01-01T00:00:00Z' });
    expect(yearZero.status).toBe(400);
    expect(yearZero.body.details.errors[0].field).toBe('querystring.createdAfter');
  });

  it('refuses a required name of only white space as it refuses an empty one', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['/customers', { customerType: 'INDIVIDUAL', fullName: ' \t ' }, 'fullName'],
      ['/customers', { customerType: 'BUSINESS', businessInfo: { legalName: '   ' } }, 'businessInfo.legalName'],
      ['/tokens', { name: '   ', permissions: ['VIEW'] }, 'name'],
    ];
    for (const [path, body, field] of cases) {
      const response = await p.api.post(path, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.details.errors, JSON.stringify(body)).toContainEqual({ field, constraint: 'minLength', message: 'must not be blank' });
    }
    expect((await p.api.post('/tokens', { name: ' a token ', permissions: ['VIEW'] })).status).toBe(201);
  });

  it('refuses date-times that are no storable instant: a leap second, or an offset carrying the year out of 1–9999', async () => {
    const unstorable = ['2016-12-31T23:59:60Z', '9999-12-31T23:59:59-01:00', '0001-01-01T00:30:00+01:00', '0000-12-31T23:00:00-02:00x'];
    for (const createdAfter of unstorable) {
      const response = await p.api.get('/tokens', { createdAfter });
      expect(response.status, createdAfter).toBe(400);
      expect(response.body.details.errors[0], createdAfter).toMatchObject({ field: 'querystring.createdAfter', constraint: 'format' });
    }
    const body = { inviterUma: '$nobody@example.com', expiresAt: '2035-06-30T23:59:60Z' };
    const invitation = await p.api.post('/invitations', body);
    expect(invitation.status).toBe(400);
    expect(invitation.body.details.errors).toContainEqual(expect.objectContaining({ field: 'expiresAt', constraint: 'format' }));
    for (const createdAfter of ['0000-12-31T23:00:00-02:00', '9999-12-31T23:59:59.999Z', '2016-12-31t23:59:59.123456789z']) {
      expect((await p.api.get('/tokens', { createdAfter })).status, createdAfter).toBe(200);
    }
  });

  it('refuses half a surrogate pair, which is not text (PostgreSQL refuses it in JSON, and text columns would store U+FFFD)', async () => {
    const json = { 'content-type': 'application/json' };
    const lone = [
      ['/tokens', '{"name":"x\\ud800y","permissions":["VIEW"]}'],
      ['/tokens', '{"name":"x\\uDC00","permissions":["VIEW"]}'],
      ['/tokens', '{"name":"\\ude00\\ud83d","permissions":["VIEW"]}'],
      ['/customers', '{"customerType":"INDIVIDUAL","platformCustomerId":"lone-1","fullName":"\\ud800","region":"US"}'],
      ['/customers', '{"customerType":"INDIVIDUAL","platformCustomerId":"lone-2","address":{"line1":"a","\\udbff":"b"}}'],
    ];
    for (const [path, body] of lone) {
      const response = await p.api.request({ method: 'POST', path, body, headers: json });
      expect(response.status, body).toBe(400);
      expect(response.body, body).toMatchObject({ status: 400, code: 'INVALID_INPUT', details: { errors: [{ field: 'body', constraint: 'format' }] } });
    }
    const pair = await p.api.request({ method: 'POST', path: '/tokens', body: '{"name":"smile \\ud83d\\ude00","permissions":["VIEW"]}', headers: json });
    expect(pair.status).toBe(201);
    expect(pair.body.name).toBe('smile 😀');
    const escapedBackslash = await p.api.request({ method: 'POST', path: '/tokens', body: '{"name":"a\\\\ud800","permissions":["VIEW"]}', headers: json });
    expect(escapedBackslash.status).toBe(201);
    expect(escapedBackslash.body.name).toBe('a\\ud800');
    const customers = await p.api.get('/customers', { platformCustomerId: 'lone-1' });
    expect(customers.body.data).toEqual([]);
  });

  it('answers a path the router cannot take (bad percent-encoding, an over-long parameter) in the error envelope', async () => {
    for (const path of ['/customers/%FF', `/customers/${'x'.repeat(200)}`]) {
      const response = await p.api.get(path);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toEqual({ status: 400, code: 'INVALID_INPUT', message: expect.any(String) });
    }
  });

  it('refuses prototype poisoning', async () => {
    const response = await p.api.request({
      method: 'POST',
      path: '/tokens',
      body: '{"name":"x","permissions":["VIEW"],"__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
  });
});
