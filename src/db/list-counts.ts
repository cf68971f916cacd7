import { sql } from 'kysely';
import type { Executor } from './database.js';

declare module './schema.js' {
  interface DB {
    list_counts: { platform_id: string; list: ListName; shard: number; n: number };
  }
}

/** The lists whose totals triggers maintain (migrations 0019 and 0039). */
export type ListName =
  | 'customers:active'
  | 'customers:deleted'
  | 'transactions'
  | 'internal-accounts:customers'
  | 'internal-accounts:platform'
  | 'external-accounts:customers'
  | 'external-accounts:platform'
  | 'documents'
  | 'verifications';

/**
 * The maintained total of an unfiltered list (of several, added up), as a one-row query of `n`:
 * what `keysetPage` otherwise counts row by row. Only for a list with no filter but the platform's own.
 */
export function maintainedCount(ex: Executor, platformId: string, ...lists: ListName[]) {
  return ex
    .selectFrom('list_counts')
    .select(sql<number>`coalesce(sum(n), 0)::int`.as('n'))
    .where('platform_id', '=', platformId)
    .where('list', 'in', lists);
}
