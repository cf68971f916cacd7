import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';
import type { CustomerService } from '../customers/service.js';
import type { PlatformService } from '../platform/service.js';

export interface DocumentQuota {
  /** Most documents of one customer and its beneficial owners. */
  perCustomer: number;
  /** Most bytes stored for one platform. */
  platformBytes: number;
}

export interface ComplianceServiceDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  customers: Pick<CustomerService, 'requireCustomer' | 'setVerificationStatus' | 'findActive' | 'lockActive' | 'lockForDecision'>;
  platforms: Pick<PlatformService, 'get'>;
  /** Where document files live (config.documentsDir). */
  documentsDir: string;
  /** Largest accepted document file (config.documentMaxBytes). */
  documentMaxBytes: number;
  /** Storage quota (config.documentsPerCustomer, config.documentStoragePerPlatform). */
  documentQuota: DocumentQuota;
  /** Base of KYC links (config.kycLinkUrl, else `<PUBLIC_URL>/kyc`). */
  kycLinkBase: string;
  /** Nudges webhook delivery after status changes. */
  wakeWebhooks?: () => void;
}
