import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * The tenant guard of a row looked up by its primary key: `platform_id = $1`, written as an
 * expression no index can serve (`platform_id || ''`), so that the key is the only index the
 * query can use.
 *
 * With a plain `platform_id = $1`, every index that starts with platform_id is a candidate too.
 * Where statistics say the table is small (a fresh database, an ANALYZE taken before the load,
 * autovacuum off or not yet run), each candidate is costed at one row like the key, and the plan
 * may walk one of them through all of the platform's rows to find the one. A prepared statement
 * keeps its generic plan for the life of the connection, so the walk grows with the table: in a
 * bench run, every quote execution read all of the platform's transactions this way.
 */
export function ofPlatform(platformId: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`platform_id || '' = ${platformId}`;
}
