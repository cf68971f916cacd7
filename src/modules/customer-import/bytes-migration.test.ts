import { readdir, readFile } from 'node:fs/promises';
import { Migrator, sql, type Migration } from 'kysely';
import pg from 'pg';
import { expect, it } from 'vitest';
import { openDatabase, type Database } from '../../db/database.js';
import { MIGRATIONS_DIR } from '../../db/migrate.js';
import { csvRecordsOfBytes } from './csv.js';
import { csvSlice } from './repository.js';

/** A database of its own (a new PostgreSQL database when the suite runs on one), to migrate step by step. */
async function freshDatabase(): Promise<{ database: Database; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const database = await openDatabase({ dataDir: 'memory' });
    return { database, drop: () => database.close() };
  }
  const url = new URL(base);
  const name = `${url.pathname.slice(1) || 'test'}_m0044_${process.pid}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists "${name}" with (force)`);
  await admin(`create database "${name}"`);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: 'memory', poolSize: 2 });
  return {
    database,
    drop: async () => {
      await database.close();
      await admin(`drop database if exists "${name}" with (force)`);
    },
  };
}

function migrator(database: Database): Migrator {
  return new Migrator({
    db: database.db,
    provider: {
      async getMigrations() {
        const migrations: Record<string, Migration> = {};
        for (const file of (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort()) {
          const text = await readFile(`${MIGRATIONS_DIR}/${file}`, 'utf8');
          migrations[file.replace(/\.sql$/, '')] = { up: async (db) => void (await sql.raw(text).execute(db)) };
        }
        return migrations;
      },
    },
  });
}

it('migration 0044 keeps an import in flight: its file becomes its UTF-8 bytes, its UTF-16 offset is forgotten', async () => {
  const { database, drop } = await freshDatabase();
  try {
    const steps = migrator(database);
    expect((await steps.migrateTo('0043_bulk_import_resume')).error).toBeUndefined();
    const text = 'platformCustomerId,fullName\r\nm-1,"Zoë 🙂 ""東京""\r\nline 2"\r\nm-2,Åsa\r\n';
    const now = new Date();
    // An import that two rows of another version counted (offset in UTF-16 code units); the
    // platform row is not needed for this (its foreign key is not checked here).
    await sql`set session_replication_role = replica`.execute(database.db);
    await sql`insert into bulk_imports (id, platform_id, status, file_name, csv, total, processed, resume_at, created_at, updated_at)
              values ('Job:m', 'Platform:m', 'PROCESSING', 'f.csv', ${text}, 2, 1, ${text.indexOf('m-2')}, ${now}, ${now})`.execute(database.db);
    // A file large enough to be compressed where it is stored (about 40 KB of repeated rows).
    const big = 'platformCustomerId,fullName\r\n' + Array.from({ length: 2_000 }, (_, i) => `big-${i},Same Name\r\n`).join('');
    await sql`insert into bulk_imports (id, platform_id, status, file_name, csv, total, processed, created_at, updated_at)
              values ('Job:big', 'Platform:m', 'PENDING', 'big.csv', ${big}, 2000, 0, ${now}, ${now})`.execute(database.db);
    expect((await sql<{ method: string | null }>`select pg_column_compression(csv) as method from bulk_imports where id = 'Job:big'`.execute(database.db)).rows).toEqual([{ method: 'pglz' }]);
    await sql`set session_replication_role = origin`.execute(database.db);

    expect((await steps.migrateToLatest()).error).toBeUndefined();
    const row = await database.db.selectFrom('bulk_imports').select(['csv', 'resume_byte', 'processed']).where('id', '=', 'Job:m').executeTakeFirstOrThrow();
    expect(Buffer.from(row.csv!).equals(Buffer.from(text, 'utf8'))).toBe(true);
    expect(row).toMatchObject({ resume_byte: null, processed: 1 });
    // Stored uncompressed, so that a slice reads only the TOAST chunks it covers.
    const { rows } = await sql<{ storage: string }>`select attstorage as storage from pg_attribute where attrelid = 'bulk_imports'::regclass and attname = 'csv'`.execute(database.db);
    expect(rows).toEqual([{ storage: 'e' }]);
    // Files converted by the migration too, not only those stored after it.
    expect((await sql<{ method: string | null }>`select pg_column_compression(csv) as method from bulk_imports where id = 'Job:big'`.execute(database.db)).rows).toEqual([{ method: null }]);
    // Slices are bytes, wherever they cut a character, and read as the file reads whole.
    const read = async (from: number, length: number) => (await csvSlice(database.db, 'Job:m', from, length))!;
    expect(Buffer.from(await read(37, 3))).toEqual(Buffer.from(text, 'utf8').subarray(37, 40));
    const records: string[][] = [];
    for await (const record of csvRecordsOfBytes(read, 0, 5)) records.push(record.values);
    expect(records).toEqual([['platformCustomerId', 'fullName'], ['m-1', 'Zoë 🙂 "東京"\r\nline 2'], ['m-2', 'Åsa']]);
    expect(await csvSlice(database.db, 'Job:none', 0, 10)).toBeNull();
  } finally {
    await drop();
  }
});
