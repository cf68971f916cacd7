import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from './database.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

const MIGRATION = new URL('./migrations/0041_idempotency_secrets.sql', import.meta.url);

it('migration 0041 takes one-time secrets out of stored answers, keeping the rest as it was', async () => {
  const statement = readFileSync(MIGRATION, 'utf8').replace(/--.*$/gm, '').trim();
  const stored = {
    first: '{"clientSecret":"ab12","id":"Token:1","name":"n"}',
    middle: '{"id":"Token:2","clientSecret":"cd34","permissions":["VIEW"]}',
    last: '{"agent":{"id":"Agent:1","name":"a"},"deviceCode":"AGT-ABCD-EFGH"}',
    alone: '{"deviceCode":"AGT-1"}',
    other: '{"z":1,"a":"clientSecret"}',
  };
  await database.db.transaction().execute(async (trx) => {
    for (const [key, response] of Object.entries(stored)) {
      await sql`insert into idempotency_keys (scope, key, request_hash, status_code, response) values ('secrets-test', ${key}, 'h', 201, ${response}::json)`.execute(trx);
    }
    await sql.raw(statement).execute(trx);
    const { rows } = await sql<{ key: string; response: string }>`select key, response::text as response from idempotency_keys where scope = 'secrets-test' order by key`.execute(trx);
    expect(Object.fromEntries(rows.map((r) => [r.key, r.response]))).toEqual({
      first: '{"id":"Token:1","name":"n"}',
      middle: '{"id":"Token:2","permissions":["VIEW"]}',
      last: '{"agent":{"id":"Agent:1","name":"a"}}',
      alone: '{}',
      other: '{"z":1,"a":"clientSecret"}',
    });
    await sql`delete from idempotency_keys where scope = 'secrets-test'`.execute(trx);
  });
});
