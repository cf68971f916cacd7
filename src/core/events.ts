import type { Executor } from '../db/database.js';
import { deleteSelected } from '../db/prune.js';
import type { Clock, ClockSubject } from './clock.js';
import { newId, uuidv7Floor } from './ids.js';
import { addToOutbox, type EventRow } from './outbox.js';

declare module '../db/schema.js' {
  interface DB {
    events: {
      id: string;
      platform_id: string;
      type: string;
      data: unknown;
      created_at: Date;
      delivery_state: import('kysely').Generated<'PENDING' | 'DELIVERED' | 'FAILED' | 'SKIPPED'>;
      attempts: import('kysely').Generated<number>;
      next_attempt_at: import('kysely').Generated<Date>;
      last_error: string | null;
      delivered_at: Date | null;
    };
  }
}

/** Event types, named as the reference's webhook types (OBJECT.EVENT). */
export type EventType =
  | 'OUTGOING_PAYMENT.PENDING'
  | 'OUTGOING_PAYMENT.PROCESSING'
  | 'OUTGOING_PAYMENT.COMPLETED'
  | 'OUTGOING_PAYMENT.FAILED'
  | 'OUTGOING_PAYMENT.EXPIRED'
  | 'OUTGOING_PAYMENT.REFUND_PENDING'
  | 'OUTGOING_PAYMENT.REFUND_COMPLETED'
  | 'OUTGOING_PAYMENT.REFUND_FAILED'
  | 'INCOMING_PAYMENT.PENDING'
  | 'INCOMING_PAYMENT.COMPLETED'
  | 'INCOMING_PAYMENT.FAILED'
  | 'CUSTOMER.KYC_APPROVED'
  | 'CUSTOMER.KYC_REJECTED'
  | 'CUSTOMER.KYC_PENDING'
  | 'CUSTOMER.KYB_APPROVED'
  | 'CUSTOMER.KYB_REJECTED'
  | 'CUSTOMER.KYB_PENDING'
  | 'VERIFICATION.APPROVED'
  | 'VERIFICATION.REJECTED'
  | 'VERIFICATION.RESOLVE_ERRORS'
  | 'VERIFICATION.IN_PROGRESS'
  | 'VERIFICATION.PENDING_MANUAL_REVIEW'
  | 'VERIFICATION.READY_FOR_VERIFICATION'
  | 'INTERNAL_ACCOUNT.BALANCE_UPDATED'
  | 'INVITATION.CLAIMED'
  | 'BULK_UPLOAD.COMPLETED'
  | 'BULK_UPLOAD.FAILED'
  | 'AGENT_ACTION.PENDING_APPROVAL'
  | 'TEST';

export interface EventOwner extends ClockSubject {
  id: string;
}

export interface NewEvent {
  type: EventType;
  data: unknown;
}

/** Outbox rows for events that happen now, in the platform's clock. */
export function eventRows(platform: EventOwner, events: NewEvent[], clock: Clock): EventRow[] {
  const createdAt = clock.now(platform);
  return events.map((event) => ({
    id: newId('Webhook'),
    platform_id: platform.id,
    type: event.type,
    data: JSON.stringify(event.data),
    created_at: createdAt,
  }));
}

/**
 * Writes events to the outbox in the caller's transaction: an event exists exactly when the
 * state change it reports committed. Delivery happens later, from the outbox.
 */
export async function emitEvents(ex: Executor, platform: EventOwner, events: NewEvent[], clock: Clock): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = eventRows(platform, events, clock);
  await addToOutbox(ex, { events: rows });
  return rows.map((r) => r.id);
}

/**
 * Deletes outbox rows that are done with (delivered, skipped or given up) and written before
 * `before` (wall-clock time), in batches. Events still being delivered are kept whatever their
 * age. Age is read from the id (a uuidv7 of the real time of writing), not from `created_at`,
 * which is on the platform's clock (a sandbox's may be years ahead): the primary key serves it.
 */
export async function pruneEvents(ex: Executor, before: Date, batch?: number): Promise<number> {
  const upTo = `Webhook:${uuidv7Floor(before.getTime())}`;
  const pick = () => ex.selectFrom('events').select('id').where('id', '<', upTo).where('delivery_state', 'in', ['DELIVERED', 'SKIPPED', 'FAILED']).orderBy('id');
  return deleteSelected(ex, 'events', 'id', pick, batch);
}
