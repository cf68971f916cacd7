import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { hashSecret, randomSecret, safeEqual } from '../../core/secrets.js';
import type { Database, Executor } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import * as repo from './repository.js';
import type { TokenRow } from './repository.js';
import { grants, type ApiTokenCreate, type ApiTokenView, type Permission, type TokenListQuery } from './schemas.js';

export interface AuthenticatedToken {
  tokenId: string;
  platformId: string;
  permissions: Permission[];
}

export interface TokenServiceDeps {
  database: Database;
  clock: Clock;
}

/** How long a verified credential is trusted without asking the database again. */
const AUTH_CACHE_TTL_MS = 1000;
const AUTH_CACHE_MAX = 10_000;

function present(row: TokenRow, clientSecret?: string): ApiTokenView {
  return {
    id: row.id,
    name: row.name,
    permissions: row.permissions,
    clientId: row.client_id,
    ...(clientSecret && { clientSecret }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function createTokenService({ database, clock }: TokenServiceDeps) {
  // clientId → the stored hash and grant, so authentication costs no round trip per request.
  const authCache = new Map<string, { row: TokenRow; expiresAtMs: number }>();
  // Counts invalidations: a row read while one happened may be the state before it, and is not cached.
  let invalidations = 0;
  function invalidate(clientId: string): void {
    invalidations++;
    authCache.delete(clientId);
  }

  async function issue(
    ex: Executor,
    platform: PlatformRef,
    input: ApiTokenCreate,
    preset?: { clientId: string; clientSecret: string },
  ): Promise<ApiTokenView> {
    const now = clock.now(platform);
    const clientSecret = preset?.clientSecret ?? randomSecret(24);
    const salt = randomSecret(16);
    const row: TokenRow = {
      id: newId('Token'),
      platform_id: platform.id,
      client_id: preset?.clientId ?? randomSecret(16),
      name: input.name,
      permissions: [...new Set(input.permissions)],
      secret_salt: salt,
      secret_hash: hashSecret(clientSecret, salt),
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await repo.insertToken(ex, row);
    return present(row, clientSecret);
  }

  async function authenticate(clientId: string, secret: string): Promise<AuthenticatedToken | undefined> {
    const nowMs = clock.realNowMs();
    let entry = authCache.get(clientId);
    if (!entry || entry.expiresAtMs <= nowMs) {
      const seen = invalidations;
      const row = await repo.findActiveByClientId(database.db, clientId);
      if (!row) {
        authCache.delete(clientId);
        return undefined;
      }
      if (authCache.size >= AUTH_CACHE_MAX) authCache.clear();
      entry = { row, expiresAtMs: nowMs + AUTH_CACHE_TTL_MS };
      if (invalidations === seen) authCache.set(clientId, entry);
    }
    const { row } = entry;
    if (!safeEqual(hashSecret(secret, row.secret_salt), row.secret_hash)) return undefined;
    return { tokenId: row.id, platformId: row.platform_id, permissions: row.permissions };
  }

  async function get(ctx: ServiceContext, id: string): Promise<ApiTokenView> {
    const row = await repo.findToken(database.db, ctx.platform.id, id);
    if (!row) throw new ServiceError('TOKEN_NOT_FOUND', 'token not found');
    return present(row);
  }

  async function list(ctx: ServiceContext, query: TokenListQuery): Promise<Page<ApiTokenView>> {
    const page = await repo.listTokens(database.db, ctx.platform.id, query);
    return { data: page.rows.map((r) => present(r)), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  async function remove(ctx: ServiceContext, id: string): Promise<void> {
    const clientId = await ctx.tx((trx) => repo.softDeleteToken(trx, ctx.platform.id, id, clock.now(ctx.platform)));
    if (!clientId) throw new ServiceError('TOKEN_NOT_FOUND', 'token not found');
    invalidate(clientId);
  }

  /**
   * Makes sure a token with this client id exists on a platform and accepts exactly this secret.
   * Returns the platform id, or undefined when no such token exists yet.
   */
  async function ensureSecret(clientId: string, clientSecret: string, ex: Executor = database.db): Promise<string | undefined> {
    const row = await repo.findActiveByClientId(ex, clientId);
    if (!row) return undefined;
    if (!safeEqual(hashSecret(clientSecret, row.secret_salt), row.secret_hash)) {
      const salt = randomSecret(16);
      await repo.replaceSecret(ex, row.id, salt, hashSecret(clientSecret, salt), new Date(clock.realNowMs()));
      invalidate(clientId);
    }
    return row.platform_id;
  }

  return {
    ensureSecret,
    /** Creates a token inside the caller's transaction (platform bootstrap uses preset credentials). */
    issue,
    /** POST /tokens: a token grants at most what the token creating it holds (`held`). */
    create: (ctx: ServiceContext, input: ApiTokenCreate, held: readonly Permission[]) => {
      const beyond = input.permissions.filter((p) => !grants(held, p));
      if (beyond.length > 0) {
        throw new ServiceError('PERMISSION_DENIED', `a token can grant only what the token creating it holds; this one lacks ${beyond.join(', ')}`, {
          details: { requiredPermissions: beyond },
        });
      }
      return ctx.tx((trx) => issue(trx, ctx.platform, input));
    },
    authenticate,
    get,
    list,
    remove,
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
