import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from '../db/database.js';
import { rememberedRows, RowChecks, type VersionedRow } from './row-checks.js';

let database: Database;
const table = sql.table('row_checks_probe');

beforeAll(async () => {
  database = await sharedTestDatabase();
  await sql`create table if not exists ${table} (platform_id text not null, id text not null, name text not null, primary key (platform_id, id))`.execute(database.db);
  await sql`insert into ${table} values ('P1', 'a', 'first'), ('P2', 'a', 'other tenant')`.execute(database.db);
});
afterAll(async () => {
  await sql`drop table if exists ${table}`.execute(database.db);
});

describe('rememberedRows and RowChecks', () => {
  const rows = rememberedRows<string>('row_checks_probe');
  let reads = 0;
  const read = (platformId: string, id: string) => async (): Promise<VersionedRow<string> | undefined> => {
    reads += 1;
    const { rows: found } = await sql<{ name: string; version: string }>`select name, xmin::text as version from ${table} where platform_id = ${platformId} and id = ${id}`.execute(database.db);
    return found[0] && { value: found[0].name, version: found[0].version };
  };
  const holds = async (checks: RowChecks) => (await sql<{ ok: boolean }>`select ${checks.holds()} as ok`.execute(database.db)).rows[0].ok;

  it('read a row once per tenant, and hold while it is unchanged', async () => {
    const checks = new RowChecks();
    expect(await holds(checks)).toBe(true);
    expect(await rows.get('P1', 'a', checks, read('P1', 'a'))).toBe('first');
    expect(await rows.get('P1', 'a', checks, read('P1', 'a'))).toBe('first');
    expect(await rows.get('P2', 'a', checks, read('P2', 'a'))).toBe('other tenant');
    expect(await rows.get('P1', 'missing', checks, read('P1', 'missing'))).toBeUndefined();
    expect(reads).toBe(3);
    expect(await holds(checks)).toBe(true);
  });

  it('stop holding once the row is updated (even to the same value); forgetting reads it again', async () => {
    const checks = new RowChecks();
    await rows.get('P1', 'a', checks, read('P1', 'a'));
    await sql`update ${table} set name = name where platform_id = 'P1' and id = 'a'`.execute(database.db);
    expect(await holds(checks)).toBe(false);
    const refused = sql`select corridor_expect(${checks.holds()}, 'changed')`.execute(database.db);
    await expect(refused).rejects.toMatchObject({ code: 'CR001' });

    checks.forgetAll();
    const again = new RowChecks();
    const before = reads;
    expect(await rows.get('P1', 'a', again, read('P1', 'a'))).toBe('first');
    expect(reads).toBe(before + 1);
    expect(await holds(again)).toBe(true);
  });
});
