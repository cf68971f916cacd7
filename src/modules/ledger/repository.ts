import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import type { WithDefault } from '../../db/schema.js';

export type LedgerAccountKind = 'CUSTOMER' | 'PLATFORM' | 'SYSTEM';

declare module '../../db/schema.js' {
  interface DB {
    ledger_accounts: {
      id: string;
      platform_id: string;
      currency: string;
      kind: LedgerAccountKind;
      code: string | null;
      no_balance_check: WithDefault<boolean>;
      posted_debits: WithDefault<number>;
      posted_credits: WithDefault<number>;
      pending_debits: WithDefault<number>;
      pending_credits: WithDefault<number>;
      created_at: Date;
      updated_at: Date;
    };
  }
}

export interface NewLedgerAccount {
  id: string;
  platformId: string;
  currency: string;
  kind: LedgerAccountKind;
  /** Names a SYSTEM account (settlement rail, FX liquidity, fees); unique per platform and currency. */
  code?: string;
  /** Lets the account go below zero (system accounts only). */
  noBalanceCheck?: boolean;
}

export interface LedgerBalance {
  /** Posted credits minus posted debits minus pending debits: what can be spent. */
  available: number;
  /** Posted credits minus posted debits. */
  posted: number;
  updatedAt: Date;
}

/**
 * One INSERT whatever the number of accounts: the columns travel as arrays, so opening a
 * currency for every customer of a platform stays one statement and never hits the
 * bind-parameter limit of a multi-row VALUES list.
 */
export async function insertAccounts(trx: Trx, accounts: NewLedgerAccount[], now: Date): Promise<void> {
  if (accounts.length === 0) return;
  await trx
    .insertInto('ledger_accounts')
    .columns(['id', 'platform_id', 'currency', 'kind', 'code', 'no_balance_check', 'created_at', 'updated_at'])
    .expression(
      sql`select t.id, t.platform_id, t.currency, t.kind, t.code, t.no_balance_check, ${now}::timestamptz, ${now}::timestamptz
          from unnest(
            ${accounts.map((a) => a.id)}::text[],
            ${accounts.map((a) => a.platformId)}::text[],
            ${accounts.map((a) => a.currency)}::text[],
            ${accounts.map((a) => a.kind)}::text[],
            ${accounts.map((a) => a.code ?? null)}::text[],
            ${accounts.map((a) => a.noBalanceCheck ?? false)}::boolean[]
          ) as t(id, platform_id, currency, kind, code, no_balance_check)`,
    )
    .execute();
}

export async function selectBalances(ex: Executor, ids: string[]): Promise<Map<string, LedgerBalance>> {
  const balances = new Map<string, LedgerBalance>();
  if (ids.length === 0) return balances;
  const { rows } = await sql<{ id: string; available: number; posted: number; updated_at: Date }>`
    select id,
           posted_credits - posted_debits - pending_debits as available,
           posted_credits - posted_debits as posted,
           updated_at
    from ledger_accounts
    where id = any(${ids}::text[])`.execute(ex);
  for (const row of rows) {
    balances.set(row.id, { available: Number(row.available), posted: Number(row.posted), updatedAt: row.updated_at });
  }
  return balances;
}

/**
 * Whether adding `deltas` (net posted credit per account) keeps every balance-checked account
 * within the balance limit (migration 0032's check, pending credits included).
 */
export async function fitsUnderLimit(ex: Executor, deltas: Map<string, number>): Promise<boolean> {
  if (deltas.size === 0) return true;
  const { rows } = await sql<{ id: string }>`
    select a.id from ledger_accounts a
    join unnest(${[...deltas.keys()]}::text[], ${[...deltas.values()]}::bigint[]) as d(id, delta) on d.id = a.id
    where not a.no_balance_check
      and a.posted_credits + a.pending_credits - a.posted_debits + d.delta > ${Number.MAX_SAFE_INTEGER}::bigint
    limit 1`.execute(ex);
  return rows.length === 0;
}

/** Creates a system account if it does not exist yet (concurrent callers are fine). */
export async function insertSystemAccount(
  ex: Executor,
  account: { id: string; platformId: string; currency: string; code: string },
  now: Date,
): Promise<void> {
  await ex
    .insertInto('ledger_accounts')
    .values({
      id: account.id,
      platform_id: account.platformId,
      currency: account.currency,
      kind: 'SYSTEM',
      code: account.code,
      no_balance_check: true,
      created_at: now,
      updated_at: now,
    })
    // No conflict target: a concurrent creation of the same account may surface on the primary
    // key or on the (platform, currency, code) index first; either way it already exists.
    .onConflict((oc) => oc.doNothing())
    .execute();
}
