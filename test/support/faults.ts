import { sql, type Kysely } from 'kysely';
import { expect } from 'vitest';

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

/**
 * Stands for a retry that took an Idempotency-Key over while the first request ran: the key's row
 * is written with another lease than the one the request was given. Returns the function that
 * removes the fault.
 */
export async function leaseTakenOver(db: Kysely<any>, key: string): Promise<() => Promise<void>> {
  const fault = `test_take_over_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await sql
    .raw(
      `create function ${fault}() returns trigger language plpgsql as $$ begin
         if new.key = '${key}' then new.locked_until := new.locked_until + interval '1 second'; end if; return new; end $$;
       create trigger ${fault} before insert on idempotency_keys for each row execute function ${fault}()`,
    )
    .execute(db);
  return async () => {
    await sql.raw(`drop trigger ${fault} on idempotency_keys; drop function ${fault}()`).execute(db);
  };
}

/**
 * The database as a process sees it while the server is down: every statement through `db` fails
 * to connect (ECONNREFUSED) until `state.down` is set false. `state.statements` counts those tried.
 */
export function outage<T extends { db: Kysely<any> }>(database: T): { database: T; state: { down: boolean; statements: number } } {
  const state = { down: true, statements: 0 };
  const db = database.db.withPlugin({
    transformQuery(args) {
      state.statements++;
      if (state.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { database: { ...database, db }, state };
}

/** A logger that keeps what it is given: `lines` holds each call's level, message and fields. */
export function capturingLogger() {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at = (level: string) => (fields: Record<string, unknown> | string, msg?: string) =>
    void lines.push(typeof fields === 'string' ? { level, msg: fields, fields: {} } : { level, msg: msg ?? '', fields });
  const log = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), trace: at('trace'), fatal: at('fatal') };
  return { log: log as never, lines };
}

/**
 * With a poller started on `outage`'s database and `capturingLogger`'s log: checks that it logs the
 * first failed poll once (`failed`), backs off instead of polling every 20 ms (about 70 polls in
 * 1.5 s; backing off from 40 ms, about 6), then brings the database back and waits for `recovered`.
 */
export async function expectBackoffWhileDown(
  state: { down: boolean; statements: number },
  lines: ReturnType<typeof capturingLogger>['lines'],
  messages: { failed: string; recovered: string },
): Promise<void> {
  await new Promise((r) => setTimeout(r, 1_500));
  expect(state.statements).toBeGreaterThanOrEqual(3);
  expect(state.statements).toBeLessThanOrEqual(8);
  const errors = lines.filter((l) => l.level === 'error');
  expect(errors.map((l) => l.msg)).toEqual([messages.failed]);
  expect(errors[0].fields.err).toMatchObject({ code: 'ECONNREFUSED' });
  state.down = false;
  await expect.poll(() => lines.map((l) => l.msg), { timeout: 30_000 }).toContain(messages.recovered);
}
