import pg from 'pg';

/** Drops the per-worker PostgreSQL databases this run created (see db.ts). */
export async function teardown(): Promise<void> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return;
  const prefix = `${new URL(base).pathname.slice(1) || 'test'}_${process.pid}_w`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
  } finally {
    await admin.end();
  }
}
