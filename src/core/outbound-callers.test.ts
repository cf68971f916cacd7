import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCounterparty } from '../modules/uma/counterparty.js';
import { createOidcVerifier } from '../modules/wallets/oidc.js';
import { sendWebhook } from '../modules/webhooks/delivery.js';
import type { SigningKeys } from '../modules/webhooks/keys.js';

// Each caller connects through the guarded fetch, which resolves the name as the socket connects
// (so no earlier DNS answer counts): `localhost` is refused there, where plain fetch would reach
// the loopback server below.

let server: Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const REFUSED = 'localhost resolved to 127.0.0.1, a loopback or private address';

describe('callers of the guarded fetch', () => {
  it('webhook delivery refuses to connect, and reaches the receiver only where private targets are allowed', async () => {
    const keys = { sign: async () => 'signature' } as unknown as SigningKeys;
    const envelope = { id: 'Event:1', type: 'TEST' as const, timestamp: new Date().toISOString(), data: {} };
    const url = `http://localhost:${port}/hook`;
    expect(await sendWebhook(keys, 'Platform:1', url, envelope, { timeoutMs: 2000, allowPrivate: false })).toEqual({
      kind: 'error',
      message: `${REFUSED}, which production platforms may not call`,
    });
    expect(received).toEqual([]);
    expect(await sendWebhook(keys, 'Platform:1', url, envelope, { timeoutMs: 2000, allowPrivate: true })).toMatchObject({ kind: 'response', status: 200 });
    expect(received).toEqual(['/hook']);
  });

  it('a UMA counterparty call refuses to connect, with the reason', async () => {
    received.length = 0;
    await expect(callCounterparty(`http://localhost:${port}/.well-known/lnurlpubkey`, { method: 'GET' }, { allowPrivate: false })).rejects.toThrow(
      `${REFUSED}, which this server does not call`,
    );
    expect(received).toEqual([]);
  });

  it('OIDC discovery refuses to connect, with the reason', async () => {
    received.length = 0;
    const verifier = createOidcVerifier({ allowPrivateIssuers: false });
    const settings = { issuer: `http://localhost:${port}`, audiences: ['corridor'] };
    await expect(verifier.verify('a.b.c', settings, { mode: 'PRODUCTION' })).rejects.toThrow(`${REFUSED}, which production platforms may not use`);
    expect(received).toEqual([]);
  });

  it("a JWKS fetch refuses to connect", async () => {
    received.length = 0;
    const verifier = createOidcVerifier({ allowPrivateIssuers: false });
    const settings = { issuer: 'https://issuer.example', jwksUri: `http://localhost:${port}/jwks`, audiences: ['corridor'] };
    await expect(verifier.verify('eyJhbGciOiJFUzI1NiJ9.e30.c2ln', settings, { mode: 'PRODUCTION' })).rejects.toThrow(REFUSED);
    expect(received).toEqual([]);
  });
});
