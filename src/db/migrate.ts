import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

/** Migrations are plain SQL files; this path resolves the same from src/db and dist/db. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));

class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((f) => f.endsWith('.sql')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await readFile(`${this.dir}/${file}`, 'utf8');
      migrations[file.replace(/\.sql$/, '')] = {
        up: async (db) => {
          await sql.raw(text).execute(db);
        },
      };
    }
    return migrations;
  }
}

export interface MigrationReport {
  applied: string[];
}

/** Brings the schema up to date; safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationReport> {
  // Unordered: work merged from parallel branches may add a migration that sorts before one a
  // development database already applied; each migration still runs exactly once.
  const migrator = new Migrator({ db, provider: new SqlFileMigrationProvider(MIGRATIONS_DIR), allowUnorderedMigrations: true });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/** True once every known migration has been applied (used by /healthz). */
export async function migrationsApplied(db: Kysely<any>): Promise<boolean> {
  const migrator = new Migrator({ db, provider: new SqlFileMigrationProvider(MIGRATIONS_DIR) });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}
