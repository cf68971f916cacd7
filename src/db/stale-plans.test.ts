import { sql, type Kysely } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from './database.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

// A migration that changes a column's type while a server runs (an operator migrating before
// stopping every old process): each connection's prepared statement of that table then failed
// on every call, `cached plan must not change result type`, for as long as the connection lived.
it('a statement prepared before its table changed type works again after one failure on its connection', async () => {
  await database.db.connection().execute(async (conn) => {
    await sql`create temp table stale_plan (a int)`.execute(conn);
    await sql`insert into stale_plan values (1)`.execute(conn);
    const read = () =>
      (conn as unknown as Kysely<any>)
        .selectFrom('stale_plan')
        .select('a')
        .where('a', '=', 1)
        .execute()
        .then((rows) => rows.length, (error: { code?: string }) => error.code);
    expect([await read(), await read()]).toEqual([1, 1]);
    await sql`alter table stale_plan alter column a type bigint`.execute(conn);
    const outcomes = [await read(), await read(), await read()];
    expect(outcomes.slice(1)).toEqual([1, 1]);
    await sql`drop table stale_plan`.execute(conn);
  });
});
