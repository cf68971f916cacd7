import type { FastifyInstance, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { ServiceError } from '../core/errors.js';
import { addressKey, createFailureLimiter } from '../core/failure-limiter.js';
import { CLIENT_ID_PATTERN } from '../core/secrets.js';
import { errors } from './common-schemas.js';
import { agentTokenIdOf } from '../modules/agents/access-tokens.js';
import type { Platform, PlatformService } from '../modules/platform/service.js';
import { grants, type Permission } from '../modules/tokens/schemas.js';
import type { TokenService } from '../modules/tokens/service.js';

/** Who is calling: a platform API token, or an agent acting for one customer. */
export type Principal =
  | { kind: 'token'; tokenId: string; permissions: Permission[] }
  | { kind: 'agent'; agentId: string; customerId: string };

export interface AgentAuthenticator {
  authenticate(accessToken: string): Promise<{ platformId: string; agentId: string; customerId: string; paused: boolean } | undefined>;
}

export type RouteAuth = 'basic' | 'agent' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Default `basic` for routes under the API prefix. */
    auth?: RouteAuth;
    /** Token permission the route needs; default VIEW for GET, MANAGE otherwise. */
    permission?: Permission;
  }
  interface FastifyRequest {
    platform: Platform;
    principal: Principal;
  }
}

/** The permissions of the calling token (none for an agent), for operations that delegate them. */
export function heldBy(request: FastifyRequest): readonly Permission[] {
  return request.principal.kind === 'token' ? request.principal.permissions : [];
}

/** An `Authorization: Basic` header's token id and secret, or undefined when it is not one. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header?.toLowerCase().startsWith('basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // An id that cannot be one of ours is malformed, and never reaches the database (which refuses NUL).
  return colon > 0 && CLIENT_ID_PATTERN.test(decoded.slice(0, colon)) ? { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) } : undefined;
}

/** The bearer token of an `Authorization: Bearer` header, or undefined. */
function bearerToken(header: string | undefined): string | undefined {
  return header?.toLowerCase().startsWith('bearer ') ? header.slice(7).trim() : undefined;
}

/** The scheme and id part of the request's credential (never its secret), or '-' when it names none. */
function credentialIdOf(header: string | undefined): string {
  const basicId = basicCredentials(header)?.id;
  if (basicId) return `basic ${basicId}`;
  const agentTokenId = agentTokenIdOf(bearerToken(header) ?? '');
  return agentTokenId ? `bearer ${agentTokenId.slice(0, 200)}` : '-';
}

/**
 * Whether the request offers the kind of credential the route takes. Only then is a refusal a
 * failed guess: a right platform secret sent to an agent route (or the other way round) is
 * refused without its secret being judged, and must not lock that credential out elsewhere.
 */
function offersRouteScheme(header: string | undefined, mode: 'basic' | 'agent'): boolean {
  return header?.toLowerCase().startsWith(mode === 'agent' ? 'bearer ' : 'basic ') ?? false;
}

/** Failed authentications a minute allowed from one address with one credential id. */
const FAILURES_PER_CREDENTIAL = 20;

function unauthorized(message: string): ServiceError {
  return new ServiceError('UNAUTHORIZED', message, { headers: { 'www-authenticate': 'Basic realm="corridor"' } });
}

export function installAuth(
  app: FastifyInstance,
  deps: { tokens: TokenService; platforms: PlatformService; agents?: () => AgentAuthenticator | undefined },
): void {
  // Failures count per address and credential id: guessing one token's secret is stopped, while
  // a client that shares the address (behind a proxy) but uses another token is not locked out.
  // Only credentials of the route's kind count (offersRouteScheme). A second count per address
  // alone, five times higher, stops one address from trying many credential ids (spraying): one
  // broken client adds at most its own limit a minute to it, so it takes several guessers to reach.
  const perCredential = createFailureLimiter({ limit: FAILURES_PER_CREDENTIAL, nowMs: () => Date.now(), what: 'authentication attempts' });
  const perAddress = createFailureLimiter({ limit: 5 * FAILURES_PER_CREDENTIAL, nowMs: () => Date.now(), what: 'authentication attempts from this address' });
  const keysOf = (request: FastifyRequest) => {
    const address = addressKey(request.ip);
    return { address, credential: `${address} ${credentialIdOf(request.headers.authorization)}` };
  };
  const check = (keys: { address: string; credential: string }) => {
    perCredential.check(keys.credential);
    perAddress.check(keys.address);
  };

  async function basic(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (!header?.toLowerCase().startsWith('basic ')) throw unauthorized('HTTP Basic credentials are required');
    const credentials = basicCredentials(header);
    if (!credentials) throw unauthorized('malformed Basic credentials');
    const token = await deps.tokens.authenticate(credentials.id, credentials.secret);
    if (!token) throw unauthorized('invalid client id or client secret');
    const platform = await deps.platforms.get(token.platformId);
    if (!platform) throw unauthorized('invalid client id or client secret');
    request.platform = platform;
    request.principal = { kind: 'token', tokenId: token.tokenId, permissions: token.permissions };
    const reading = request.method === 'GET' || request.method === 'HEAD';
    const needed = request.routeOptions.config.permission ?? (reading ? 'VIEW' : 'MANAGE');
    if (!grants(token.permissions, needed)) {
      throw new ServiceError('PERMISSION_DENIED', `this API token lacks the ${needed} permission`);
    }
  }

  async function bearer(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new ServiceError('UNAUTHORIZED', 'an agent access token is required (Authorization: Bearer …)');
    const authenticator = deps.agents?.();
    const agent = authenticator ? await authenticator.authenticate(token) : undefined;
    if (!agent) throw new ServiceError('UNAUTHORIZED', 'invalid or revoked agent access token');
    // A paused agent initiates nothing (SPEC 3.3) but may still follow what it started.
    if (agent.paused && request.method !== 'GET' && request.method !== 'HEAD') {
      throw new ServiceError('AGENT_PAUSED', 'this agent is paused; the platform can resume it with PATCH /agents/{agentId}');
    }
    const platform = await deps.platforms.get(agent.platformId);
    if (!platform) throw new ServiceError('UNAUTHORIZED', 'invalid or revoked agent access token');
    request.platform = platform;
    request.principal = { kind: 'agent', agentId: agent.agentId, customerId: agent.customerId };
  }

  app.addHook('onRequest', async (request) => {
    if (request.is404) return;
    const mode = request.routeOptions.config.auth ?? 'basic';
    if (mode === 'none') return;
    const keys = keysOf(request);
    check(keys);
    try {
      await (mode === 'agent' ? bearer(request) : basic(request));
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'UNAUTHORIZED' && offersRouteScheme(request.headers.authorization, mode)) {
        check(keys);
        perCredential.record(keys.credential);
        perAddress.record(keys.address);
      }
      throw error;
    }
    // Checked again once the outcome is known, in the same turn as the failures are counted:
    // attempts sent together all pass the first check, and without this one a burst would have
    // every guess answered, a right one included.
    check(keys);
  });
}

/**
 * For the OpenAPI document: every authenticated route of the API can answer 403 (the token lacks
 * the permission, or the agent's policy refuses) and 429 (too many failed authentications with
 * the caller's credential id, or of any, from its address), whether or not the route lists them.
 */
export function documentAuthErrors(schema: FastifySchema | undefined, route: RouteOptions, prefix: string): FastifySchema | undefined {
  const auth = (route.config as { auth?: RouteAuth } | undefined)?.auth ?? 'basic';
  if (!schema?.response || auth === 'none' || !route.url.startsWith(`${prefix}/`)) return schema;
  const { 403: forbidden, 429: limited } = errors(403, 429);
  return { ...schema, response: { 403: forbidden, 429: limited, ...(schema.response as object) } };
}
