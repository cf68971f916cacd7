import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGliteDialect } from './pglite-dialect.js';

// The driver itself, on an in-memory PGlite of its own (whichever database the suite runs on).
let pglite: PGlite;
let db: Kysely<any>;

beforeAll(async () => {
  pglite = new PGlite();
  await pglite.waitReady;
  db = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
});
afterAll(async () => {
  await db.destroy();
  await pglite.close();
});

describe('PGliteDialect', () => {
  it('runs queued queries one at a time, in order', async () => {
    await sql`create table log (n int)`.execute(db);
    await Promise.all(Array.from({ length: 20 }, (_, n) => sql`insert into log values (${n})`.execute(db)));
    const { rows } = await sql<{ n: number }>`select n from log`.execute(db);
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('lets the event loop turn between queued queries, so sockets are read while a queue drains', async () => {
    let finished = 0;
    let finishedWhenTheLoopTurned = -1;
    setImmediate(() => (finishedWhenTheLoopTurned = finished));
    await Promise.all(Array.from({ length: 20 }, () => sql`select pg_sleep(0.001)`.execute(db).then(() => finished++)));
    expect(finishedWhenTheLoopTurned).toBeGreaterThanOrEqual(0);
    expect(finishedWhenTheLoopTurned).toBeLessThan(20);
  });

  it('keeps a transaction\'s connection to itself until it ends', async () => {
    await sql`create table counter (n int)`.execute(db);
    await sql`insert into counter values (0)`.execute(db);
    const outside: number[] = [];
    let read!: Promise<unknown>;
    await db.transaction().execute(async (trx) => {
      await sql`update counter set n = 1`.execute(trx);
      read = sql<{ n: number }>`select n from counter`.execute(db).then((r) => outside.push(r.rows[0].n));
      await new Promise((resolve) => setImmediate(resolve));
      expect(outside).toEqual([]); // queued behind the transaction
      await sql`update counter set n = 2`.execute(trx);
    });
    await read;
    expect(outside).toEqual([2]);
  });

  it('prepares each parameterized statement once, with values and results as PGlite.query gives them', async () => {
    await sql`create table kinds (id int primary key, doc jsonb, at timestamptz, tags text[])`.execute(db);
    const at = new Date('2026-01-01T00:00:00Z');
    const insert = (id: number) => sql`insert into kinds values (${id}, ${'{"amount":"€1"}'}::jsonb, ${at}, ${['a', 'b"c']})`.execute(db);
    await insert(1);
    await insert(2);
    const { rows } = await sql`select * from kinds where id = ${1}`.execute(db);
    expect(rows).toEqual([{ id: 1, doc: { amount: '€1' }, at, tags: ['a', 'b"c'] }]);
    const prepared = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like ${'insert into kinds%'}`.execute(db);
    expect(prepared.rows[0].n).toBe(1);
    expect((await sql`update kinds set id = id + ${10} where id > ${0}`.execute(db)).numAffectedRows).toBe(2n);
  });

  it('reports a statement that fails to run or to prepare and goes on; a statement whose table changed shape is prepared again', async () => {
    await sql`create table once (id int primary key)`.execute(db);
    const insert = () => sql`insert into once values (${1})`.execute(db);
    await insert();
    await expect(insert()).rejects.toMatchObject({ code: '23505' });
    const read = () => sql`select * from once where id = ${1}`.execute(db);
    expect((await read()).rows).toEqual([{ id: 1 }]);
    await expect(sql`select * from nowhere where id = ${1}`.execute(db)).rejects.toMatchObject({ code: '42P01' });
    expect((await read()).rows).toEqual([{ id: 1 }]);
    await sql`alter table once add column note text`.execute(db);
    expect((await read()).rows).toEqual([{ id: 1, note: null }]);
  });

  it('runs statements past the prepared ones it keeps through PGlite.query', async () => {
    const texts = Array.from({ length: 520 }, (_, i) => sql<{ n: number }>`select ${i}::int as ${sql.id(`n${i}`)}`);
    for (const [i, text] of texts.entries()) expect((await text.execute(db)).rows).toEqual([{ [`n${i}`]: i }]);
  });
});
