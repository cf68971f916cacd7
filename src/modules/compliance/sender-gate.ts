import { sql, type Expression, type SqlBool } from 'kysely';
import { ServiceError } from '../../core/errors.js';
import type { Executor } from '../../db/database.js';
import type { CustomerService } from '../customers/service.js';
import type { VerificationStatus } from '../customers/schemas.js';

/** What the rule needs to know about the platform. */
export interface GatedPlatform {
  id: string;
  isRegulatedFinancialInstitution: boolean;
}

/** What the rule needs to know about the sending customer. */
export interface Sender {
  id: string;
  verificationStatus: VerificationStatus;
}

/**
 * The send rule (SPEC 2.16): on a platform that is not a regulated financial institution, a
 * customer sends money only once Corridor's verification approved them (kycStatus or kybStatus
 * APPROVED). Regulated platforms verify their customers themselves, so nothing is checked there.
 * Quotes (creation and execution) and transfers out call it; agents spend through those.
 */
export interface SenderGate {
  /** Throws 403 USER_NOT_READY unless `sender` may send on `platform`. */
  check(platform: GatedPlatform, sender: Sender): void;
  /** The same for a customer known by id; reads it only when the platform's rule needs it. */
  checkId(ex: Executor, platform: GatedPlatform, customerId: string): Promise<void>;
  /**
   * The rule as a condition inside a statement (true when the customer may send), for a caller
   * that checks it there and, when it does not hold, calls `checkId` for the error.
   */
  condition(platform: GatedPlatform, customerId: string): Expression<SqlBool>;
}

export function createSenderGate(customers: Pick<CustomerService, 'requireCustomer' | 'approvedCondition'>): SenderGate {
  function check(platform: GatedPlatform, sender: Sender): void {
    if (platform.isRegulatedFinancialInstitution || sender.verificationStatus === 'APPROVED') return;
    throw new ServiceError(
      'USER_NOT_READY',
      `customer ${sender.id} is not verified (status ${sender.verificationStatus}); on this platform customers must pass verification (POST /verifications) before they send`,
      { details: { customerId: sender.id, verificationStatus: sender.verificationStatus } },
    );
  }

  async function checkId(ex: Executor, platform: GatedPlatform, customerId: string): Promise<void> {
    if (platform.isRegulatedFinancialInstitution) return;
    check(platform, await customers.requireCustomer(ex, platform.id, customerId));
  }

  function condition(platform: GatedPlatform, customerId: string): Expression<SqlBool> {
    return platform.isRegulatedFinancialInstitution ? sql<SqlBool>`true` : customers.approvedCondition(platform.id, customerId);
  }

  return { check, checkId, condition };
}
