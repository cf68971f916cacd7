import { sql } from 'kysely';
import type { Clock, ClockSubject } from '../../core/clock.js';
import { emitEvents, type EventOwner, type EventType } from '../../core/events.js';
import type { Database, Executor } from '../../db/database.js';
import { literalLimit } from '../../db/database.js';

declare module '../../db/schema.js' {
  interface DB {
    webhook_signing_keys: {
      platform_id: string;
      private_key_pem: string;
      public_key_pem: string;
      created_at: import('kysely').Generated<Date>;
    };
  }
}

export interface StoredSigningKey {
  privateKeyPem: string;
  publicKeyPem: string;
  createdAt: Date;
}

export async function findSigningKey(ex: Executor, platformId: string): Promise<StoredSigningKey | undefined> {
  const row = await ex.selectFrom('webhook_signing_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirst();
  return row && { privateKeyPem: row.private_key_pem, publicKeyPem: row.public_key_pem, createdAt: row.created_at };
}

/** Stores a key unless the platform already has one (two processes may race to create it). */
export async function insertSigningKey(ex: Executor, platformId: string, key: { privateKeyPem: string; publicKeyPem: string }): Promise<void> {
  await ex
    .insertInto('webhook_signing_keys')
    .values({ platform_id: platformId, private_key_pem: key.privateKeyPem, public_key_pem: key.publicKeyPem })
    .onConflict((oc) => oc.column('platform_id').doNothing())
    .execute();
}

/**
 * An outbox event this process holds under a lease. `attempts` (already counting this try) is the
 * fencing token: the outcome is recorded only while it is unchanged, so a process whose lease ran
 * out and whose event was claimed again cannot overwrite the newer attempt's result.
 */
export interface ClaimedEvent {
  id: string;
  platformId: string;
  type: EventType;
  data: unknown;
  createdAt: Date;
  attempts: number;
}

/**
 * What delivering an event needs of its platform, as the claim read it: a PATCH /config made
 * through any process applies from the next claim on, never a cached copy's second later.
 */
export interface DeliveryTarget extends ClockSubject {
  mode: 'SANDBOX' | 'PRODUCTION';
  webhookEndpoint: string | null;
}

/** An event the worker claimed, with its platform's delivery settings. */
export interface DueEvent extends ClaimedEvent {
  platform: DeliveryTarget;
}

const CLAIMED_COLUMNS = ['id', 'platform_id', 'type', 'data', 'created_at', 'attempts'] as const;

function toClaimed(row: { id: string; platform_id: string; type: string; data: unknown; created_at: Date; attempts: number }): ClaimedEvent {
  return { id: row.id, platformId: row.platform_id, type: row.type as EventType, data: row.data, createdAt: row.created_at, attempts: row.attempts };
}

/**
 * Claims up to `limit` of the oldest due events in one statement, skipping rows other processes
 * hold, and taking at most `room(platform)` events of each platform (`room` lists the platforms
 * this process already serves, with what they have left; any other platform has `perPlatform`).
 * The lease is `next_attempt_at` itself: a claimed event is not due again until the lease ends,
 * so a crashed process's events come back without extra bookkeeping.
 */
export async function claimDueEvents(
  ex: Executor,
  options: { now: Date; leaseUntil: Date; limit: number; perPlatform: number; room: Map<string, number> },
): Promise<DueEvent[]> {
  const full = [...options.room].filter(([, left]) => left <= 0).map(([id]) => id);
  const room = JSON.stringify(Object.fromEntries(options.room));
  type Row = { id: string; platform_id: string; type: string; data: unknown; created_at: Date; attempts: number };
  const { rows } = await sql<Row & { mode: DeliveryTarget['mode']; webhook_endpoint: string | null; clock_offset_ms: number }>`
    with candidates as (
      select id, platform_id, next_attempt_at from events
      where delivery_state = 'PENDING' and next_attempt_at <= ${options.now} and platform_id <> all(${full}::text[])
      order by next_attempt_at limit ${literalLimit(options.limit)}
      for update skip locked
    ), ranked as (
      select id, platform_id, row_number() over (partition by platform_id order by next_attempt_at, id) as n from candidates
    )
    update events e set next_attempt_at = ${options.leaseUntil}, attempts = e.attempts + 1
    from ranked r, platforms p
    where e.id = r.id and r.n <= coalesce((${room}::jsonb ->> r.platform_id)::int, ${options.perPlatform}) and p.id = e.platform_id
    returning e.id, e.platform_id, e.type, e.data, e.created_at, e.attempts, p.mode, p.webhook_endpoint, p.clock_offset_ms`.execute(ex);
  return rows.map((row) => ({
    ...toClaimed(row),
    platform: { mode: row.mode, webhookEndpoint: row.webhook_endpoint, clockOffsetMs: row.clock_offset_ms },
  }));
}

/** Writes a TEST event already claimed by the caller, so the queue never sends it a second time. */
export async function insertClaimedTestEvent(database: Database, platform: EventOwner, clock: Clock, leaseUntil: Date): Promise<ClaimedEvent> {
  return database.db.transaction().execute(async (trx) => {
    const [id] = await emitEvents(trx, platform, [{ type: 'TEST', data: {} }], clock);
    const row = await trx
      .updateTable('events')
      .set({ next_attempt_at: leaseUntil, attempts: 1 })
      .where('id', '=', id)
      .returning(CLAIMED_COLUMNS)
      .executeTakeFirstOrThrow();
    return toClaimed(row);
  });
}

export type RecordedState =
  | { state: 'DELIVERED' | 'SKIPPED' | 'FAILED'; note: string | null }
  | { state: 'PENDING'; nextAttemptAt: Date; note: string };

/**
 * The update that records the outcome of a try, if this process still holds the claim (one shape
 * for every outcome, so that batches of them keep few statement texts).
 */
export function attemptRecord(ex: Executor, event: ClaimedEvent, outcome: RecordedState, now: Date) {
  return ex
    .updateTable('events')
    .set({
      delivery_state: outcome.state,
      last_error: outcome.note?.slice(0, 2000) ?? null,
      next_attempt_at: sql`coalesce(${outcome.state === 'PENDING' ? outcome.nextAttemptAt : null}::timestamptz, next_attempt_at)`,
      delivered_at: outcome.state === 'DELIVERED' ? now : null,
    })
    .where('id', '=', event.id)
    .where('attempts', '=', event.attempts)
    .where('delivery_state', '=', 'PENDING');
}

/** Records the outcome of a try, if this process still holds the claim. Returns whether it did. */
export async function recordAttempt(ex: Executor, event: ClaimedEvent, outcome: RecordedState, now: Date): Promise<boolean> {
  const result = await attemptRecord(ex, event, outcome, now).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives a claim back untried (shutdown interrupted it): due at once, and the try does not count. */
export async function releaseClaim(ex: Executor, event: ClaimedEvent, now: Date): Promise<void> {
  await ex
    .updateTable('events')
    .set({ next_attempt_at: now, attempts: sql`attempts - 1` })
    .where('id', '=', event.id)
    .where('attempts', '=', event.attempts)
    .where('delivery_state', '=', 'PENDING')
    .execute();
}
