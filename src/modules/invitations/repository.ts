import type { Executor, Trx } from '../../db/database.js';
import type { InvitationStatus } from './schemas.js';

declare module '../../db/schema.js' {
  interface DB {
    invitations: InvitationRow;
  }
}

export interface InvitationRow {
  code: string;
  platform_id: string;
  inviter_customer_id: string;
  inviter_uma: string;
  invitee_uma: string | null;
  first_name: string | null;
  amount_to_send: number | null;
  amount_currency: string | null;
  status: InvitationStatus;
  claimed_by_platform_id: string | null;
  created_at: Date;
  expires_at: Date | null;
  claimed_at: Date | null;
  cancelled_at: Date | null;
  updated_at: Date;
}

export async function insertInvitation(trx: Trx, row: InvitationRow): Promise<void> {
  await trx.insertInto('invitations').values(row).execute();
}

/** By code alone: codes are shared between the platforms of this instance. */
export async function findInvitation(ex: Executor, code: string): Promise<InvitationRow | undefined> {
  return ex.selectFrom('invitations').selectAll().where('code', '=', code).executeTakeFirst();
}

/** PENDING and not expired at `now` → CLAIMED; undefined when it was not claimable any more. */
export async function claimInvitation(trx: Trx, code: string, claim: { inviteeUma: string; platformId: string; now: Date }) {
  return trx
    .updateTable('invitations')
    .set({ status: 'CLAIMED', invitee_uma: claim.inviteeUma, claimed_by_platform_id: claim.platformId, claimed_at: claim.now, updated_at: claim.now })
    .where('code', '=', code)
    .where('status', '=', 'PENDING')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', claim.now)]))
    .returningAll()
    .executeTakeFirst();
}

/** PENDING and not expired at `now` → CANCELLED, for the creating platform only. */
export async function cancelInvitation(trx: Trx, platformId: string, code: string, now: Date) {
  return trx
    .updateTable('invitations')
    .set({ status: 'CANCELLED', cancelled_at: now, updated_at: now })
    .where('code', '=', code)
    .where('platform_id', '=', platformId)
    .where('status', '=', 'PENDING')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .returningAll()
    .executeTakeFirst();
}

/** Cancels the PENDING invitations of an inviter (a customer being deleted). */
export async function cancelInvitationsOf(trx: Trx, platformId: string, inviterCustomerId: string, now: Date): Promise<void> {
  await trx
    .updateTable('invitations')
    .set({ status: 'CANCELLED', cancelled_at: now, updated_at: now })
    .where('inviter_customer_id', '=', inviterCustomerId)
    .where('platform_id', '=', platformId)
    .where('status', '=', 'PENDING')
    .execute();
}

/** PENDING whose expiresAt has passed at `now` → EXPIRED; undefined when nothing changed. */
export async function expireInvitation(ex: Executor, code: string, now: Date) {
  return ex
    .updateTable('invitations')
    .set({ status: 'EXPIRED', updated_at: now })
    .where('code', '=', code)
    .where('status', '=', 'PENDING')
    .where('expires_at', '<=', now)
    .returningAll()
    .executeTakeFirst();
}
