import type { TestApp } from './app.js';

/**
 * Plays another writer that updates a customer's row right after each of the next `times` reads
 * of it as a remembered row (`rememberedRows`), i.e. between a request's read and its write: the
 * race the write's row-version check exists for, made deterministic.
 */
export function changeCustomerAfterReads(t: TestApp, customerId: string, times: number) {
  const { db } = t.corridor.database;
  const executor = db.getExecutor() as { executeQuery: (...args: any[]) => Promise<unknown> };
  const original = executor.executeQuery;
  let reads = 0;
  executor.executeQuery = async function (this: unknown, ...args: any[]) {
    const result = await original.apply(this, args);
    const query = args[0] as { sql: string; parameters: readonly unknown[] };
    const isRead = query.sql.includes('as row_version from "customers"') && query.parameters.includes(customerId);
    if (isRead && ++reads <= times) {
      await original.call(this, { ...query, sql: 'update customers set updated_at = updated_at where id = $1', parameters: [customerId] });
    }
    return result;
  };
  return { reads: () => reads, restore: () => void (executor.executeQuery = original) };
}
