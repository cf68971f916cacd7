import { sql } from 'kysely';
import type { Database, Executor, Trx } from './db/database.js';
import type { Services } from './services.js';
import type { ApiTokenView, Permission } from './modules/tokens/schemas.js';
import type { NewPlatform, Platform } from './modules/platform/service.js';
import { transact } from './db/transact.js';

export interface PlatformCredentials {
  platform: Platform;
  token: ApiTokenView;
}

const ALL_PERMISSIONS: Permission[] = ['VIEW', 'TRANSACT', 'MANAGE'];

/** Creates a platform and its first API token (all permissions) in one transaction. */
export async function createPlatformWithToken(
  services: Services,
  input: NewPlatform,
  database: Database,
  preset?: { clientId: string; clientSecret: string },
): Promise<PlatformCredentials> {
  return transact(database.db, (trx) => createWithToken(services, trx, input, preset));
}

async function createWithToken(services: Services, trx: Trx, input: NewPlatform, preset?: { clientId: string; clientSecret: string }): Promise<PlatformCredentials> {
  const platform = await services.platforms.create(input, trx);
  const token = await services.tokens.issue(trx, platform, { name: `${input.name} default token`, permissions: ALL_PERMISSIONS }, preset);
  return { platform, token };
}

export type SandboxBootstrap =
  | { kind: 'created'; credentials: PlatformCredentials }
  | { kind: 'configured'; platformId: string; clientId: string }
  | { kind: 'existing'; platforms: Platform[] };

/**
 * Start-up's platform check. With SERVICE_SANDBOX_TOKEN_ID/SECRET set, a sandbox platform
 * authenticated by exactly those credentials exists afterwards: the token is added to the only
 * platform when the database holds just one, a sandbox platform, and otherwise comes with a new
 * sandbox platform; its secret is realigned if it changed. Without them, a first start creates a
 * sandbox platform with fresh credentials.
 */
export async function ensureSandboxPlatform(
  services: Services,
  database: Database,
  env: { tokenId?: string; clientSecret?: string },
): Promise<SandboxBootstrap> {
  const settled = await alreadySet(services, database.db, env);
  if (settled) return settled;
  // Servers starting together on an empty database take turns: the first creates the platform,
  // the others find it when they check again after its commit.
  return transact(database.db, async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended('corridor:sandbox-bootstrap', 0))`.execute(trx);
    return (await alreadySet(services, trx, env)) ?? (await setUp(services, trx, env));
  });
}

/** What start-up finds when there is nothing to create. */
async function alreadySet(services: Services, ex: Executor, env: { tokenId?: string; clientSecret?: string }): Promise<SandboxBootstrap | undefined> {
  if (env.tokenId && env.clientSecret) {
    const platformId = await services.tokens.ensureSecret(env.tokenId, env.clientSecret, ex);
    return platformId ? { kind: 'configured', platformId, clientId: env.tokenId } : undefined;
  }
  const platforms = await services.platforms.list(ex);
  return platforms.length > 0 ? { kind: 'existing', platforms } : undefined;
}

async function setUp(services: Services, trx: Trx, env: { tokenId?: string; clientSecret?: string }): Promise<SandboxBootstrap> {
  if (!env.tokenId || !env.clientSecret) return { kind: 'created', credentials: await createWithToken(services, trx, { name: 'Sandbox', mode: 'SANDBOX' }) };
  const preset = { clientId: env.tokenId, clientSecret: env.clientSecret };
  const platforms = await services.platforms.list(trx);
  if (platforms.length === 1 && platforms[0].mode === 'SANDBOX') {
    // The only platform, a sandbox one (usually an earlier start's): pinning credentials later keeps what it holds.
    const [platform] = platforms;
    await services.tokens.issue(trx, platform, { name: 'Pinned sandbox token', permissions: ALL_PERMISSIONS }, preset);
    return { kind: 'configured', platformId: platform.id, clientId: env.tokenId };
  }
  return { kind: 'created', credentials: await createWithToken(services, trx, { name: 'Sandbox', mode: 'SANDBOX' }, preset) };
}
