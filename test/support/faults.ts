import { sql, type Kysely } from 'kysely';

/**
 * Makes the database refuse, once, the first row of `table` that matches `condition` (SQL on
 * `new`) as it is inserted or updated, as a crash or an outage right there would. A sequence
 * counts the refusal, so the rollback it causes cannot undo the count. Returns the function that
 * removes the fault.
 */
export async function failOnce(db: Kysely<any>, table: string, event: 'insert' | 'update', condition: string): Promise<() => Promise<void>> {
  const fault = `test_fault_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await sql.raw(`create sequence ${fault}`).execute(db);
  await sql
    .raw(
      `create function ${fault}() returns trigger language plpgsql as $$ begin
         if (${condition}) and nextval('${fault}') = 1 then raise exception 'injected fault'; end if;
         return new; end $$;
       create trigger ${fault} before ${event} on ${table} for each row execute function ${fault}()`,
    )
    .execute(db);
  return async () => {
    await sql.raw(`drop trigger ${fault} on ${table}; drop function ${fault}(); drop sequence ${fault}`).execute(db);
  };
}
