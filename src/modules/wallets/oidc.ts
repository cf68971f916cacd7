import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { fetchFor, guardRefusalOf, privateTargetsAllowed, readCapped, ResponseTooLargeError } from '../../core/outbound.js';
import { setBounded, singleFlight } from '../../core/collections.js';
import type { OidcIssuerSettings } from '../platform/embedded-wallets.js';

/** ID tokens must have been issued at most this long before the request (SPEC §8). */
export const MAX_TOKEN_AGE_SECONDS = 60;
const CLOCK_TOLERANCE_SECONDS = 5;
const DISCOVERY_TTL_MS = 3600_000;
const FETCH_TIMEOUT_MS = 5000;
/** Discovery documents and JWKS are a few KiB; the issuer is whoever a platform names, so the rest is refused unread. */
const MAX_ISSUER_DOCUMENT_BYTES = 256 * 1024;

/** Issuers a sandbox platform recognizes without configuration (their tokens are then only decoded). */
export const WELL_KNOWN_ISSUERS = ['https://accounts.google.com', 'https://appleid.apple.com', 'https://login.microsoftonline.com'];

/** The identity an OAUTH credential is bound to. */
export interface OidcIdentity {
  issuer: string;
  /** The audience a new credential is bound to: the first configured one the token carries. */
  audience: string;
  /** Every configured audience the token carries (a credential matches if its own is one). */
  audiences: string[];
  subject: string;
  email?: string;
}

export class OidcError extends Error {}

/** Claims of a structurally valid JWT (header.payload.signature), unverified; undefined when it is not one. */
export function decodeToken(token: string): JWTPayload | undefined {
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return undefined;
  try {
    decodeProtectedHeader(token);
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

function audiences(claims: JWTPayload): string[] {
  return typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
}

/** The identity in already-trusted claims, bound to the first configured audience the token carries. */
export function identityOf(claims: JWTPayload, allowedAudiences?: string[]): OidcIdentity {
  const aud = audiences(claims);
  const accepted = allowedAudiences ? allowedAudiences.filter((a) => aud.includes(a)) : aud;
  if (!claims.iss || !claims.sub || accepted.length === 0) throw new OidcError('the token lacks iss, sub or an accepted aud');
  const email = typeof claims.email === 'string' ? claims.email : undefined;
  return { issuer: claims.iss, audience: accepted[0], audiences: accepted, subject: claims.sub, ...(email && { email }) };
}

/** Whether production platforms' issuers may be on loopback or private addresses (OIDC_ALLOW_PRIVATE_ISSUERS). */
export interface OidcNetworkPolicy {
  allowPrivateIssuers: boolean;
}

/** The platform a token is verified for: sandbox platforms may use issuers on private addresses. */
type PlatformMode = { mode: 'SANDBOX' | 'PRODUCTION' };

/** Issuers (and key sets) remembered at once: platforms name their own, so the number is theirs to grow. */
const MAX_CACHED_ISSUERS = 1_000;

/**
 * fetch for an issuer's discovery document and JWKS: no redirect followed, and a 200 answer's
 * body read here, at most MAX_ISSUER_DOCUMENT_BYTES of it (jose's own fetch reads any size).
 */
function issuerFetch(allowPrivate: boolean): typeof fetch {
  const fetchImpl = fetchFor(allowPrivate);
  return (async (url: string | URL, init?: RequestInit) => {
    const response = await fetchImpl(url, { ...init, redirect: 'manual' });
    if (response.status !== 200) {
      await response.body?.cancel();
      return new Response(null, { status: response.status });
    }
    try {
      return new Response(await readCapped(response, MAX_ISSUER_DOCUMENT_BYTES), { status: 200 });
    } catch (error) {
      if (error instanceof ResponseTooLargeError) throw new OidcError(`${String(url)} answered more than ${error.limit} bytes`);
      throw error;
    }
  }) as typeof fetch;
}

/**
 * Verifies ID tokens against allow-listed issuers: signature with the issuer's JWKS (fetched
 * from `jwksUri` or its discovery document, cached), `iss`, `aud`, `exp`, and `iat` at most 60 s old.
 */
export function createOidcVerifier(policy: OidcNetworkPolicy) {
  const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
  const discovered = new Map<string, { jwksUri: string; expiresAtMs: number }>();
  // One fetch per issuer at a time, as jose does for a key set: parallel tokens wait for it.
  const discovering = singleFlight<string, string>();

  function discover(issuer: string, allowPrivate: boolean): Promise<string> {
    const hit = discovered.get(issuer);
    if (hit && hit.expiresAtMs > Date.now()) return Promise.resolve(hit.jwksUri);
    return discovering(`${allowPrivate}|${issuer}`, () => fetchDiscovery(issuer, allowPrivate));
  }

  async function fetchDiscovery(issuer: string, allowPrivate: boolean): Promise<string> {
    const url = new URL(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
    const response = await issuerFetch(allowPrivate)(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) throw new OidcError(`the issuer's discovery document answered HTTP ${response.status}`);
    const document = (await response.json().catch(() => ({}))) as { issuer?: string; jwks_uri?: string };
    if (document.issuer !== issuer || typeof document.jwks_uri !== 'string') throw new OidcError('the issuer\'s discovery document is not valid');
    setBounded(discovered, issuer, { jwksUri: document.jwks_uri, expiresAtMs: Date.now() + DISCOVERY_TTL_MS }, MAX_CACHED_ISSUERS);
    return document.jwks_uri;
  }

  async function keySet(settings: OidcIssuerSettings, platform: PlatformMode) {
    const allowPrivate = privateTargetsAllowed(platform, policy.allowPrivateIssuers);
    const uri = new URL(settings.jwksUri ?? (await discover(settings.issuer, allowPrivate)));
    // Per network policy too: a set keeps the fetch it was made with.
    const key = `${allowPrivate}|${uri.href}`;
    let set = keySets.get(key);
    if (!set) {
      set = createRemoteJWKSet(uri, { timeoutDuration: FETCH_TIMEOUT_MS, [customFetch]: issuerFetch(allowPrivate) });
      setBounded(keySets, key, set, MAX_CACHED_ISSUERS);
    }
    return set;
  }

  async function verify(token: string, settings: OidcIssuerSettings, platform: PlatformMode): Promise<OidcIdentity> {
    try {
      const { payload } = await jwtVerify(token, await keySet(settings, platform), {
        issuer: settings.issuer,
        audience: settings.audiences,
        maxTokenAge: MAX_TOKEN_AGE_SECONDS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['iat', 'sub', 'exp'],
      });
      return identityOf(payload, settings.audiences);
    } catch (error) {
      if (error instanceof OidcError) throw error;
      const refusal = guardRefusalOf(error);
      throw new OidcError(refusal ? `${refusal}, which production platforms may not use` : (error as Error).message);
    }
  }

  return { verify };
}

export type OidcVerifier = ReturnType<typeof createOidcVerifier>;
