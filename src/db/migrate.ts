import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

/** Migrations are plain SQL files; this path resolves the same from src/db and dist/db. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));

/**
 * Called as each migration starts, with its name, and whether the database had no Corridor schema
 * at all before (`corridor migrate` prints every name; `start` only that it creates the schema).
 */
export type MigrationProgress = (name: string, fresh: boolean) => void;

class SqlFileMigrationProvider implements MigrationProvider {
  constructor(
    private readonly dir: string,
    private readonly onStart: (name: string) => void,
  ) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {};
    for (const name of await migrationNames(this.dir)) {
      const text = await readFile(`${this.dir}/${name}.sql`, 'utf8');
      migrations[name] = {
        up: async (db) => {
          this.onStart(name);
          await sql.raw(text).execute(db);
        },
      };
    }
    return migrations;
  }
}

async function migrationNames(dir: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.replace(/\.sql$/, ''))
    .sort();
}

/** Which of this version's migrations the database still lacks, and which it has that this version does not know. */
export interface SchemaState {
  pending: string[];
  unknown: string[];
  /** How many migrations the database has applied. */
  applied: number;
}

export async function schemaState(db: Kysely<any>): Promise<SchemaState> {
  const known = await migrationNames(MIGRATIONS_DIR);
  const { rows } = await sql<{ exists: boolean }>`select to_regclass('kysely_migration') is not null as exists`.execute(db);
  const applied = rows[0].exists
    ? (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows.map((r) => r.name)
    : [];
  const appliedSet = new Set(applied);
  const knownSet = new Set(known);
  return { pending: known.filter((n) => !appliedSet.has(n)), unknown: applied.filter((n) => !knownSet.has(n)).sort(), applied: applied.length };
}

/**
 * A database that a newer Corridor migrated: this version does not know its schema, so it neither
 * migrates it nor reads it (README "Upgrading").
 */
export function refuseNewerSchema(state: SchemaState): void {
  if (state.unknown.length === 0) return;
  throw new Error(
    `the database was migrated by a newer version of Corridor (it has migration ${state.unknown.at(-1)}, which this version does not know): ` +
      'run that version or a later one, or restore the backup taken before the upgrade',
  );
}

export interface MigrationReport {
  applied: string[];
}

/** Brings the schema up to date; safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>, onProgress: MigrationProgress = () => {}): Promise<MigrationReport> {
  const state = await schemaState(db);
  refuseNewerSchema(state);
  const fresh = state.applied === 0;
  const onStart = (name: string) => onProgress(name, fresh);
  // Unordered: work merged from parallel branches may add a migration that sorts before one a
  // development database already applied; each migration still runs exactly once.
  const migrator = new Migrator({ db, provider: new SqlFileMigrationProvider(MIGRATIONS_DIR, onStart), allowUnorderedMigrations: true });
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
  return (await schemaState(db)).pending.length === 0;
}
