import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { DB, Executor, Trx } from '../../db/database.js';
import { toJson } from '../../db/database.js';
import type { Json } from '../../db/schema.js';
import type { EmbeddedWalletSettings } from './embedded-wallets.js';
import type { CurrencyConfigInput, FeeSchedule } from './schemas.js';

declare module '../../db/schema.js' {
  interface DB {
    platforms: {
      id: string;
      config_id: string;
      name: string;
      mode: 'SANDBOX' | 'PRODUCTION';
      is_regulated_financial_institution: boolean;
      uma_domain: string;
      proxy_uma_subdomain: string | null;
      webhook_endpoint: string | null;
      supported_currencies: Json<CurrencyConfigInput[]>;
      fees: Json<FeeSchedule>;
      embedded_wallets: Json<EmbeddedWalletSettings>;
      clock_offset_ms: number;
      created_at: Date;
      updated_at: Date;
    };
  }
}

export interface Platform {
  id: string;
  configId: string;
  name: string;
  mode: 'SANDBOX' | 'PRODUCTION';
  isRegulatedFinancialInstitution: boolean;
  umaDomain: string;
  proxyUmaSubdomain: string | null;
  webhookEndpoint: string | null;
  supportedCurrencies: CurrencyConfigInput[];
  fees: FeeSchedule;
  embeddedWallets: EmbeddedWalletSettings;
  clockOffsetMs: number;
  createdAt: Date;
  updatedAt: Date;
}

type Row = Selectable<DB['platforms']>;

function toPlatform(row: Row): Platform {
  return {
    id: row.id,
    configId: row.config_id,
    name: row.name,
    mode: row.mode,
    isRegulatedFinancialInstitution: row.is_regulated_financial_institution,
    umaDomain: row.uma_domain,
    proxyUmaSubdomain: row.proxy_uma_subdomain,
    webhookEndpoint: row.webhook_endpoint,
    supportedCurrencies: row.supported_currencies,
    fees: row.fees,
    embeddedWallets: row.embedded_wallets,
    clockOffsetMs: row.clock_offset_ms,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function insertPlatform(trx: Trx, p: Platform): Promise<void> {
  await trx
    .insertInto('platforms')
    .values({
      id: p.id,
      config_id: p.configId,
      name: p.name,
      mode: p.mode,
      is_regulated_financial_institution: p.isRegulatedFinancialInstitution,
      uma_domain: p.umaDomain,
      proxy_uma_subdomain: p.proxyUmaSubdomain,
      webhook_endpoint: p.webhookEndpoint,
      supported_currencies: toJson(p.supportedCurrencies),
      fees: toJson(p.fees),
      embedded_wallets: toJson(p.embeddedWallets),
      clock_offset_ms: p.clockOffsetMs,
      created_at: p.createdAt,
      updated_at: p.updatedAt,
    })
    .execute();
}

export async function findPlatform(ex: Executor, id: string, lock = false): Promise<Platform | undefined> {
  let query = ex.selectFrom('platforms').selectAll().where('id', '=', id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? toPlatform(row) : undefined;
}

export async function listPlatforms(ex: Executor): Promise<Platform[]> {
  const rows = await ex.selectFrom('platforms').selectAll().orderBy('created_at').execute();
  return rows.map(toPlatform);
}

/** Serializes claims of one UMA domain until the transaction ends. */
export async function lockUmaDomain(trx: Trx, domain: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${'uma-domain:' + domain}))`.execute(trx);
}

export async function otherPlatformOnUmaDomain(ex: Executor, platformId: string, domain: string): Promise<boolean> {
  const row = await ex
    .selectFrom('platforms')
    .select('id')
    .where(sql<string>`lower(uma_domain)`, '=', domain)
    .where('id', '<>', platformId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function updatePlatformConfig(
  trx: Trx,
  id: string,
  patch: Partial<Pick<Platform, 'umaDomain' | 'proxyUmaSubdomain' | 'webhookEndpoint' | 'supportedCurrencies' | 'fees' | 'embeddedWallets'>>,
  updatedAt: Date,
): Promise<Platform> {
  const row = await trx
    .updateTable('platforms')
    .set({
      ...(patch.umaDomain !== undefined && { uma_domain: patch.umaDomain }),
      ...(patch.proxyUmaSubdomain !== undefined && { proxy_uma_subdomain: patch.proxyUmaSubdomain }),
      ...(patch.webhookEndpoint !== undefined && { webhook_endpoint: patch.webhookEndpoint }),
      ...(patch.supportedCurrencies !== undefined && { supported_currencies: toJson(patch.supportedCurrencies) }),
      ...(patch.fees !== undefined && { fees: toJson(patch.fees) }),
      ...(patch.embeddedWallets !== undefined && { embedded_wallets: toJson(patch.embeddedWallets) }),
      updated_at: updatedAt,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toPlatform(row);
}

export async function addClockOffset(trx: Trx, id: string, ms: number): Promise<Platform> {
  const row = await trx
    .updateTable('platforms')
    .set((eb) => ({ clock_offset_ms: eb('clock_offset_ms', '+', ms) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toPlatform(row);
}
