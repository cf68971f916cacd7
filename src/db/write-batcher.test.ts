import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { sharedTestDatabase, testDatabaseKind } from '../../test/support/db.js';
import { openDatabase, type Database } from './database.js';
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
    const batcher = createWriteBatcher(database, { maxInFlight: 1, maxBatch: 3 });
    // The first write starts at once; the other five wait for it and then go three and two.
    await Promise.all(['a', 'b1', 'b2', 'b3', 'c1', 'c2'].map((id) => batcher.write({ kind: 'probe' }, [insert(id)])));
    expect(await statements()).toEqual([['a'], ['b1', 'b2', 'b3'], ['c1', 'c2']]);
  });

  it('keeps kinds and shapes (number of clauses, finish) apart, each in arrival order', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    const checked = sql`select corridor_expect(${true}, 'fine')`;
    await Promise.all([
      batcher.write({ kind: 'one' }, [insert('a')]),
      batcher.write({ kind: 'one' }, [insert('b1')]),
      batcher.write({ kind: 'other' }, [insert('c1')]),
      batcher.write({ kind: 'one' }, [insert('b2'), insert('d1')]),
      batcher.write({ kind: 'one' }, [insert('b3')]),
      batcher.write({ kind: 'one' }, [insert('e1')], checked),
      batcher.write({ kind: 'other' }, [insert('c2')]),
      batcher.write({ kind: 'one' }, [insert('e2')], checked),
    ]);
    expect(await statements()).toEqual([['a'], ['b1', 'b3'], ['b2', 'd1'], ['c1', 'c2'], ['e1', 'e2']]);
  });

  it('gives a failing write its own error; the writes it shared a statement with commit', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    const refused = sql`select corridor_expect(false, 'refused')`;
    const outcomes = await Promise.allSettled([
      batcher.write({ kind: 'probe' }, [insert('a')]),
      batcher.write({ kind: 'probe' }, [insert('b')]),
      batcher.write({ kind: 'probe' }, [insert('c'), insert('c-negative', -1)]),
      batcher.write({ kind: 'probe' }, [insert('d')], refused),
      batcher.write({ kind: 'probe' }, [insert('e')], sql`select corridor_expect(true, 'fine')`),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'CR001' });
    expect((await statements()).flat().sort()).toEqual(['a', 'b', 'e']);
  });

  it('runs writes with named clauses, which could clash in one statement, in one transaction instead', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    const named = (id: string) => ({ as: 'made', query: sql`insert into ${table} (id, n) values (${id}, 1) returning id` });
    await Promise.all(['b', 'c', 'd'].map((id) => batcher.write({ kind: 'probe' }, [named(id)], sql`select count(*) from made`)));
    expect(await statements()).toEqual([['b'], ['c', 'd']]);
  });
});

describe('createWriteBatcher: writes that lock rows', () => {
  const lockLog = sql.table('write_batcher_locks');
  beforeAll(async () => {
    await sql`create table if not exists ${lockLog} (keys text[] not null)`.execute(database.db);
  });
  beforeEach(async () => {
    await sql`delete from ${lockLog}`.execute(database.db);
  });
  afterAll(async () => {
    await sql`drop table if exists ${lockLog}`.execute(database.db);
  });

  /** Stands in for a lock statement: records the keys it was given, in the batch's transaction. */
  const locking = (...keys: string[]) => ({ kind: 'locking', locks: { keys, statement: (all: string[]) => sql`insert into ${lockLog} (keys) values (${all}::text[])` } });
  /** Holds only if the batch's lock statement ran before it, in its transaction. */
  const afterLocks = sql`select corridor_expect(exists (select 1 from ${lockLog}), 'locks not taken first')`;

  it('takes the locks of the whole batch first, each key once, then runs each write in one transaction', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    await Promise.all([
      // Alone: its own statement locks what it needs, nothing is taken before it.
      batcher.write(locking('k1'), [insert('a')], sql`select corridor_expect(not exists (select 1 from ${lockLog}), 'locked alone')`),
      batcher.write(locking('k2', 'k1'), [insert('b')], afterLocks),
      batcher.write(locking('k3', 'k2'), [insert('c')], afterLocks),
    ]);
    expect(await statements()).toEqual([['a'], ['b', 'c']]);
    const { rows } = await sql<{ keys: string[]; together: boolean }>`
      select keys, xmin::text = (select xmin::text from ${table} where id = 'b') as together from ${lockLog}`.execute(database.db);
    expect(rows).toEqual([{ keys: ['k2', 'k1', 'k3'], together: true }]);
  });

  const expectation = (holds: boolean) => sql`select corridor_expect(${holds}, 'refused')`;

  it('gives a failing write its own error; the writes it shared a transaction with commit', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    const outcomes = await Promise.allSettled([
      batcher.write(locking('k'), [insert('a')]),
      batcher.write(locking('k'), [insert('b')]),
      batcher.write(locking('k'), [insert('c-negative', -1)]),
      batcher.write(locking('k'), [insert('d')], expectation(false)),
      batcher.write(locking('k'), [insert('e')]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'CR001' });
    expect((await statements()).flat().sort()).toEqual(['a', 'b', 'e']);
    // The connections that saw the failures serve the next batches, with the statement that
    // came after the failure in the pipeline (and so was never prepared) too.
    await Promise.all(['f', 'g', 'h'].map((id) => batcher.write(locking('k'), [insert(id)], expectation(true))));
    expect((await statements()).flat().sort()).toEqual(['a', 'b', 'e', 'f', 'g', 'h']);
  });

  // PGlite has one connection, which keeps PostgreSQL's choice of plan.
  it.runIf(testDatabaseKind() === 'postgres')('runs batches, alone or together, on connections that keep one plan per statement and find rows by key', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    const oneplan = sql`select corridor_expect(current_setting('plan_cache_mode') = 'force_generic_plan' and current_setting('enable_seqscan') = 'off', 'planned per run')`;
    await Promise.all(['a', 'b', 'c'].map((id) => batcher.write({ kind: 'probe' }, [insert(id)], oneplan)));
    await Promise.all(['d', 'e'].map((id) => batcher.write(locking('k'), [insert(id)], oneplan)));
    expect((await statements()).flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    const { rows } = await sql<{ mode: string; seqscan: string }>`select current_setting('plan_cache_mode') as mode, current_setting('enable_seqscan') as seqscan`.execute(database.db);
    expect(rows).toEqual([{ mode: 'auto', seqscan: 'on' }]);
  });

  it.runIf(testDatabaseKind() === 'postgres')('keeps the options of the database URL on the batch connections', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', '-c application_name=corridor-probe');
    const own = await openDatabase({ databaseUrl: url.toString(), dataDir: 'memory', poolSize: 1 });
    try {
      // Divides by zero unless both settings hold.
      const both = sql`select 1 / (current_setting('application_name') = 'corridor-probe' and current_setting('plan_cache_mode') = 'force_generic_plan')::int`;
      await own.runBatchedStatement(both.compile(own.db));
    } finally {
      await own.close();
    }
  });

  // PGlite runs in this process: it has no server connection to lose.
  it.runIf(testDatabaseKind() === 'postgres')('a batch whose connection is lost runs its writes alone, and the next batch gets a new connection', async () => {
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    const hangUp = { as: 'gone', query: sql`select pg_terminate_backend(pg_backend_pid())` };
    const outcomes = await Promise.allSettled([
      batcher.write(locking('k'), [insert('a')]),
      batcher.write(locking('k'), [insert('b')]),
      batcher.write(locking('k'), [insert('c'), hangUp], sql`select count(*) from gone`),
      batcher.write(locking('k'), [insert('d')]),
    ]);
    // Alone, the write that hangs up loses its own connection too.
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    await Promise.all(['e', 'f', 'g'].map((id) => batcher.write(locking('k'), [insert(id)])));
    expect((await statements()).flat().sort()).toEqual(['a', 'b', 'd', 'e', 'f', 'g']);
  });

  // PGlite has one connection: no other transaction can hold a lock meanwhile.
  it.runIf(testDatabaseKind() === 'postgres')('gives way when a write waits for a row whose holder waits for the batch\'s locks', async () => {
    await sql`insert into ${table} (id, n) values ('account', 10), ('quote', 0)`.execute(database.db);
    const batcher = createWriteBatcher(database, { maxInFlight: 1 });
    // Locks the account, then waits, so that the other transaction is the first to wait.
    const slowLocks = {
      kind: 'slow',
      locks: { keys: ['account'], statement: (keys: string[]) => sql`select pg_sleep(0.3) from (select id from ${table} where id = any(${keys}::text[]) for update) locked` },
    };
    const writes = Promise.allSettled([
      batcher.write(slowLocks, [insert('alone')]),
      batcher.write(slowLocks, [sql`update ${table} set n = n + 1 where id = 'quote'`]),
      batcher.write(slowLocks, [insert('b')]),
    ]);
    // Locks the quote, then waits for the account the batch holds; the batch's claim of the quote
    // then waits for this transaction. Without giving way, PostgreSQL's deadlock check would end
    // this transaction, the first to wait.
    await delay(100);
    await database.db.transaction().execute(async (trx) => {
      await sql`update ${table} set n = n + 10 where id = 'quote'`.execute(trx);
      await sql`select 1 from ${table} where id = 'account' for update`.execute(trx);
    });
    expect((await writes).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const { rows } = await sql<{ id: string; n: number }>`select id, n from ${table} order by id`.execute(database.db);
    expect(rows).toEqual([
      { id: 'account', n: 10 },
      { id: 'alone', n: 1 },
      { id: 'b', n: 1 },
      { id: 'quote', n: 11 },
    ]);
  });
});

describe('Database.runInOneTransaction', () => {
  const compiled = (...queries: ReturnType<typeof insert>[]) => queries.map((q) => q.compile(database.db));

  it('runs the statements in order in one transaction', async () => {
    await database.runInOneTransaction(compiled(insert('a'), insert('b'), sql`update ${table} set n = n + 1 where id = 'a'`));
    expect(await statements()).toEqual([['a', 'b']]);
    const { rows } = await sql<{ n: number }>`select n from ${table} where id = 'a'`.execute(database.db);
    expect(rows).toEqual([{ n: 2 }]);
  });

  it('keeps nothing when one statement fails, and throws that statement\'s error', async () => {
    await expect(database.runInOneTransaction(compiled(insert('a'), insert('b', -1), insert('c')))).rejects.toMatchObject({ code: '23514' });
    expect(await statements()).toEqual([]);
    await database.runInOneTransaction(compiled(insert('d')));
    expect(await statements()).toEqual([['d']]);
  });
});
