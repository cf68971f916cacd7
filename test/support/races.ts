import type { CompiledQuery, KyselyPlugin } from 'kysely';
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

/**
 * Runs `between` once, right after the first query whose SQL and parameters `matches` returns
 * and before its caller sees the result, in transactions as well. Places another request exactly
 * between a read and the write it decides. A query outside a transaction has its connection back
 * in the pool first (so that `between` may use it, as PGlite's only one); one in a transaction
 * holds it, as the transaction does anyway. Returns `restore`, which removes the hook.
 */
export function afterQuery(t: TestApp, matches: (sql: string, parameters: readonly unknown[]) => boolean, between: () => Promise<void>) {
  const executor = t.corridor.database.db.getExecutor();
  const patchable = executor as unknown as { executeQuery: (query: CompiledQuery) => Promise<unknown> };
  const matched = new WeakSet<object>();
  const outsideTransactions = new WeakSet<object>();
  let fired = false;
  async function fire(queryId: object) {
    if (fired || !matched.has(queryId)) return;
    fired = true;
    await between();
  }
  // Transactions run on copies of the executor, which keep its plugins but not this method.
  const original = patchable.executeQuery;
  patchable.executeQuery = async function (this: unknown, query: CompiledQuery) {
    outsideTransactions.add(query.queryId);
    const result = await original.call(this, query);
    await fire(query.queryId);
    return result;
  };
  const hook: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      if (!fired) {
        const { sql, parameters } = executor.compileQuery(node, queryId);
        if (matches(sql, parameters)) matched.add(queryId);
      }
      return node;
    },
    async transformResult({ result, queryId }) {
      if (!outsideTransactions.has(queryId)) await fire(queryId);
      return result;
    },
  };
  const plugins = executor.plugins as KyselyPlugin[];
  plugins.push(hook);
  return {
    fired: () => fired,
    restore: () => {
      plugins.splice(plugins.indexOf(hook), 1);
      patchable.executeQuery = original;
    },
  };
}

/** `request`'s answer if it comes within `ms`, else undefined (it goes on; await it later). */
export async function answerWithin<T>(request: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([request, late]);
  } finally {
    clearTimeout(timer);
  }
}
