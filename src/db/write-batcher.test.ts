import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from './database.js';
import { createWriteBatcher } from './write-batcher.js';

let database: Database;
const table = sql.table('write_batcher_probe');

beforeAll(async () => {
  database = await sharedTestDatabase();
  await sql`create table if not exists ${table} (id text primary key, n int not null check (n >= 0))`.execute(database.db);
});
beforeEach(async () => {
  await sql`delete from ${table}`.execute(database.db);
});
afterAll(async () => {
  await sql`drop table if exists ${table}`.execute(database.db);
});

const insert = (id: string, n = 1) => sql`insert into ${table} (id, n) values (${id}, ${n})`;

/** The rows' ids, grouped by the transaction that wrote them (rows of one statement share xmin). */
async function statements(): Promise<string[][]> {
  const { rows } = await sql<{ ids: string[] }>`select array_agg(id order by id) as ids from ${table} group by xmin::text order by min(id)`.execute(database.db);
  return rows.map((r) => r.ids);
}

describe('createWriteBatcher', () => {
  it('runs a write at once when nothing else is running, and writes that wait meanwhile as one statement', async () => {
    const batcher = createWriteBatcher(database.db, { maxInFlight: 1, maxBatch: 3 });
    // The first write starts at once; the other five wait for it and then go three and two.
    await Promise.all(['a', 'b1', 'b2', 'b3', 'c1', 'c2'].map((id) => batcher.write('probe', [insert(id)])));
    expect(await statements()).toEqual([['a'], ['b1', 'b2', 'b3'], ['c1', 'c2']]);
  });

  it('keeps kinds and shapes (number of clauses, finish) apart, each in arrival order', async () => {
    const batcher = createWriteBatcher(database.db, { maxInFlight: 1 });
    const checked = sql`select corridor_expect(${true}, 'fine')`;
    await Promise.all([
      batcher.write('one', [insert('a')]),
      batcher.write('one', [insert('b1')]),
      batcher.write('other', [insert('c1')]),
      batcher.write('one', [insert('b2'), insert('d1')]),
      batcher.write('one', [insert('b3')]),
      batcher.write('one', [insert('e1')], checked),
      batcher.write('other', [insert('c2')]),
      batcher.write('one', [insert('e2')], checked),
    ]);
    expect(await statements()).toEqual([['a'], ['b1', 'b3'], ['b2', 'd1'], ['c1', 'c2'], ['e1', 'e2']]);
  });

  it('gives a failing write its own error; the writes it shared a statement with commit', async () => {
    const batcher = createWriteBatcher(database.db, { maxInFlight: 1 });
    const refused = sql`select corridor_expect(false, 'refused')`;
    const outcomes = await Promise.allSettled([
      batcher.write('probe', [insert('a')]),
      batcher.write('probe', [insert('b')]),
      batcher.write('probe', [insert('c'), insert('c-negative', -1)]),
      batcher.write('probe', [insert('d')], refused),
      batcher.write('probe', [insert('e')], sql`select corridor_expect(true, 'fine')`),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'CR001' });
    expect((await statements()).flat().sort()).toEqual(['a', 'b', 'e']);
  });

  it('runs writes with named clauses on their own', async () => {
    const batcher = createWriteBatcher(database.db, { maxInFlight: 1 });
    const named = (id: string) => ({ as: 'made', query: sql`insert into ${table} (id, n) values (${id}, 1) returning id` });
    await Promise.all([batcher.write('probe', [insert('a')]), batcher.write('probe', [named('b')]), batcher.write('probe', [named('c')])]);
    expect(await statements()).toEqual([['a'], ['b'], ['c']]);
  });
});
