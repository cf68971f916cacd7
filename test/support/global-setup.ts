import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * One documents directory for the run's in-memory servers (DATA_DIR=memory would otherwise put
 * their uploads in a fixed temp directory that outlives every run); removed at teardown.
 */
export function setup(): void {
  process.env.CORRIDOR_TEST_DOCUMENTS_DIR = mkdtempSync(join(tmpdir(), 'corridor-test-documents-'));
}

/** Removes the run's documents directory and drops the per-worker PostgreSQL databases it created (see db.ts). */
export async function teardown(): Promise<void> {
  if (process.env.CORRIDOR_TEST_DOCUMENTS_DIR) rmSync(process.env.CORRIDOR_TEST_DOCUMENTS_DIR, { recursive: true, force: true });
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
