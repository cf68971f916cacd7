import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { createCore } from './corridor.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';

const dir = mkdtempSync(join(tmpdir(), 'corridor-leases-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LEASED_UNTIL = new Date(Date.now() + 60_000);

/** What a process killed mid-work leaves: a claimed job and a request's key still in flight. */
async function leaveLeases(database: Database): Promise<void> {
  await database.db.insertInto('jobs').values({ kind: 'noop', payload: '{}', due_at: new Date(), locked_until: LEASED_UNTIL }).execute();
  await database.db
    .insertInto('idempotency_keys')
    .values({ scope: 'P', key: 'k', request_hash: 'h', status_code: null, response: null, locked_until: LEASED_UNTIL })
    .execute();
}

async function leases(database: Database) {
  const job = await database.db.selectFrom('jobs').select('locked_until').executeTakeFirstOrThrow();
  const key = await database.db.selectFrom('idempotency_keys').select('locked_until').executeTakeFirstOrThrow();
  return { job: job.locked_until, key: key.locked_until };
}

// Always on PGlite, whatever database the suite runs on: the release is for PGlite data
// directories, which one process at a time can open.
it('a process opening a PGlite data directory releases the leases a dead process left in it', async () => {
  const config = { ...loadConfig({}), dataDir: dir, databaseUrl: undefined };
  const first = await openDatabase({ dataDir: dir });
  await migrateToLatest(first.db);
  await leaveLeases(first);

  // A database handed in may be in use elsewhere in this process: its leases stay.
  const borrowing = await createCore({ config, database: first, logger: false });
  expect(await leases(borrowing.database)).toEqual({ job: LEASED_UNTIL, key: LEASED_UNTIL });
  await borrowing.close();
  await first.close();

  const owning = await createCore({ config, logger: false });
  try {
    const after = await leases(owning.database);
    expect(after.job).toBeNull();
    expect(after.key!.getTime()).toBeLessThan(Date.now());
  } finally {
    await owning.close();
  }
});
