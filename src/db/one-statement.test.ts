import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import { isUnmetExpectation, type Database } from './database.js';
import { writeAsOne } from './one-statement.js';

let database: Database;
const table = sql.table('one_statement_probe');

beforeAll(async () => {
  database = await sharedTestDatabase();
  await sql`create table if not exists ${table} (id text primary key, n int not null check (n >= 0))`.execute(database.db);
});
afterAll(async () => {
  await sql`drop table if exists ${table}`.execute(database.db);
});

const insert = (id: string, n: number) => sql`insert into ${table} (id, n) values (${id}, ${n})`;
const ids = async () => (await sql<{ id: string }>`select id from ${table} order by id`.execute(database.db)).rows.map((r) => r.id);

describe('writeAsOne', () => {
  it('runs every write, with parameters numbered across them', async () => {
    await writeAsOne(database.db, [insert('a', 1), insert('b', 2), sql`update ${table} set n = ${5} where id = ${'x'}`]);
    await writeAsOne(database.db, [insert('c', 3)]);
    await writeAsOne(database.db, []);
    expect(await ids()).toEqual(['a', 'b', 'c']);
  });

  it('is atomic without a transaction: one failing write leaves none behind', async () => {
    await expect(writeAsOne(database.db, [insert('d', 1), insert('e', -1)])).rejects.toMatchObject({ code: '23514' });
    await expect(writeAsOne(database.db, [insert('f', 1), insert('a', 1)])).rejects.toMatchObject({ code: '23505' });
    expect(await ids()).toEqual(['a', 'b', 'c']);
  });

  it('lets later writes read a named clause, and a finishing corridor_expect refuse the whole statement', async () => {
    const claim = (id: string) => ({ as: 'claimed', query: sql`update ${table} set n = n + 1 where id = ${id} returning id` });
    const follow = sql`insert into ${table} (id, n) select id || '-next', 0 from claimed`;
    const expectClaimed = sql`select corridor_expect(exists (select 1 from claimed), 'nothing claimed')`;
    await writeAsOne(database.db, [claim('a'), follow], expectClaimed);
    expect(await ids()).toEqual(['a', 'a-next', 'b', 'c']);
    const refused = writeAsOne(database.db, [claim('nobody'), insert('g', 1)], expectClaimed);
    await expect(refused).rejects.toSatisfy(isUnmetExpectation);
    expect(await ids()).toEqual(['a', 'a-next', 'b', 'c']);
  });
});
