import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from './database.js';
import { writeAsOne } from './one-statement.js';
import { rowInsert } from './row-insert.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

const job = { platform_id: null, kind: 'row-insert.test', payload: '{"a":"it\'s"}', due_at: new Date('2030-01-02T03:04:05.678Z'), max_attempts: 3 };

it('compiles to the statement and parameters of Kysely\'s insert, leaving undefined columns to their defaults', () => {
  const { db } = database;
  for (const row of [job, { ...job, max_attempts: undefined }, { ...job, due_at: sql<Date>`now() + interval '1 day'` }]) {
    const built = db.insertInto('jobs').values(row).compile();
    const direct = sql`${rowInsert('jobs', row)}`.compile(db);
    expect(direct.sql).toBe(built.sql);
    expect(direct.parameters).toEqual(built.parameters);
  }
});

it('inserts the row, the column default where the value is undefined', async () => {
  await writeAsOne(database.db, [rowInsert('jobs', { ...job, max_attempts: undefined })]);
  const row = await database.db.selectFrom('jobs').selectAll().where('kind', '=', job.kind).executeTakeFirstOrThrow();
  expect(row).toMatchObject({ platform_id: null, payload: { a: "it's" }, due_at: job.due_at, max_attempts: 10 });
  await database.db.deleteFrom('jobs').where('kind', '=', job.kind).execute();
});
