import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, basicAuth, rawExchange, startTestApp, type TestApp, type TestPlatform } from './support/app.js';

/** HTTP as clients send it: methods, charsets, encodings, header counts (docs/api/platform.md, "HTTP details"). */
let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

describe('HEAD', () => {
  it('needs the permission GET needs, and answers GET\'s status and headers without the body', async () => {
    const token = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    const got = await viewer.get('/config');
    const head = await viewer.request({ method: 'HEAD', path: '/config' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe(got.headers['content-type']);
    expect((await viewer.request({ method: 'HEAD', path: '/tokens' })).status).toBe(200);
  });
});

describe('methods', () => {
  it('a method a path does not take is 405 with Allow, before authentication; an unknown path stays 404', async () => {
    const cases = [
      ['DELETE', '/quotes', 'POST'],
      ['PUT', '/customers', 'GET, HEAD, POST'],
      ['POST', '/customers/Customer:nope', 'GET, HEAD, PATCH, DELETE'],
      ['HEAD', '/quotes/Quote:nope/execute', 'POST'],
      ['OPTIONS', '/config', 'GET, HEAD, PATCH'],
    ] as const;
    for (const [method, path, allow] of cases) {
      for (const client of [p.api, t.anonymous]) {
        const response = await client.request({ method, path });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.allow, `${method} ${path}`).toBe(allow);
        expect(response.headers).toMatchObject({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
        if (method !== 'HEAD') expect(response.body).toEqual({ status: 405, code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining(allow) });
      }
    }
    const outside = await t.corridor.app.inject({ method: 'POST', url: '/healthz' });
    expect(outside.statusCode).toBe(405);
    expect(outside.headers.allow).toBe('GET, HEAD');
    for (const method of ['GET', 'DELETE', 'OPTIONS'] as const) {
      const unknown = await p.api.request({ method, path: '/no-such-thing' });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.allow).toBeUndefined();
      expect(unknown.body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
  });
});

describe('paths', () => {
  it('with a trailing slash or an empty segment are unknown paths on every route, those with a parameter included', async () => {
    const cases = [
      ['GET', '/config/'],
      ['GET', '/customers/'],
      ['DELETE', '/customers/'],
      ['GET', '/quotes/'],
      ['POST', '/quotes//execute'],
      ['GET', '/customers/internal-accounts/'],
    ] as const;
    for (const [method, path] of cases) {
      for (const client of [p.api, t.anonymous]) {
        const response = await client.request({ method, path });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.body, `${method} ${path}`).toEqual({ status: 404, code: 'NOT_FOUND', message: `no route ${method} /2025-10-13${path}` });
        expect(response.headers.allow).toBeUndefined();
      }
    }
    expect((await p.api.get('/customers')).status).toBe(200);
    expect((await p.api.get('/customers/Customer:nope')).body.code).toBe('USER_NOT_FOUND');
  });
});

describe('requests', () => {
  it('carry UTF-8 JSON: other bytes are 400, another charset or a Content-Encoding 415, not read as something else', async () => {
    const latin1 = Buffer.from('{"name":"Jos\xe9 Pe\xf1a","permissions":["VIEW"]}', 'latin1');
    const notUtf8 = await p.api.request({ method: 'POST', path: '/tokens', body: latin1, headers: { 'content-type': 'application/json' } });
    expect(notUtf8.status).toBe(400);
    expect(notUtf8.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'body', constraint: 'encoding' }] } });
    const declared = await p.api.request({ method: 'POST', path: '/tokens', body: latin1, headers: { 'content-type': 'application/json; charset=iso-8859-1' } });
    expect(declared.status).toBe(415);
    expect(declared.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const compressed = await p.api.request({
      method: 'POST',
      path: '/tokens',
      body: gzipSync('{"name":"zipped","permissions":["VIEW"]}'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(compressed.status).toBe(415);
    expect(compressed.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const utf8 = Buffer.from('{"name":"José Peña","permissions":["VIEW"]}', 'utf8');
    const created = await p.api.request({ method: 'POST', path: '/tokens', body: utf8, headers: { 'content-type': 'application/json; charset=UTF-8', 'content-encoding': 'identity' } });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('José Peña');
  });

  it('take an Authorization header after 2,000 other header lines', async () => {
    const address = await t.corridor.app.listen({ host: '127.0.0.1', port: 0 });
    const socket = connect(Number(new URL(address).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    const filler = Array.from({ length: 2_100 }, (_, i) => `x${i}: 1\r\n`).join('');
    socket.write(`GET /2025-10-13/config HTTP/1.1\r\nHost: x\r\n${filler}Authorization: ${basicAuth(p.credentials)}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.on('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
  });

  it('without a Host header are 400 in the error envelope, and the connection closes; HTTP/1.0 needs none', async () => {
    const exchange = (request: string) => rawExchange(t, request);
    const authorization = `Authorization: ${basicAuth(p.credentials)}\r\n`;
    for (const request of [`GET /2025-10-13/config HTTP/1.1\r\n${authorization}\r\n`, `GET /2025-10-13/config HTTP/1.1\r\nHost:\r\n${authorization}\r\n`, 'GET /nowhere HTTP/1.1\r\n\r\n', 'POST /uma/settle HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}']) {
      // Kept alive, the socket would not close and the exchange would not end.
      const answer = await exchange(request);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\ncontent-type: application\/json/i);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ status: 400, code: 'INVALID_INPUT', message: expect.stringContaining('Host') });
    }
    expect(await exchange(`GET /2025-10-13/config HTTP/1.0\r\n${authorization}\r\n`)).toMatch(/^HTTP\/1\.1 200 /);
  });
});
