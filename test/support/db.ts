import { sql, type Kysely, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database, type DB, type Trx } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

let shared: Promise<Database> | undefined;

/** PostgreSQL when TEST_DATABASE_URL is set (one database per worker), else in-memory PGlite. */
export function testDatabaseKind(): 'postgres' | 'pglite' {
  return process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';
}

async function createWorkerDatabase(baseUrl: string): Promise<string> {
  const worker = process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0';
  const url = new URL(baseUrl);
  // The vitest main process id keeps concurrent runs apart; global-setup.ts drops these at the end.
  const name = `${url.pathname.slice(1) || 'test'}_${process.ppid}_w${worker}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}

/** This worker's migrated database, opened once. */
export function sharedTestDatabase(): Promise<Database> {
  shared ??= (async () => {
    const base = process.env.TEST_DATABASE_URL;
    const database = await openDatabase({
      databaseUrl: base ? await createWorkerDatabase(base) : undefined,
      dataDir: 'memory',
      poolSize: 20,
    });
    await migrateToLatest(database.db);
    return database;
  })();
  return shared;
}

/** Empties every table but the migration bookkeeping. */
export async function resetDatabase(database: Database): Promise<void> {
  const { rows } = await sql<{ tablename: string }>`
    select tablename from pg_tables
    where schemaname = 'public' and tablename not like 'kysely_migration%'`.execute(database.db);
  if (rows.length === 0) return;
  await sql.raw(`truncate ${rows.map((r) => `"${r.tablename}"`).join(', ')} restart identity cascade`).execute(database.db);
}

/** Rows of `table` read so far in this transaction: by sequential scans, and index entries read. */
export async function rowsRead(trx: Trx, table: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select pg_stat_get_xact_tuples_returned(${table}::regclass)
         + (select coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0) from pg_index where indrelid = ${table}::regclass) as n`.execute(trx);
  return Number(rows[0].n);
}

/** `db` that records how many rows each DELETE run through it deleted, in order (to see batches). */
export function recordingDeletes(db: Kysely<DB>): { db: Kysely<DB>; deleted: number[] } {
  const deleted: number[] = [];
  const deletes = new Set<unknown>();
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === 'DeleteQueryNode') deletes.add(args.queryId);
      return args.node;
    },
    async transformResult(args) {
      if (deletes.delete(args.queryId)) deleted.push(Number(args.result.numAffectedRows ?? 0));
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), deleted };
}
