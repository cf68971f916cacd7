import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from '../db/database.js';
import { ServiceError } from './errors.js';
import { rememberedRows, RowChecks, withRowChecks } from './row-checks.js';

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

interface ProbeRow {
  platform_id: string;
  id: string;
  name: string;
}

describe('rememberedRows and RowChecks', () => {
  const rows = rememberedRows<ProbeRow>('row_checks_probe');
  const nameOf = async (platformId: string, id: string, checks: RowChecks) => (await rows.get(database.db, platformId, id, checks))?.name;
  const holds = async (checks: RowChecks) => (await sql<{ ok: boolean }>`select ${checks.holds()} as ok`.execute(database.db)).rows[0].ok;
  const rename = (name: string) => sql`update ${table} set name = ${name} where platform_id = 'P1' and id = 'a'`.execute(database.db);

  it('remember a row per tenant, and hold while it is unchanged', async () => {
    const checks = new RowChecks();
    expect(await holds(checks)).toBe(true);
    expect(await nameOf('P1', 'a', checks)).toBe('first');
    expect(await nameOf('P2', 'a', checks)).toBe('other tenant');
    expect(await nameOf('P1', 'missing', checks)).toBeUndefined();
    expect(await holds(checks)).toBe(true);
  });

  it('stop holding once the row is updated (even to the same value); forgetting reads it again', async () => {
    const checks = new RowChecks();
    expect(await nameOf('P1', 'a', checks)).toBe('first');
    await rename('first');
    expect(await holds(checks)).toBe(false);
    await expect(sql`select corridor_expect(${checks.holds()}, 'changed')`.execute(database.db)).rejects.toMatchObject({ code: 'CR001' });

    await rename('second');
    expect(await nameOf('P1', 'a', new RowChecks())).toBe('first'); // still the remembered copy
    checks.forgetAll();
    const again = new RowChecks();
    expect(await nameOf('P1', 'a', again)).toBe('second');
    expect(await holds(again)).toBe(true);
  });

  it('decide a refusal made on a remembered row again from a fresh read, and only then refuse', async () => {
    const fresh = rememberedRows<ProbeRow>('row_checks_probe');
    const nameNow = async (checks: RowChecks) => (await fresh.get(database.db, 'P1', 'a', checks))!.name;
    await rename('before');
    await nameNow(new RowChecks()); // remembered as 'before'
    await rename('after');
    const seen: string[] = [];
    const accepted = withRowChecks('probe', async (attempt) => {
      const name = await nameNow(attempt);
      seen.push(name);
      if (name !== 'after') throw new ServiceError('USER_NOT_READY', `still ${name}`);
      return name;
    });
    expect(await accepted).toBe('after');
    expect(seen).toEqual(['before', 'after']);

    // A refusal on a fresh read stands at once; one after the write was built is not retried.
    const reads: string[] = [];
    const refusal = withRowChecks('probe', async (attempt) => {
      reads.push((await nameOf('P1', 'missing', attempt)) ?? 'none');
      throw new ServiceError('USER_NOT_FOUND', 'no such row');
    });
    await expect(refusal).rejects.toMatchObject({ code: 'USER_NOT_FOUND' });
    expect(reads).toEqual(['none']);
    let tries = 0;
    const late = withRowChecks('probe', async (attempt) => {
      tries++;
      await nameOf('P1', 'a', attempt);
      attempt.holds();
      throw new ServiceError('INSUFFICIENT_FUNDS', 'refused by the write');
    });
    await expect(late).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(tries).toBe(1);
  });
});
