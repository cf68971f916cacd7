import type { ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { emitEvents, type EventType, type NewEvent } from '../../core/events.js';
import { newId } from '../../core/ids.js';
import type { Executor, Trx } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { Page } from '../../http/pagination.js';
import type { CustomerView, VerificationStatus } from '../customers/schemas.js';
import type { Customer } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import type { ComplianceServiceDeps } from './deps.js';
import * as documentsRepo from './document-repository.js';
import { combinedOutcome, sandboxOutcome, type Outcome } from './magic.js';
import * as repo from './repository.js';
import type { OwnerRow, VerificationRow } from './repository.js';
import { missingItems } from './requirements.js';
import type { VerificationErrorView, VerificationListQuery, VerificationRequest, VerificationState, VerificationView } from './schemas.js';

/** What a submission decides: the verification's status and the customer's resulting status. */
interface Verdict {
  status: VerificationState;
  customerStatus: VerificationStatus;
  errors: VerificationErrorView[];
}

const STATE_OF: Record<Outcome, VerificationState> = { APPROVED: 'APPROVED', PENDING: 'PENDING_MANUAL_REVIEW', REJECTED: 'REJECTED' };

function rejected(resourceId: string, reason: string): VerificationErrorView {
  return { resourceId, type: 'APPLICANT_REJECTED', reason };
}

/** Sandbox: the magic suffixes decide (SPEC 4.7); a business also takes its owners' KYC results. */
function sandboxVerdict(customer: Customer, owners: OwnerRow[]): Verdict {
  const own = sandboxOutcome(customer.customerType === 'INDIVIDUAL' ? customer.fullName : customer.businessInfo?.registrationNumber);
  const parties = [{ id: customer.id, outcome: own }, ...owners.map((o) => ({ id: o.id, outcome: (o.kyc_status === 'UNVERIFIED' ? 'PENDING' : o.kyc_status) as Outcome }))];
  const outcome = combinedOutcome(parties.map((p) => p.outcome));
  const errors = parties.filter((p) => p.outcome === 'REJECTED').map((p) => rejected(p.id, 'Rejected by the sandbox (value ending in 002)'));
  return { status: STATE_OF[outcome], customerStatus: outcome, errors };
}

export function present(row: VerificationRow): VerificationView {
  const statusField = row.customer_type === 'INDIVIDUAL' ? 'kycStatus' : 'kybStatus';
  return {
    id: row.id,
    customerId: row.customer_id,
    verificationStatus: row.status,
    errors: row.errors,
    [statusField]: row.customer_status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function customerEvent(customer: CustomerView): NewEvent {
  const [kind, status] = customer.customerType === 'INDIVIDUAL' ? ['KYC', customer.kycStatus] : ['KYB', customer.kybStatus];
  return { type: `CUSTOMER.${kind}_${status}` as EventType, data: customer };
}

export function createVerifications(deps: ComplianceServiceDeps) {
  const { database, clock, customers } = deps;
  const { db } = database;

  /** Records the verdict: the verification, the customer's status, and their events, together. */
  async function apply(trx: Trx, platform: Platform, row: VerificationRow, fresh: boolean) {
    if (fresh) await repo.insertVerification(trx, row);
    const events: NewEvent[] = [{ type: `VERIFICATION.${row.status}` as EventType, data: present(row) }];
    if (row.status !== 'RESOLVE_ERRORS') {
      const { changed, customer } = await customers.setVerificationStatus(trx, platform, row.customer_id, row.customer_status);
      if (changed && row.customer_status !== 'UNVERIFIED') events.push(customerEvent(customer));
    }
    await emitEvents(trx, platform, events, clock);
    return present(row);
  }

  async function verdictFor(ex: Executor, platform: Platform, customer: Customer): Promise<Verdict> {
    const owners = customer.customerType === 'BUSINESS' ? await repo.ownersOf(ex, platform.id, customer.id) : [];
    const documents = await documentsRepo.documentsOfCustomer(ex, platform.id, customer.id);
    const problems = missingItems(customer, owners, documents);
    if (problems.length > 0) return { status: 'RESOLVE_ERRORS', customerStatus: customer.verificationStatus, errors: problems };
    if (platform.mode === 'PRODUCTION') return { status: 'PENDING_MANUAL_REVIEW', customerStatus: 'PENDING', errors: [] };
    return sandboxVerdict(customer, owners);
  }

  /**
   * POST /verifications: checks what is missing, then decides (sandbox) or queues for the operator.
   * All under the customer's row lock: a deletion, a second submission or a document change
   * (documents.ts checks for an open verification under the same lock) waits, or went first and
   * is seen here.
   */
  async function submit(ctx: ServiceContext<Platform>, input: VerificationRequest): Promise<VerificationView> {
    const { platform } = ctx;
    const { view, decided } = await ctx.tx(async (trx) => {
      const customer = await customers.lockForDecision(trx, platform.id, input.customerId);
      if (!customer) throw new ServiceError('USER_NOT_FOUND', 'customer not found');
      const open = await repo.openVerificationOf(trx, platform.id, customer.id);
      if (open) return { view: present(open), decided: false };
      const verdict = await verdictFor(trx, platform, customer);
      const now = clock.now(platform);
      const row: VerificationRow = {
        id: newId('Verification'),
        platform_id: platform.id,
        customer_id: customer.id,
        status: verdict.status,
        errors: verdict.errors,
        customer_type: customer.customerType,
        customer_status: verdict.customerStatus,
        resolution_note: null,
        created_at: now,
        updated_at: now,
      };
      return { view: await apply(trx, platform, row, true), decided: true };
    });
    if (decided) deps.wakeWebhooks?.();
    return view;
  }

  async function get(ctx: ServiceContext, id: string): Promise<VerificationView> {
    const row = await repo.findVerification(db, ctx.platform.id, id);
    if (!row) throw new ServiceError('NOT_FOUND', 'verification not found');
    return present(row);
  }

  async function list(ctx: ServiceContext, query: VerificationListQuery): Promise<Page<VerificationView>> {
    const page = await repo.listVerifications(db, ctx.platform.id, query);
    return { data: page.rows.map(present), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  /**
   * The operator's decision on a verification waiting for manual review (`corridor verification
   * resolve`). Approving also approves the business's beneficial owners still pending.
   */
  async function resolve(id: string, decision: 'APPROVED' | 'REJECTED', note?: string): Promise<VerificationView> {
    const found = await repo.findVerification(db, null, id);
    const platform = found && (await deps.platforms.get(found.platform_id));
    if (!found || !platform) throw new ServiceError('NOT_FOUND', `verification ${id} not found`);
    const view = await transact(db, async (trx) => {
      if (!(await customers.lockForDecision(trx, platform.id, found.customer_id))) {
        throw new ServiceError('CONFLICT', `verification ${id} is of a customer deleted since; there is nobody to decide on`);
      }
      const now = clock.now(platform);
      const errors = decision === 'REJECTED' ? [rejected(found.customer_id, note ?? 'Rejected by the operator')] : [];
      const row = await repo.decideVerification(trx, id, { status: decision, customerStatus: decision, errors, note: note ?? null, now });
      if (!row) throw new ServiceError('CONFLICT', `verification ${id} is ${found.status}; only PENDING_MANUAL_REVIEW verifications can be resolved`);
      if (decision === 'APPROVED') await repo.settlePendingOwners(trx, platform.id, row.customer_id, 'APPROVED', now);
      return apply(trx, platform, row, false);
    });
    deps.wakeWebhooks?.();
    return view;
  }

  /** For the operator: verifications in `status` across platforms (or of one), oldest first, at most 1000. */
  async function listAll(platformId: string | undefined, status: VerificationState): Promise<VerificationView[]> {
    return (await repo.verificationsInStatus(db, platformId, status, 1000)).map(present);
  }

  return { submit, get, list, resolve, listAll };
}
