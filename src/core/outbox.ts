import { sql, type RawBuilder } from 'kysely';
import type { Executor, Trx } from '../db/database.js';
import { writeAsOne, type Write } from '../db/one-statement.js';
import { onBeforeCommit } from '../db/transact.js';

/** An event row as written to the outbox (data already serialized). */
export interface EventRow {
  id: string;
  platform_id: string;
  type: string;
  data: string;
  created_at: Date;
}

/** A job row as written to the job table (payload already serialized). */
export interface JobRow {
  platform_id: string | null;
  kind: string;
  payload: string;
  /** When the job is due on its platform's clock; the insert stores it as real time (`realDueAt`). */
  run_at: Date;
  max_attempts: number;
}

interface Pending {
  events: EventRow[];
  jobs: JobRow[];
}

const pendingByTrx = new WeakMap<Executor, Pending>();

// Events of a platform without a webhook endpoint are born SKIPPED: nobody is there to deliver
// them to, and the delivery worker never has to look at them. (For inserts joining `platforms p`.)
const DELIVERY_STATE = sql`case when p.webhook_endpoint is null then 'SKIPPED' else 'PENDING' end`;

// The data travel as one JSON array rather than a text[]: an array literal escapes every quote
// of every document, which made the driver's parameter encoding a visible cost of each write.
function eventsInsert(rows: EventRow[]): Write {
  const documents = `[${rows.map((r) => r.data).join(',')}]`;
  return sql`
    insert into events (id, platform_id, type, data, created_at, delivery_state)
    select e.id, e.platform_id, e.type, d.data, e.created_at, ${DELIVERY_STATE}
    from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.platform_id)}::text[], ${rows.map((r) => r.type)}::text[],
                ${rows.map((r) => r.created_at)}::timestamptz[]) with ordinality as e(id, platform_id, type, created_at, n)
    join json_array_elements(${documents}::json) with ordinality as d(data, n) on d.n = e.n
    join platforms p on p.id = e.platform_id`;
}

/**
 * The real time at which a job of `platformId` (null: a system job) falls due, given when it is
 * due on that platform's clock: `runAt` minus the clock offset the platform row holds, not the
 * offset of the caller's copy of the platform, which another process's clock advance may have
 * made stale (platforms are cached for up to a second). The row is read FOR SHARE, which
 * conflicts with the advance's update of it: an insert that reads the row first commits before
 * the advance moves the clock, and the advance's shift of the platform's pending jobs (a later
 * statement) then moves this job too; an insert that comes second waits for the advance to
 * commit and reads the new offset. Either way the job is due by the clock as advanced.
 */
export function realDueAt(platformId: RawBuilder<string | null>, runAt: RawBuilder<Date>): RawBuilder<Date> {
  // Only a sandbox platform's clock moves: production rows are left unlocked (offset 0).
  return sql<Date>`${runAt} - coalesce((select clock_of.clock_offset_ms from platforms clock_of
    where clock_of.id = ${platformId} and clock_of.mode = 'SANDBOX' for share), 0) * interval '1 millisecond'`;
}

function jobsInsert(rows: JobRow[]): Write {
  return sql`
    insert into jobs (platform_id, kind, payload, due_at, max_attempts)
    select j.platform_id, j.kind, j.payload, ${realDueAt(sql`j.platform_id`, sql`j.run_at`)}, j.max_attempts
    from unnest(${rows.map((r) => r.platform_id)}::text[], ${rows.map((r) => r.kind)}::text[],
                ${rows.map((r) => r.payload)}::json[], ${rows.map((r) => r.run_at)}::timestamptz[],
                ${rows.map((r) => r.max_attempts)}::int[]) as j(platform_id, kind, payload, run_at, max_attempts)`;
}

/**
 * An event whose data and time the statement it is written by finishes: what that statement
 * reports for `account_id` (`available`, `posted`, `updated_at` as ISO 8601 text) goes between
 * the four parts, and `updated_at` is the event's time. Balance events must show the balances
 * and the time a ledger call produces (the time orders them), and this lets them ride on that call.
 */
export interface BalanceEventRow extends Omit<EventRow, 'data' | 'created_at'> {
  account_id: string;
  parts: [string, string, string, string];
}

// The text of Date.prototype.toISOString (for years 1000 to 9999).
const ISO_8601 = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * The insert of balance events (none for no rows), for a statement that has a clause named
 * `balances` with the columns (account_id, available, posted, updated_at): one event per row of
 * `rows` whose account is there.
 */
export function balanceEventWrites(rows: BalanceEventRow[]): Write[] {
  if (rows.length === 0) return [];
  return [sql`
    insert into events (id, platform_id, type, data, created_at, delivery_state)
    select e.id, e.platform_id, e.type,
           (e.head || b.available || e.middle || b.posted || e.later || to_char(b.updated_at at time zone 'UTC', ${sql.raw(ISO_8601)}) || e.tail)::json,
           b.updated_at, ${DELIVERY_STATE}
    from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.platform_id)}::text[], ${rows.map((r) => r.type)}::text[],
                ${rows.map((r) => r.account_id)}::text[], ${rows.map((r) => r.parts[0])}::text[], ${rows.map((r) => r.parts[1])}::text[],
                ${rows.map((r) => r.parts[2])}::text[], ${rows.map((r) => r.parts[3])}::text[])
         as e(id, platform_id, type, account_id, head, middle, later, tail)
    join balances b on b.account_id = e.account_id
    join platforms p on p.id = e.platform_id`];
}

/** The inserts of these events and jobs, for `writeAsOne` beside the change that caused them. */
export function outboxWrites({ events = [], jobs = [] }: Partial<Pending>): Write[] {
  return [...(events.length > 0 ? [eventsInsert(events)] : []), ...(jobs.length > 0 ? [jobsInsert(jobs)] : [])];
}

/** Writes events and jobs in one statement. */
function write(ex: Executor, pending: Pending): Promise<void> {
  return writeAsOne(ex, outboxWrites(pending));
}

/**
 * Adds events and jobs to the caller's transaction. Inside `transact` they are buffered and
 * written together, in one statement, just before the commit; elsewhere they are written now.
 * Either way they commit exactly when the state change that caused them does.
 */
export async function addToOutbox(ex: Executor, add: Partial<Pending>): Promise<void> {
  const batch = { events: add.events ?? [], jobs: add.jobs ?? [] };
  if (batch.events.length === 0 && batch.jobs.length === 0) return;
  let pending = pendingByTrx.get(ex);
  if (!pending) {
    const fresh: Pending = { events: [], jobs: [] };
    if (!('isTransaction' in ex && ex.isTransaction) || !onBeforeCommit(ex as Trx, 'outbox', () => flush(ex as Trx, fresh))) {
      await write(ex, batch);
      return;
    }
    pendingByTrx.set(ex, fresh);
    pending = fresh;
  }
  pending.events.push(...batch.events);
  pending.jobs.push(...batch.jobs);
}

/**
 * Takes the events and jobs `ex` has buffered so far, as writes for a statement the caller is
 * about to run in it anyway: they commit just the same, without a statement of their own before
 * the commit. What is added later is buffered as usual.
 */
export function takeOutboxWrites(ex: Executor): Write[] {
  const pending = pendingByTrx.get(ex);
  if (!pending) return [];
  const writes = outboxWrites(pending);
  pending.events = [];
  pending.jobs = [];
  return writes;
}

async function flush(trx: Trx, pending: Pending): Promise<void> {
  pendingByTrx.delete(trx);
  await write(trx, pending);
}
