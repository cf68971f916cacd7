import { sql, type Kysely } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { rowsRead, sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from '../db/database.js';
import { keysetPage } from './pagination.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

// A generic plan costs `platform_id = $1` at an even share of the table. With one platform
// holding nearly every row, PostgreSQL switched the filtered list to a generic plan after a few
// calls for that platform (a scan of the table), and then served the small platform's list with it.
it("a filtered list's plan follows the platform it is for, not the calls for a bigger one before", async () => {
  await database.db.transaction().execute(async (trx) => {
    await sql`create temp table paged_items (id text primary key, platform_id text not null, status text not null, created_at timestamptz not null) on commit drop`.execute(trx);
    await sql`create index on paged_items (platform_id, created_at, id)`.execute(trx);
    await sql`insert into paged_items select 'B' || g, 'BIG', case when g % 2 = 0 then 'DONE' else 'OPEN' end, now() - g * interval '1 second' from generate_series(1, 20000) g`.execute(trx);
    await sql`insert into paged_items select 'S' || g, 'SMALL', 'DONE', now() - g * interval '1 second' from generate_series(1, 5) g`.execute(trx);
    await sql`analyze paged_items`.execute(trx);
    const list = (platform: string) =>
      keysetPage((trx as unknown as Kysely<any>).selectFrom('paged_items').selectAll().$castTo<{ id: string; created_at: Date }>().where('platform_id', '=', platform).where('status', '=', 'DONE'), { limit: 2 });

    for (let i = 0; i < 8; i++) expect((await list('BIG')).totalCount).toBe(10_000);
    const before = await rowsRead(trx, 'paged_items');
    const small = await list('SMALL');
    expect(small.totalCount).toBe(5);
    expect(small.rows.map((r) => r.id)).toEqual(['S1', 'S2']);
    expect((await rowsRead(trx, 'paged_items')) - before).toBeLessThan(100);
  });
});

it('an empty first page counts nothing; an empty page past a cursor still gives the total', async () => {
  await database.db.transaction().execute(async (trx) => {
    await sql`create temp table paged_items (id text primary key, platform_id text not null, created_at timestamptz not null) on commit drop`.execute(trx);
    await sql`insert into paged_items values ('A1', 'P', now())`.execute(trx);
    const items = (trx as unknown as Kysely<any>).selectFrom('paged_items').selectAll().$castTo<{ id: string; created_at: Date }>();
    expect(await keysetPage(items.where('platform_id', '=', 'Q'), {})).toEqual({ rows: [], hasMore: false, nextCursor: undefined, totalCount: 0 });
    const first = await keysetPage(items.where('platform_id', '=', 'P'), { limit: 1 });
    expect(first.rows).toHaveLength(1);
    const cursor = Buffer.from(JSON.stringify([first.rows[0].created_at.getTime(), first.rows[0].id])).toString('base64url');
    expect(await keysetPage(items.where('platform_id', '=', 'P'), { cursor })).toMatchObject({ rows: [], totalCount: 1 });
  });
});
