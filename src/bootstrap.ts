import type { Database } from './db/database.js';
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
  return transact(database.db, async (trx) => {
    const platform = await services.platforms.create(input, trx);
    const token = await services.tokens.issue(trx, platform, { name: `${input.name} default token`, permissions: ALL_PERMISSIONS }, preset);
    return { platform, token };
  });
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
  if (env.tokenId && env.clientSecret) {
    const platformId = await services.tokens.ensureSecret(env.tokenId, env.clientSecret);
    if (platformId) return { kind: 'configured', platformId, clientId: env.tokenId };
    const preset = { clientId: env.tokenId, clientSecret: env.clientSecret };
    const platforms = await services.platforms.list();
    if (platforms.length === 1 && platforms[0].mode === 'SANDBOX') {
      // The platform an earlier start created: pinning credentials later keeps what it holds.
      const [platform] = platforms;
      await transact(database.db, (trx) => services.tokens.issue(trx, platform, { name: 'Pinned sandbox token', permissions: ALL_PERMISSIONS }, preset));
      return { kind: 'configured', platformId: platform.id, clientId: env.tokenId };
    }
    const credentials = await createPlatformWithToken(services, { name: 'Sandbox', mode: 'SANDBOX' }, database, preset);
    return { kind: 'created', credentials };
  }
  const platforms = await services.platforms.list();
  if (platforms.length > 0) return { kind: 'existing', platforms };
  return { kind: 'created', credentials: await createPlatformWithToken(services, { name: 'Sandbox', mode: 'SANDBOX' }, database) };
}
