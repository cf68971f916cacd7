import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { OidcIssuer } from '../../../test/support/oidc-issuer.js';
import { expectRefused, newWallet, walletPlatform } from '../../../test/support/wallets.js';

let t: TestApp;
/** The same database, started with OIDC_ALLOW_PRIVATE_ISSUERS: it stores what `t` would refuse. */
let allowing: TestApp;
let issuer: OidcIssuer;
let redirector: { url: string; server: Server };
const AUDIENCE = 'corridor-test-client';

/**
 * An issuer whose discovery document answers with a redirect to a valid document (issuer: itself,
 * keys: the test issuer's), so a client that follows redirects would accept its tokens.
 */
async function startRedirectingIssuer(target: OidcIssuer): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === '/.well-known/openid-configuration') return void response.writeHead(302, { location: '/moved' }).end();
    if (request.url === '/moved') return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: url, jwks_uri: target.jwksUri }));
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, server };
}

/** What a flooding issuer streams after the head of its document: far past the cap, and past what loopback socket buffers hold. */
const FLOOD_BYTES = 32 * 1024 * 1024;

interface FloodingIssuer {
  url: string;
  server: Server;
  /** Bytes of padding written before the connection closed. */
  sent: number;
  /** Whether the whole document was written. */
  finished: boolean;
  /** Settles when the first answer has closed: cut by the client, or sent whole. */
  closed: Promise<void>;
}

/**
 * An issuer answering every path with a valid 200 JSON document (discovery fields, an empty key
 * set) padded with FLOOD_BYTES of spaces, chunked and streamed with backpressure so `sent` is what
 * the client took. `announceOnly` announces that length in Content-Length instead, sends the
 * document's head and then nothing: only a client that trusts the header answers before its timeout.
 */
async function startFloodingIssuer(announceOnly = false): Promise<FloodingIssuer> {
  let settle!: () => void;
  const flood = { url: '', sent: 0, finished: false, closed: new Promise<void>((resolve) => (settle = resolve)) };
  const chunk = Buffer.alloc(64 * 1024, ' ');
  const server = createServer((_request, response) => {
    const head = Buffer.from(`{"issuer":"${flood.url}","jwks_uri":"${flood.url}/jwks","keys":[],"pad":"`);
    const tail = Buffer.from('"}');
    const length = announceOnly ? { 'content-length': String(head.length + FLOOD_BYTES + tail.length) } : {};
    response.writeHead(200, { 'content-type': 'application/json', ...length });
    response.on('close', settle);
    response.write(head);
    if (announceOnly) return;
    const pump = () => {
      while (flood.sent < FLOOD_BYTES) {
        if (response.destroyed) return;
        flood.sent += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      flood.finished = true;
      response.end(tail);
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  flood.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(flood, { server });
}

async function stopFlood(flood: FloodingIssuer): Promise<void> {
  flood.server.closeAllConnections();
  await new Promise((resolve) => flood.server.close(resolve));
}

beforeAll(async () => {
  t = await startTestApp();
  allowing = await startTestApp({ oidcAllowPrivateIssuers: true });
  issuer = await OidcIssuer.start();
  redirector = await startRedirectingIssuer(issuer);
});
afterAll(async () => {
  await allowing.close();
  await t.close();
  await issuer.close();
  await new Promise((resolve) => redirector.server.close(resolve));
});

/** A production platform configured through `allowing`, used through `t` (whose switch is off). */
async function productionWithIssuer(settings: { issuer: string; jwksUri?: string }): Promise<TestPlatform> {
  const configured = await walletPlatform(allowing, 'PRODUCTION', { oidcIssuers: [{ ...settings, audiences: [AUDIENCE] }] });
  return { ...configured, api: apiClient(t.corridor, configured.credentials) };
}

const createOauth = async (tp: TestPlatform, oidcToken: string) => {
  const wallet = await newWallet(tp);
  return wallet.api.post('/auth/credentials', { type: 'OAUTH', accountId: wallet.accountId, oidcToken });
};

describe('PATCH /config embeddedWallets.oidcIssuers on production platforms', () => {
  it('refuses an issuer on a loopback address', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const res = await production.api.patch('/config', { embeddedWallets: { oidcIssuers: [{ issuer: issuer.issuer, audiences: [AUDIENCE] }] } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_INPUT');
    expect(res.body.details.errors[0]).toMatchObject({ field: 'embeddedWallets.oidcIssuers.0.issuer', constraint: 'publicAddress' });
  });

  it('refuses a jwksUri on a private address', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const res = await production.api.patch('/config', {
      embeddedWallets: { oidcIssuers: [{ issuer: 'https://93.184.215.14', audiences: [AUDIENCE], jwksUri: 'https://169.254.169.254/jwks' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['embeddedWallets.oidcIssuers.0.jwksUri']);
  });

  it('accepts a loopback issuer on sandbox platforms, whose tokens then verify', async () => {
    const sandbox = await walletPlatform(t, 'SANDBOX', { oidcIssuers: [{ issuer: issuer.issuer, audiences: [AUDIENCE] }] });
    const created = await createOauth(sandbox, await issuer.token({ sub: 'sandy' }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
});

describe('verifying tokens of a production platform whose issuer is private', () => {
  it('does not fetch the discovery document', async () => {
    // An issuer no test discovered yet: a cached discovery document would skip straight to the JWKS.
    const undiscovered = await OidcIssuer.start();
    try {
      const production = await productionWithIssuer({ issuer: undiscovered.issuer });
      const created = await createOauth(production, await undiscovered.token({ sub: 'alice' }));
      expectRefused(created, 401, 'UNAUTHORIZED', 'Invalid OIDC token');
      expect(created.body.message).toMatch(/is a loopback or private address, which production platforms may not use/);
      expect(undiscovered.jwksRequests).toBe(0);
    } finally {
      await undiscovered.close();
    }
  });

  it('does not fetch a configured JWKS', async () => {
    const production = await productionWithIssuer({ issuer: issuer.issuer, jwksUri: issuer.jwksUri });
    const fetched = issuer.jwksRequests;
    const created = await createOauth(production, await issuer.token({ sub: 'alice' }));
    expectRefused(created, 401, 'UNAUTHORIZED', 'Invalid OIDC token');
    expect(created.body.message).toMatch(/is a loopback or private address, which production platforms may not use/);
    expect(issuer.jwksRequests).toBe(fetched);
  });
});

describe('OIDC discovery', () => {
  it('does not follow redirects', async () => {
    const sandbox = await walletPlatform(t, 'SANDBOX', { oidcIssuers: [{ issuer: redirector.url, audiences: [AUDIENCE] }] });
    const created = await createOauth(sandbox, await issuer.token({ iss: redirector.url }));
    expectRefused(created, 401, 'UNAUTHORIZED', 'Invalid OIDC token');
    expect(created.body.message).toMatch(/HTTP 302/);
  });
});

describe('issuer documents larger than 256 KiB', () => {
  /** The token is refused for the size, and the issuer could not send it all: Corridor stopped reading. */
  async function expectCutOff(created: Awaited<ReturnType<typeof createOauth>>, flood: FloodingIssuer) {
    await flood.closed;
    expect(flood.finished).toBe(false);
    expect(flood.sent).toBeLessThan(FLOOD_BYTES);
    expectRefused(created, 401, 'UNAUTHORIZED', 'Invalid OIDC token');
    expect(created.body.message).toMatch(/answered more than 262144 bytes$/);
  }

  it('stops reading a discovery document past the cap', async () => {
    const flood = await startFloodingIssuer();
    try {
      const sandbox = await walletPlatform(t, 'SANDBOX', { oidcIssuers: [{ issuer: flood.url, audiences: [AUDIENCE] }] });
      await expectCutOff(await createOauth(sandbox, await issuer.token({ iss: flood.url })), flood);
    } finally {
      await stopFlood(flood);
    }
  });

  it('refuses a discovery document at once when its Content-Length is past the cap', async () => {
    const flood = await startFloodingIssuer(true);
    try {
      const sandbox = await walletPlatform(t, 'SANDBOX', { oidcIssuers: [{ issuer: flood.url, audiences: [AUDIENCE] }] });
      await expectCutOff(await createOauth(sandbox, await issuer.token({ iss: flood.url })), flood);
    } finally {
      await stopFlood(flood);
    }
  });

  it('stops reading a JWKS past the cap', async () => {
    const flood = await startFloodingIssuer();
    try {
      const sandbox = await walletPlatform(t, 'SANDBOX', { oidcIssuers: [{ issuer: issuer.issuer, jwksUri: `${flood.url}/jwks`, audiences: [AUDIENCE] }] });
      await expectCutOff(await createOauth(sandbox, await issuer.token({ sub: 'flooded' })), flood);
    } finally {
      await stopFlood(flood);
    }
  });
});
