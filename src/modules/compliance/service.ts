import type { ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import type { Platform } from '../platform/service.js';
import type { ComplianceServiceDeps } from './deps.js';
import { createDocumentStore } from './document-store.js';
import { createDocuments } from './documents.js';
import { createOwners } from './owners.js';
import type { KycLinkQuery, KycLinkView } from './schemas.js';
import { createVerifications } from './verifications.js';

export type { ComplianceServiceDeps } from './deps.js';

function checkRedirect(uri: string | undefined): void {
  if (uri === undefined) return;
  let protocol = '';
  try {
    protocol = new URL(uri).protocol;
  } catch {
    // reported below
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw invalidInput('querystring.redirectUri', 'redirectUri must be an http or https URL', 'format');
}

/**
 * Customer verification: KYC/KYB submissions and their sandbox or operator outcomes, beneficial
 * owners, documents with their files, and KYC links. Rules and magic values: docs/api/verification.md.
 */
export function createComplianceService(deps: ComplianceServiceDeps) {
  const store = createDocumentStore(deps.documentsDir);
  const owners = createOwners(deps);
  const documents = createDocuments({ ...deps, store, customerOfOwner: owners.customerOfOwner });
  const verifications = createVerifications(deps);

  /** GET /customers/kyc-link: a link to the hosted verification flow for an existing customer. */
  async function kycLink(ctx: ServiceContext<Platform>, query: KycLinkQuery): Promise<KycLinkView> {
    checkRedirect(query.redirectUri);
    const customer = await deps.customers.findActive(deps.database.db, ctx.platform.id, { platformCustomerId: query.platformCustomerId });
    if (!customer) throw new ServiceError('USER_NOT_FOUND', 'no customer of this platform has this platformCustomerId');
    const url = new URL(deps.kycLinkBase);
    url.searchParams.set('customerId', customer.id);
    url.searchParams.set('platformCustomerId', customer.platformCustomerId);
    if (query.redirectUri) url.searchParams.set('redirectUri', query.redirectUri);
    return { kycUrl: url.toString(), platformCustomerId: customer.platformCustomerId, customerId: customer.id };
  }

  deps.log.debug({ documentsDir: deps.documentsDir }, 'verification documents are stored on disk');
  void store.sweepIncoming(deps.clock.realNowMs()).catch(() => {});

  return { verifications, owners, documents, kycLink, documentsDir: store.root };
}

export type ComplianceService = ReturnType<typeof createComplianceService>;
