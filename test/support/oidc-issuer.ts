import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import { exportJWK, SignJWT, type JWK } from 'jose';
import { generateEcKeyPair } from '../../src/core/ec-keys.js';

/**
 * A loopback OpenID Connect issuer for tests: serves its discovery document and JWKS on
 * 127.0.0.1 and mints ID tokens (ES256) with whatever claims a test needs.
 */
export interface TokenClaims {
  sub?: string;
  aud?: string | string[];
  email?: string;
  /** Seconds since the epoch; default now. */
  iat?: number;
  exp?: number;
  iss?: string;
}

export class OidcIssuer {
  issuer = '';
  jwksRequests = 0;
  private server?: Server;
  private key!: { privateKey: KeyObject; publicJwk: JWK };
  private readonly kid = `test-${Math.random().toString(36).slice(2)}`;

  static async start(): Promise<OidcIssuer> {
    const issuer = new OidcIssuer();
    const { privateKey, publicKey } = generateEcKeyPair('P-256');
    issuer.key = { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: issuer.kid, alg: 'ES256', use: 'sig' } };
    issuer.server = createServer((request, response) => issuer.handle(request.url ?? '/', response));
    await new Promise<void>((resolve) => issuer.server!.listen(0, '127.0.0.1', resolve));
    issuer.issuer = `http://127.0.0.1:${(issuer.server!.address() as AddressInfo).port}`;
    return issuer;
  }

  get jwksUri(): string {
    return `${this.issuer}/jwks`;
  }

  private handle(url: string, response: import('node:http').ServerResponse): void {
    const send = (body: unknown): void => void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url === '/.well-known/openid-configuration') return send({ issuer: this.issuer, jwks_uri: this.jwksUri, id_token_signing_alg_values_supported: ['ES256'] });
    if (url === '/jwks') {
      this.jwksRequests++;
      return send({ keys: [this.key.publicJwk] });
    }
    response.writeHead(404).end();
  }

  /** An ID token signed by this issuer (or by `signWith`, a key it does not publish). */
  async token(claims: TokenClaims = {}, signWith?: KeyObject): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const iat = claims.iat ?? now;
    return new SignJWT({ ...(claims.email !== undefined && { email: claims.email }) })
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: 'JWT' })
      .setIssuer(claims.iss ?? this.issuer)
      .setSubject(claims.sub ?? 'user-1')
      .setAudience(claims.aud ?? 'corridor-test-client')
      .setIssuedAt(iat)
      .setExpirationTime(claims.exp ?? iat + 600)
      .sign(signWith ?? this.key.privateKey);
  }

  /** A key this issuer does not publish: tokens signed with it must be refused. */
  static async foreignKey(): Promise<KeyObject> {
    return generateEcKeyPair('P-256').privateKey;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
