import { sql, type Expression, type SqlBool } from 'kysely';
import { isUnmetExpectation, type Executor } from '../db/database.js';
import { ofPlatform } from '../db/tenant.js';
import { ServiceError } from './errors.js';

const MAX_ATTEMPTS = 3;

/**
 * The rows a write was decided on, each with the version it was read at (PostgreSQL's `xmin`,
 * which every update of a row changes). The write's statement finishes with
 * `corridor_expect(checks.holds())` and so refuses itself when one of them changed in between:
 * the rows can then come from this process's memory (`rememberedRows`) without a decision ever
 * resting on a stale one. A refusal made before the write (`withRowChecks`) is checked the other
 * way: when it rested on a remembered row, it is decided again from fresh reads.
 */
export class RowChecks {
  private readonly checks: Array<{ condition: Expression<SqlBool>; forget: () => void }> = [];
  private remembered = false;
  private written = false;

  /** `remembered`: the row came from memory, not from a read made for this decision. */
  add(condition: Expression<SqlBool>, forget: () => void, remembered: boolean): void {
    this.checks.push({ condition, forget });
    this.remembered ||= remembered;
  }

  /** True, inside the statement, while every row is still the version that was read. */
  holds(): Expression<SqlBool> {
    this.written = true;
    if (this.checks.length === 0) return sql<SqlBool>`true`;
    return sql<SqlBool>`(${sql.join(this.checks.map((c) => c.condition), sql` and `)})`;
  }

  /** Whether a refusal now, before the write was built, may rest on a remembered row. */
  refusalMayBeStale(): boolean {
    return this.remembered && !this.written;
  }

  /** Drops the remembered copies of the rows (after a refusal: at least one of them is stale). */
  forgetAll(): void {
    for (const check of this.checks) check.forget();
  }
}

/**
 * Runs `work` (reads, then a write that verifies `checks`) until its write is not refused for a
 * changed row: after a refusal the remembered rows are forgotten and `work` runs again from fresh
 * reads; after three refusals, 409 CONFLICT naming `what` was made. A service error thrown before
 * the write (a customer not yet verified, say) that rested on remembered rows is decided again
 * the same way, so that it never answers from a copy older than the database.
 */
export async function withRowChecks<T>(what: string, work: (checks: RowChecks) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const checks = new RowChecks();
    try {
      return await work(checks);
    } catch (error) {
      const changed = isUnmetExpectation(error);
      if (!changed && !(error instanceof ServiceError && checks.refusalMayBeStale())) throw error;
      checks.forgetAll();
      if (attempt < MAX_ATTEMPTS) continue;
      throw changed ? new ServiceError('CONFLICT', `the customer or the accounts of this ${what} kept changing while it was made; try again`) : error;
    }
  }
}

/** Rows of `table` (with `platform_id` and `id` columns) this process read, by tenant and id. Bounded. */
export function rememberedRows<T>(table: string, capacity = 10_000) {
  const rows = new Map<string, { value: T; version: string }>();

  async function read(ex: Executor, platformId: string, id: string) {
    const { rows: found } = await sql<T & { row_version: string }>`
      select *, xmin::text as row_version from ${sql.table(table)} where id = ${id} and ${ofPlatform(platformId)}`.execute(ex);
    if (!found[0]) return undefined;
    const { row_version, ...value } = found[0];
    return { value: value as T, version: row_version };
  }

  return {
    /**
     * The row, remembered or read now through `ex`; either way `checks` gets the condition that
     * it is still the version it was read at. Undefined (and nothing remembered) when there is
     * no such row.
     */
    async get(ex: Executor, platformId: string, id: string, checks: RowChecks): Promise<T | undefined> {
      const key = `${platformId}|${id}`;
      let row = rows.get(key);
      const remembered = row !== undefined;
      if (!row) {
        row = await read(ex, platformId, id);
        if (!row) return undefined;
        if (rows.size >= capacity) rows.delete(rows.keys().next().value!);
        rows.set(key, row);
      }
      const version = row.version;
      const unchanged = sql<SqlBool>`exists (select 1 from ${sql.table(table)} where id = ${id} and ${ofPlatform(platformId)} and xmin::text = ${version})`;
      checks.add(
        unchanged,
        () => {
          if (rows.get(key)?.version === version) rows.delete(key);
        },
        remembered,
      );
      return row.value;
    },
  };
}
