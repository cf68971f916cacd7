import { Type, type TSchema } from 'typebox';
import { sql, type SelectQueryBuilder } from 'kysely';
import { invalidInput } from '../core/errors.js';
import { literalLimit } from '../db/database.js';
import { PLANNED_PER_CALL } from '../db/plans.js';

/** Query parameters every paginated list accepts. */
export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Maximum number of items to return (1-100, default 20).' }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 512, description: 'Opaque cursor from the `nextCursor` of a previous page.' }),
  ),
};

/** The `{data, hasMore, nextCursor?, totalCount}` envelope of every paginated list. */
export function PageOf<T extends TSchema>(item: T, what: string) {
  return Type.Object({
    data: Type.Array(item, { description: `The ${what} on this page.` }),
    hasMore: Type.Boolean({ description: 'Whether more items exist after this page.' }),
    nextCursor: Type.Optional(Type.String({ description: 'Pass as `cursor` to get the next page; present only when `hasMore` is true.' })),
    totalCount: Type.Integer({ description: 'Number of items matching the filters, ignoring pagination.' }),
  });
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

const PAGING_KEYS: ReadonlySet<string> = new Set(['limit', 'cursor', 'sortOrder']);

/** Whether a list query sets nothing but paging keys (and `scope` keys): no filter narrows it. */
export function onlyPages(query: object, scope: readonly string[] = []): boolean {
  return Object.entries(query).every(([key, value]) => value === undefined || PAGING_KEYS.has(key) || scope.includes(key));
}

interface CursorPosition {
  createdAtMs: number;
  id: string;
}

function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAtMs, position.id])).toString('base64url');
}

// A position the database can compare: years 1 to 9999, and an id of printable ASCII, as ours are.
const FIRST_MS = Date.parse('0001-01-01T00:00:00Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');
const ID_SHAPE = /^[\x21-\x7e]{1,200}$/;

function decodeCursor(cursor: string): CursorPosition {
  try {
    const [createdAtMs, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const comparable = Number.isSafeInteger(createdAtMs) && createdAtMs >= FIRST_MS && createdAtMs <= LAST_MS;
    if (comparable && typeof id === 'string' && ID_SHAPE.test(id)) return { createdAtMs, id };
  } catch {
    // fall through
  }
  throw invalidInput('querystring.cursor', 'cursor is not one this API returned', 'format');
}

export interface KeysetOptions {
  limit?: number;
  cursor?: string;
  order?: 'asc' | 'desc';
  /** A one-row query of `n` giving the total, when something cheaper than counting the rows knows it. */
  total?: SelectQueryBuilder<any, any, { n: number }>;
  /** Column names (qualified when the query joins). */
  createdAtColumn?: string;
  idColumn?: string;
}

/**
 * Keyset pagination over (created_at, id), never OFFSET. `base` must select the row columns and
 * apply every filter; the total count rides along as a scalar subquery, so a page costs one
 * round trip. The count is `count(*)` over `base` unless `options.total` supplies a maintained one
 * (src/db/list-counts.ts) for an unfiltered list.
 */
export async function keysetPage<Row extends { created_at: Date; id: string }>(
  base: SelectQueryBuilder<any, any, Row>,
  options: KeysetOptions,
): Promise<{ rows: Row[]; hasMore: boolean; nextCursor?: string; totalCount: number }> {
  const limit = options.limit ?? 20;
  const order = options.order ?? 'desc';
  const createdAt = options.createdAtColumn ?? 'created_at';
  const id = options.idColumn ?? 'id';
  // A count of the filtered rows is planned for the platform's own numbers on every call (see
  // PLANNED_PER_CALL); a maintained total reads one row, and its list keeps its cached plan.
  const perCall = options.total === undefined;
  const counted = options.total ?? base.clearSelect().clearOrderBy().select(sql<number>`count(*)::int`.as('n')).modifyEnd(sql.raw(PLANNED_PER_CALL));

  let page = base.select(counted.as('__total_count') as any);
  if (options.cursor) {
    const at = decodeCursor(options.cursor);
    const op = order === 'asc' ? '>' : '<';
    page = page.where(sql<boolean>`(${sql.ref(createdAt)}, ${sql.ref(id)}) ${sql.raw(op)} (${new Date(at.createdAtMs)}, ${at.id})`);
  }
  page = page
    .orderBy(sql.ref(createdAt), order)
    .orderBy(sql.ref(id), order)
    .limit(literalLimit(limit + 1));
  if (perCall) page = page.modifyEnd(sql.raw(PLANNED_PER_CALL));
  const rows = (await page.execute()) as (Row & { __total_count: number })[];

  // An empty first page has nothing to count; past a cursor, the rows before it still count.
  const totalCount = rows.length > 0 ? rows[0].__total_count : options.cursor ? Number((await counted.executeTakeFirst())?.n ?? 0) : 0;
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  for (const row of pageRows) delete (row as Partial<typeof row>).__total_count;
  const last = pageRows[pageRows.length - 1];
  return {
    rows: pageRows,
    hasMore,
    nextCursor: hasMore && last ? encodeCursor({ createdAtMs: last.created_at.getTime(), id: last.id }) : undefined,
    totalCount,
  };
}
