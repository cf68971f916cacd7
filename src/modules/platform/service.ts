import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError, type FieldError } from '../../core/errors.js';
import { isCurrencyCode } from '../../core/currencies.js';
import { newId } from '../../core/ids.js';
import { shiftPlatformJobs } from '../../core/jobs.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import { DEFAULT_CURRENCIES, DEFAULT_FEES, defaultCurrencyConfig, presentCurrencyConfig } from './currency-defaults.js';
import { DEFAULT_EMBEDDED_WALLETS, mergeEmbeddedWallets, validateEmbeddedWallets } from './embedded-wallets.js';
import { refusePrivateTargets, type PrivateTargetPolicy } from './private-targets.js';
import * as repo from './repository.js';
import type { Platform } from './repository.js';
import type { CurrencyConfigInput, CurrencyConfigUpdate, FeeSchedule, PlatformConfigUpdate, PlatformConfigView } from './schemas.js';
import { transact } from '../../db/transact.js';

export type { Platform } from './repository.js';

/** Things other domains do when a platform appears or gains currencies (wired in the composition root). */
export interface PlatformHooks {
  platformCreated: Array<(trx: Trx, platform: Platform) => Promise<void>>;
  currenciesAdded: Array<(trx: Trx, platform: Platform, codes: string[]) => Promise<void>>;
  /** Currencies added to `embeddedWallets.currencies`: every customer gets a wallet in them. */
  walletCurrenciesAdded: Array<(trx: Trx, platform: Platform, codes: string[]) => Promise<void>>;
}

export interface PlatformServiceDeps {
  database: Database;
  clock: Clock;
  /** Host (and port) used as the UMA domain of platforms that do not set their own. */
  defaultUmaDomain: string;
  /** Runs the platform's jobs that are due, those the poller is running included (the job runner's `runDueSettled`). */
  runDueJobs: (platformId: string) => Promise<number>;
  /** Public key that signs wallet export bundles (shown in `embeddedWallets`). */
  exportSignerPublicKey?: string;
  /** Which targets of production platforms may be private addresses (sandbox platforms' always may). */
  privateTargets: PrivateTargetPolicy;
}

export interface NewPlatform {
  name: string;
  mode: 'SANDBOX' | 'PRODUCTION';
  isRegulatedFinancialInstitution?: boolean;
  umaDomain?: string;
  currencies?: string[];
}

const CACHE_TTL_MS = 1000;

export function createPlatformService(deps: PlatformServiceDeps) {
  const { database, clock } = deps;
  const hooks: PlatformHooks = { platformCreated: [], currenciesAdded: [], walletCurrenciesAdded: [] };
  const cache = new Map<string, { platform: Platform; expiresAtMs: number }>();

  function remember(platform: Platform): Platform {
    cache.set(platform.id, { platform, expiresAtMs: clock.realNowMs() + CACHE_TTL_MS });
    return platform;
  }

  async function create(input: NewPlatform, trx?: Trx): Promise<Platform> {
    const work = async (t: Trx) => {
      const now = new Date(clock.realNowMs());
      const platform: Platform = {
        id: newId('Platform'),
        configId: newId('PlatformConfig'),
        name: input.name,
        mode: input.mode,
        isRegulatedFinancialInstitution: input.isRegulatedFinancialInstitution ?? false,
        umaDomain: input.umaDomain ?? deps.defaultUmaDomain,
        proxyUmaSubdomain: null,
        webhookEndpoint: null,
        supportedCurrencies: (input.currencies ?? DEFAULT_CURRENCIES).map(defaultCurrencyConfig),
        fees: DEFAULT_FEES,
        embeddedWallets: DEFAULT_EMBEDDED_WALLETS,
        clockOffsetMs: 0,
        createdAt: now,
        updatedAt: now,
      };
      await repo.insertPlatform(t, platform);
      for (const hook of hooks.platformCreated) await hook(t, platform);
      return platform;
    };
    return trx ? work(trx) : transact(database.db, work);
  }

  /** The platform, from a cache that is at most a second old (changes made here evict at once). */
  async function get(id: string): Promise<Platform | undefined> {
    const hit = cache.get(id);
    if (hit && hit.expiresAtMs > clock.realNowMs()) return hit.platform;
    const platform = await repo.findPlatform(database.db, id);
    if (!platform) {
      cache.delete(id);
      return undefined;
    }
    return remember(platform);
  }

  /**
   * Brings the cached copy of a platform up to a clock offset just read from the database (offsets
   * only grow), so that what runs next here follows an advance another process made, without
   * waiting for the copy to expire.
   */
  function clockSeen(id: string, clockOffsetMs: number): void {
    const hit = cache.get(id);
    if (hit && hit.platform.clockOffsetMs < clockOffsetMs) cache.set(id, { ...hit, platform: { ...hit.platform, clockOffsetMs } });
  }

  function presentConfig(platform: Platform): PlatformConfigView {
    return {
      id: platform.configId,
      umaDomain: platform.umaDomain,
      ...(platform.proxyUmaSubdomain && { proxyUmaSubdomain: platform.proxyUmaSubdomain }),
      ...(platform.webhookEndpoint && { webhookEndpoint: platform.webhookEndpoint }),
      supportedCurrencies: platform.supportedCurrencies.map(presentCurrencyConfig),
      isRegulatedFinancialInstitution: platform.isRegulatedFinancialInstitution,
      fees: platform.fees,
      embeddedWallets: { ...platform.embeddedWallets, ...(deps.exportSignerPublicKey && { exportSignerPublicKey: deps.exportSignerPublicKey }) },
      createdAt: platform.createdAt.toISOString(),
      updatedAt: platform.updatedAt.toISOString(),
    };
  }

  /**
   * A UMA domain is one VASP, so a platform may take only a domain no other platform has: the
   * oldest platform on a domain receives its payments, and an older one would otherwise take
   * another's. The shared default (the server's own host) stays open to all.
   */
  async function claimUmaDomain(trx: Trx, platformId: string, domain: string): Promise<void> {
    const wanted = domain.toLowerCase();
    if (wanted === deps.defaultUmaDomain.toLowerCase()) return;
    await repo.lockUmaDomain(trx, wanted);
    if (await repo.otherPlatformOnUmaDomain(trx, platformId, wanted)) {
      throw invalidInput('umaDomain', `another platform receives UMA payments on ${wanted}`, 'unique');
    }
  }

  async function updateConfig(ctx: ServiceContext<Platform>, patch: PlatformConfigUpdate): Promise<PlatformConfigView> {
    const supportedCurrencies = patch.supportedCurrencies && validateCurrencies(patch.supportedCurrencies);
    if (patch.fees) validateFees(patch.fees);
    const webhookEndpoint = patch.webhookEndpoint === undefined ? undefined : validateWebhookUrl(patch.webhookEndpoint);
    // DNS answers come before the transaction: no connection is held while resolving.
    await refusePrivateTargets(ctx.platform, patch, webhookEndpoint, deps.privateTargets);
    const updated = await ctx.tx(async (trx) => {
      const before = await repo.findPlatform(trx, ctx.platform.id, true);
      if (!before) throw new ServiceError('NOT_FOUND', 'platform not found');
      if (patch.umaDomain !== undefined && patch.umaDomain.toLowerCase() !== before.umaDomain.toLowerCase()) await claimUmaDomain(trx, before.id, patch.umaDomain);
      const embeddedWallets = patch.embeddedWallets && mergeEmbeddedWallets(before.embeddedWallets, patch.embeddedWallets);
      if (embeddedWallets || supportedCurrencies) {
        const supported = (supportedCurrencies ?? before.supportedCurrencies).map((c) => c.currencyCode);
        validateEmbeddedWallets(embeddedWallets ?? before.embeddedWallets, supported);
      }
      const after = await repo.updatePlatformConfig(
        trx,
        before.id,
        {
          umaDomain: patch.umaDomain?.toLowerCase(),
          proxyUmaSubdomain: patch.proxyUmaSubdomain,
          webhookEndpoint,
          supportedCurrencies,
          fees: patch.fees,
          embeddedWallets,
        },
        clock.now(before),
      );
      const had = new Set(before.supportedCurrencies.map((c) => c.currencyCode));
      const added = after.supportedCurrencies.map((c) => c.currencyCode).filter((code) => !had.has(code));
      if (added.length > 0) for (const hook of hooks.currenciesAdded) await hook(trx, after, added);
      const hadWallets = new Set(before.embeddedWallets.currencies);
      const addedWallets = after.embeddedWallets.currencies.filter((code) => !hadWallets.has(code));
      if (addedWallets.length > 0) for (const hook of hooks.walletCurrenciesAdded) await hook(trx, after, addedWallets);
      return presentConfig(after);
    });
    cache.delete(ctx.platform.id);
    return updated;
  }

  const clockState = (p: Platform, jobsRun: number) => ({ now: clock.now(p).toISOString(), offsetSeconds: p.clockOffsetMs / 1000, jobsRun });

  /**
   * Moves the clock, then runs what became due. The move commits with the Idempotency-Key's
   * record (provisionally, jobsRun 0): a retry after a crash while the jobs ran replays instead
   * of moving the clock again.
   */
  async function advanceClock(ctx: ServiceContext<Platform>, seconds: number) {
    const { platform } = ctx;
    if (platform.mode !== 'SANDBOX') {
      throw new ServiceError('SANDBOX_ONLY', 'the test clock exists only on sandbox platforms');
    }
    const ms = seconds * 1000;
    let advanced!: Platform;
    await ctx.tx(async (trx) => {
      advanced = await repo.addClockOffset(trx, platform.id, ms);
      await shiftPlatformJobs(trx, platform.id, ms);
      return clockState(advanced, 0);
    }, { provisional: true });
    remember(advanced);
    return clockState(advanced, await deps.runDueJobs(platform.id));
  }

  return {
    hooks,
    create,
    get,
    list: (ex: Executor = database.db) => repo.listPlatforms(ex),
    /** The platform as stored, read through `ex` (no cache): for decisions made inside a transaction. */
    read: (ex: Executor, id: string) => repo.findPlatform(ex, id),
    presentConfig,
    updateConfig,
    advanceClock,
    /** Drops the cached copy so the next read sees the database. */
    evict: (id: string) => cache.delete(id),
    clockSeen,
  };
}

export type PlatformService = ReturnType<typeof createPlatformService>;

const READ_ONLY_CURRENCY_FIELDS = ['providerRequiredCustomerFields', 'providerRequiredCounterpartyCustomerFields'] as const;

/** Whether two lists of field names hold the same names, in any order. */
function sameNames(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return [...a].sort().join() === [...b].sort().join();
}

/** Checks a new currency list and returns it as stored (without the read-only provider fields). */
function validateCurrencies(list: CurrencyConfigUpdate[]): CurrencyConfigInput[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const stored = list.map(({ providerRequiredCustomerFields, providerRequiredCounterpartyCustomerFields, ...entry }) => entry);
  list.forEach((entry, i) => {
    const at = `supportedCurrencies.${i}`;
    if (!isCurrencyCode(entry.currencyCode)) {
      errors.push({ field: `${at}.currencyCode`, constraint: 'currency', message: `${entry.currencyCode} is not a known currency code` });
    }
    if (seen.has(entry.currencyCode)) {
      errors.push({ field: `${at}.currencyCode`, constraint: 'unique', message: `${entry.currencyCode} is listed twice` });
    }
    seen.add(entry.currencyCode);
    if (entry.minAmount > entry.maxAmount) {
      errors.push({ field: `${at}.minAmount`, constraint: 'range', message: 'minAmount must not exceed maxAmount' });
    }
    if (new Set(entry.enabledTransactionTypes).size !== entry.enabledTransactionTypes.length) {
      errors.push({ field: `${at}.enabledTransactionTypes`, constraint: 'unique', message: 'transaction types must not repeat' });
    }
    const names = entry.requiredCounterpartyFields.map((f) => f.name);
    if (new Set(names).size !== names.length) {
      errors.push({ field: `${at}.requiredCounterpartyFields`, constraint: 'unique', message: 'field names must not repeat' });
    }
    const derived = presentCurrencyConfig(stored[i]);
    for (const field of READ_ONLY_CURRENCY_FIELDS) {
      if (entry[field] !== undefined && !sameNames(entry[field], derived[field])) {
        errors.push({ field: `${at}.${field}`, constraint: 'readOnly', message: `${field} is read-only: the payout provider sets it` });
      }
    }
  });
  if (errors.length > 0) {
    throw new ServiceError('INVALID_INPUT', errors[0].message, { details: { errors } });
  }
  return stored;
}

function validateFees(fees: FeeSchedule): void {
  const seen = new Set<string>();
  fees.fixedFees.forEach((fee, i) => {
    if (!isCurrencyCode(fee.currencyCode)) {
      throw invalidInput(`fees.fixedFees.${i}.currencyCode`, `${fee.currencyCode} is not a known currency code`, 'currency');
    }
    if (seen.has(fee.currencyCode)) {
      throw invalidInput(`fees.fixedFees.${i}.currencyCode`, `${fee.currencyCode} is listed twice`, 'unique');
    }
    seen.add(fee.currencyCode);
  });
}

/** Returns the URL to store (null to remove), or throws when it is not an absolute http(s) URL. */
function validateWebhookUrl(value: string): string | null {
  if (value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidInput('webhookEndpoint', 'webhookEndpoint must be an absolute URL', 'format');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidInput('webhookEndpoint', 'webhookEndpoint must use http or https', 'format');
  }
  if (url.username || url.password) {
    throw invalidInput('webhookEndpoint', 'webhookEndpoint must not embed credentials', 'format');
  }
  return url.toString();
}
