import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { findCurrency } from '../../core/currencies.js';
import type { Database } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import * as repo from './repository.js';
import type { UmaProviderListQuery, UmaProviderView } from './schemas.js';
import { SANDBOX_CURRENCIES, SANDBOX_PROVIDER_NAME, SANDBOX_REGIONS } from './sandbox.js';

/**
 * The counterparty providers a platform knows: every UMA domain it looked up successfully or
 * received a payment request from, and (sandbox platforms) the sandbox domain. Corridor keeps no
 * allow list, so every provider is allowed (`allowListStatus: true`).
 */
export function createProviderBook(deps: { database: Database; clock: Clock; log?: Logger; sandboxDomain: string }) {
  const { database, clock } = deps;
  const sandboxListed = new Set<string>();

  /** Records a sighting; a failure here is logged, never allowed to fail the payment that caused it. */
  async function seen(platform: PlatformRef, domain: string, currencies: string[]): Promise<void> {
    try {
      await repo.upsertProvider(database.db, { platformId: platform.id, domain, name: domain, supportedRegions: [], currencies }, clock.now(platform));
    } catch (error) {
      deps.log?.warn({ err: error, domain }, 'could not record an UMA provider');
    }
  }

  async function ensureSandbox(platform: PlatformRef): Promise<void> {
    if (platform.mode !== 'SANDBOX' || sandboxListed.has(platform.id)) return;
    const sighting = {
      platformId: platform.id,
      domain: deps.sandboxDomain,
      name: SANDBOX_PROVIDER_NAME,
      supportedRegions: SANDBOX_REGIONS,
      currencies: SANDBOX_CURRENCIES,
    };
    await repo.upsertProvider(database.db, sighting, clock.now(platform));
    sandboxListed.add(platform.id);
  }

  function present(row: { id: string; name: string; supported_regions: string[]; currency_codes: string[] }): UmaProviderView {
    return {
      name: row.name,
      domain: row.id,
      ...(row.supported_regions.length > 0 && { supportedRegions: row.supported_regions }),
      supportedCurrencies: row.currency_codes.map((code) => findCurrency(code)).filter((c) => c !== undefined),
      allowListStatus: true,
    };
  }

  /** GET /uma-providers. `hasBlockedProviders` changes nothing: no provider is blocked. */
  async function list(ctx: ServiceContext, query: UmaProviderListQuery): Promise<Page<UmaProviderView>> {
    await ensureSandbox(ctx.platform);
    const page = await repo.listProviders(database.db, ctx.platform.id, query);
    return { data: page.rows.map(present), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  return { seen, list };
}

export type ProviderBook = ReturnType<typeof createProviderBook>;
