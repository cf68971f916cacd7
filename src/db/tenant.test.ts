import { sql, type Compilable } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import { statusUpdate } from '../modules/transactions/repository.js';
import type { Database, Trx } from './database.js';
import { ofPlatform } from './tenant.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

/** EXECUTE takes no bind parameters: its arguments are written as literals. */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `array[${value.map(literal).join(', ')}]`;
  if (value instanceof Date) return `'${value.toISOString()}'`;
  return `'${String(value).replaceAll("'", "''")}'`;
}

/**
 * The generic plan (the one a prepared statement keeps) of `query` against an empty, never
 * analyzed copy of `table`: where every index that starts with platform_id is costed at one row,
 * like the primary key (sequential scans off: only the choice between indexes is left).
 */
async function genericPlanOnEmpty(table: string, query: (trx: Trx) => Compilable): Promise<string> {
  return database.db.transaction().execute(async (trx) => {
    await sql`${sql.raw(`create temp table ${table} (like public.${table} including indexes) on commit drop`)}`.execute(trx);
    await sql`set local plan_cache_mode = force_generic_plan`.execute(trx);
    await sql`set local enable_seqscan = off`.execute(trx);
    const compiled = query(trx).compile();
    await sql`${sql.raw(`prepare tenant_plan as ${compiled.sql}`)}`.execute(trx);
    const args = compiled.parameters.map(literal).join(', ');
    const { rows } = await sql<Record<string, string>>`${sql.raw(`explain execute tenant_plan(${args})`)}`.execute(trx);
    await sql`deallocate tenant_plan`.execute(trx);
    return rows.map((r) => Object.values(r)[0]).join('\n');
  });
}

it('a row looked up by key within its platform is found through the key, whatever the statistics say', async () => {
  const now = new Date();
  for (const ids of [['Transaction:1'], ['Transaction:1', 'Transaction:2']]) {
    const plan = await genericPlanOnEmpty('transactions', (trx) => statusUpdate(trx, 'Platform:1', ids, ['PENDING'], 'PROCESSING', {}, now));
    expect(plan).toMatch(/Index Cond: \(id = /);
    expect(plan).not.toMatch(/Index Cond: \(+platform_id/);
  }
  const customer = await genericPlanOnEmpty('customers', (trx) => trx.selectFrom('customers').select('id').where('id', '=', 'Customer:1').where(ofPlatform('Platform:1')));
  expect(customer).toMatch(/Index Cond: \(id = /);
  expect(customer).not.toMatch(/Index Cond: \(+platform_id/);
});
