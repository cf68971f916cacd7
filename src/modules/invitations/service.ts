import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { currency } from '../../core/currencies.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { emitEvents } from '../../core/events.js';
import { enqueueJobs, platformAsOfDue, type ClaimedJob, type JobRunner } from '../../core/jobs.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import { UMA_ADDRESS } from '../customers/rules.js';
import type { Customer, CustomerService } from '../customers/service.js';
import type { Platform, PlatformService } from '../platform/service.js';
import * as repo from './repository.js';
import type { InvitationRow } from './repository.js';
import type { InvitationClaim, InvitationCreate, InvitationView } from './schemas.js';

/** Job that turns a PENDING invitation EXPIRED at its expiresAt (platform clock). */
export const EXPIRY_JOB = 'invitation.expire';

export interface InvitationServiceDeps {
  database: Database;
  clock: Clock;
  customers: Pick<CustomerService, 'findActive' | 'lockActive'>;
  platforms: Pick<PlatformService, 'get'>;
  /** Base of invitation URLs: `<PUBLIC_URL>/<version>/invitations/`. */
  urlBase: string;
  /** Nudges webhook delivery after a claim. */
  wakeWebhooks?: () => void;
}

/** 120 random bits, URL-safe (20 characters). */
function newCode(): string {
  return randomBytes(15).toString('base64url');
}

function checkUma(field: string, value: string): void {
  if (UMA_ADDRESS.test(value)) return;
  const message = `${field} must look like $name@domain`;
  throw new ServiceError('INVALID_UMA_ADDRESS', message, { details: { errors: [{ field, constraint: 'format', message }] } });
}

function userNotFound(field: string, message: string): ServiceError {
  return new ServiceError('USER_NOT_FOUND', message, { details: { errors: [{ field, constraint: 'customer', message }] } });
}

/** The status as of `now`: a PENDING invitation past its expiresAt is EXPIRED even before the job ran. */
function statusAt(row: InvitationRow, now: Date): InvitationRow['status'] {
  return row.status === 'PENDING' && row.expires_at && row.expires_at <= now ? 'EXPIRED' : row.status;
}

/** Why an invitation that is not claimable (or cancellable) any more refuses. */
function notPending(status: InvitationRow['status']): ServiceError {
  if (status === 'CLAIMED') return new ServiceError('INVITATION_ALREADY_CLAIMED', 'the invitation has already been claimed');
  if (status === 'CANCELLED') return new ServiceError('INVITATION_CANCELLED', 'the invitation has been cancelled');
  return new ServiceError('INVITATION_EXPIRED', 'the invitation has expired');
}

export function createInvitationService(deps: InvitationServiceDeps) {
  const { database, clock, customers } = deps;

  function present(row: InvitationRow, now: Date): InvitationView {
    return {
      code: row.code,
      createdAt: row.created_at.toISOString(),
      ...(row.claimed_at && { claimedAt: row.claimed_at.toISOString() }),
      url: `${deps.urlBase}${row.code}`,
      ...(row.expires_at && { expiresAt: row.expires_at.toISOString() }),
      inviterUma: row.inviter_uma,
      ...(row.invitee_uma && { inviteeUma: row.invitee_uma }),
      status: statusAt(row, now),
      ...(row.first_name && { firstName: row.first_name }),
      ...(row.amount_to_send !== null && row.amount_currency && { amountToSend: { amount: row.amount_to_send, currency: currency(row.amount_currency) } }),
    };
  }

  /** The invitation and its inviter platform (whose clock decides expiry), or 404. */
  async function load(ctx: ServiceContext<Platform>, code: string, ex: Executor = database.db) {
    const row = await repo.findInvitation(ex, code);
    const platform = row && (row.platform_id === ctx.platform.id ? ctx.platform : await deps.platforms.get(row.platform_id));
    if (!row || !platform) throw new ServiceError('INVITATION_NOT_FOUND', 'invitation not found');
    return { row, platform, now: clock.now(platform) };
  }

  /** Refuses an invitation that is not PENDING; one found past its expiry is recorded EXPIRED first. */
  async function requirePending(row: InvitationRow, now: Date): Promise<void> {
    const status = statusAt(row, now);
    if (status === 'PENDING') return;
    if (row.status === 'PENDING') await repo.expireInvitation(database.db, row.code, now);
    throw notPending(status);
  }

  function amountCurrency(inviter: Customer, input: InvitationCreate): string | null {
    if (input.amountToSend === undefined) {
      if (input.currency !== undefined) throw invalidInput('currency', 'currency is only meaningful with amountToSend', 'dependency');
      return null;
    }
    const code = input.currency ?? inviter.currencies[0];
    if (!code || !inviter.currencies.includes(code)) {
      const message = `${code ?? 'no currency'} is not one of the inviter's currencies (${inviter.currencies.join(', ')})`;
      throw new ServiceError('INVALID_CURRENCY', message, { details: { errors: [{ field: 'currency', constraint: 'currency', message }] } });
    }
    return code;
  }

  function newRow(platform: Platform, inviter: Customer, input: InvitationCreate, now: Date): InvitationRow {
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    if (expiresAt && expiresAt <= now) throw invalidInput('expiresAt', `expiresAt must be after the platform's current time ${now.toISOString()}`, 'future');
    const code = amountCurrency(inviter, input);
    return {
      code: newCode(),
      platform_id: platform.id,
      inviter_customer_id: inviter.id,
      inviter_uma: inviter.umaAddress,
      invitee_uma: null,
      first_name: input.firstName ?? null,
      amount_to_send: code ? input.amountToSend! : null,
      amount_currency: code,
      status: 'PENDING',
      claimed_by_platform_id: null,
      created_at: now,
      expires_at: expiresAt,
      claimed_at: null,
      cancelled_at: null,
      updated_at: now,
    };
  }

  async function create(ctx: ServiceContext<Platform>, input: InvitationCreate): Promise<InvitationView> {
    const { platform } = ctx;
    checkUma('inviterUma', input.inviterUma);
    const inviter = await customers.findActive(database.db, platform.id, { umaAddress: input.inviterUma });
    if (!inviter) throw userNotFound('inviterUma', 'no customer of this platform has this UMA address');
    const now = clock.now(platform);
    const row = newRow(platform, inviter, input, now);
    return ctx.tx(async (trx) => {
      // Under the inviter's row lock: a deletion that committed since the lookup above is a 404;
      // one still running waits, then cancels this invitation (cancelCustomerInvitations).
      if (!(await customers.lockActive(trx, platform.id, inviter.id))) throw userNotFound('inviterUma', 'no customer of this platform has this UMA address');
      await repo.insertInvitation(trx, row);
      if (row.expires_at) await enqueueJobs(trx, platform, [{ kind: EXPIRY_JOB, payload: { code: row.code }, runAt: row.expires_at }], clock);
      return present(row, now);
    });
  }

  async function get(ctx: ServiceContext<Platform>, code: string): Promise<InvitationView> {
    const { row, now } = await load(ctx, code);
    return present(row, now);
  }

  async function claim(ctx: ServiceContext<Platform>, code: string, input: InvitationClaim): Promise<InvitationView> {
    checkUma('inviteeUma', input.inviteeUma);
    const { row, platform: inviterPlatform, now } = await load(ctx, code);
    await requirePending(row, now);
    const invitee = await customers.findActive(database.db, ctx.platform.id, { umaAddress: input.inviteeUma });
    if (!invitee) throw userNotFound('inviteeUma', 'no customer of your platform has this UMA address');
    if (invitee.id === row.inviter_customer_id) throw invalidInput('inviteeUma', 'the inviter cannot claim their own invitation', 'self');
    const view = await ctx.tx(async (trx) => {
      const claimed = await repo.claimInvitation(trx, code, { inviteeUma: invitee.umaAddress, platformId: ctx.platform.id, now });
      if (!claimed) throw notPending(statusAt((await repo.findInvitation(trx, code))!, now));
      const claimedView = present(claimed, now);
      await emitEvents(trx, inviterPlatform, [{ type: 'INVITATION.CLAIMED', data: claimedView }], clock);
      return claimedView;
    });
    deps.wakeWebhooks?.();
    return view;
  }

  async function cancel(ctx: ServiceContext<Platform>, code: string): Promise<InvitationView> {
    const { row, now } = await load(ctx, code);
    if (row.platform_id !== ctx.platform.id) throw new ServiceError('FORBIDDEN', 'only the platform that created the invitation can cancel it');
    await requirePending(row, now);
    return ctx.tx(async (trx) => {
      const cancelled = await repo.cancelInvitation(trx, ctx.platform.id, code, now);
      if (!cancelled) throw notPending(statusAt((await repo.findInvitation(trx, code))!, now));
      return present(cancelled, now);
    });
  }

  /**
   * In the transaction that deletes a customer: its pending invitations are cancelled, since a
   * claim would ask the platform to pay from a customer that no longer exists.
   */
  async function cancelCustomerInvitations(trx: Trx, platform: PlatformRef, customerId: string): Promise<void> {
    await repo.cancelInvitationsOf(trx, platform.id, customerId, clock.now(platform));
  }

  /** The expiry job; one that runs early (another process's clock) schedules itself again. */
  async function expire(job: ClaimedJob): Promise<void> {
    const code = String(job.payload.code);
    const row = await repo.findInvitation(database.db, code);
    const platform = row?.status === 'PENDING' && row.expires_at ? await platformAsOfDue(job, (id) => deps.platforms.get(id)) : undefined;
    if (!row?.expires_at || !platform) return;
    const now = clock.now(platform);
    if (now >= row.expires_at) {
      await repo.expireInvitation(database.db, code, now);
      return;
    }
    await transact(database.db, (trx) => enqueueJobs(trx, platform, [{ kind: EXPIRY_JOB, payload: { code }, runAt: row.expires_at! }], clock));
  }

  function registerJobs(jobs: JobRunner): void {
    jobs.register(EXPIRY_JOB, expire);
  }

  return { create, get, claim, cancel, cancelCustomerInvitations, registerJobs };
}

export type InvitationService = ReturnType<typeof createInvitationService>;
