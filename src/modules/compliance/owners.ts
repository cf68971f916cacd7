import { utcDate } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { isCountryCode } from '../../core/countries.js';
import { invalidInput, ServiceError, type FieldError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Executor } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import type { Platform } from '../platform/service.js';
import type { ComplianceServiceDeps } from './deps.js';
import { screenPerson } from './magic.js';
import * as repo from './repository.js';
import type { OwnerRow } from './repository.js';
import type { BeneficialOwnerCreate, BeneficialOwnerListQuery, BeneficialOwnerUpdate, BeneficialOwnerView, PersonalInfo } from './schemas.js';

function present(row: OwnerRow): BeneficialOwnerView {
  return {
    id: row.id,
    customerId: row.customer_id,
    roles: row.roles,
    ownershipPercentage: row.ownership_percentage,
    personalInfo: row.personal_info,
    kycStatus: row.kyc_status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Country codes and a plausible birth date; schema validation has checked the shapes. */
function checkPersonalInfo(info: PersonalInfo, now: Date): void {
  const errors: FieldError[] = [];
  const country = (field: string, code: string | undefined) => {
    if (code !== undefined && !isCountryCode(code)) errors.push({ field, constraint: 'country', message: `${code} is not an ISO 3166-1 alpha-2 country code` });
  };
  country('personalInfo.nationality', info.nationality);
  country('personalInfo.address.country', info.address.country);
  country('personalInfo.countryOfIssuance', info.countryOfIssuance);
  if (info.birthDate > utcDate(now)) errors.push({ field: 'personalInfo.birthDate', constraint: 'maximum', message: 'birthDate cannot be in the future' });
  else if (info.birthDate < '1900-01-01') errors.push({ field: 'personalInfo.birthDate', constraint: 'minimum', message: 'birthDate must not be before 1900-01-01' });
  if (errors.length > 0) throw new ServiceError('INVALID_INPUT', `${errors[0].field}: ${errors[0].message}`, { details: { errors } });
}

const ownerNotFound = () => new ServiceError('NOT_FOUND', 'beneficial owner not found');

export function createOwners(deps: ComplianceServiceDeps) {
  const { database, clock, customers } = deps;
  const { db } = database;

  async function requireBusiness(ex: Executor, platformId: string, customerId: string) {
    const customer = await customers.requireCustomer(ex, platformId, customerId);
    if (customer.customerType !== 'BUSINESS') throw invalidInput('customerId', 'beneficial owners belong to BUSINESS customers', 'customerType');
    return customer;
  }

  /** The ownership shares of a business add up to at most 100%. */
  async function checkOwnershipTotal(ex: Executor, platformId: string, customerId: string, share: number, exceptId?: string): Promise<void> {
    const others = (await repo.ownersOf(ex, platformId, customerId)).filter((o) => o.id !== exceptId);
    const total = others.reduce((sum, o) => sum + o.ownership_percentage, share);
    if (total > 100) throw invalidInput('ownershipPercentage', `the owners of this business would own ${total}% together; at most 100% is possible`, 'maximum');
  }

  async function create(ctx: ServiceContext<Platform>, input: BeneficialOwnerCreate): Promise<BeneficialOwnerView> {
    const { platform } = ctx;
    const now = clock.now(platform);
    checkPersonalInfo(input.personalInfo, now);
    const row: OwnerRow = {
      id: newId('BeneficialOwner'),
      platform_id: platform.id,
      customer_id: input.customerId,
      roles: input.roles,
      ownership_percentage: input.ownershipPercentage,
      personal_info: input.personalInfo,
      kyc_status: screenPerson(platform.mode, input.personalInfo.lastName),
      created_at: now,
      updated_at: now,
    };
    return ctx.tx(async (trx) => {
      await repo.lockBusiness(trx, platform.id, input.customerId);
      await requireBusiness(trx, platform.id, input.customerId);
      await checkOwnershipTotal(trx, platform.id, input.customerId, input.ownershipPercentage);
      await repo.insertOwner(trx, row);
      return present(row);
    });
  }

  /** The owner, if its business exists and is not deleted (a deleted customer's owners are gone with it). */
  async function findActiveOwner(ex: Executor, platformId: string, id: string, lock = false): Promise<OwnerRow | undefined> {
    const row = await repo.findOwner(ex, platformId, id, lock);
    return row && (await customers.findActive(ex, platformId, { id: row.customer_id })) ? row : undefined;
  }

  async function get(ctx: ServiceContext, id: string): Promise<BeneficialOwnerView> {
    const row = await findActiveOwner(db, ctx.platform.id, id);
    if (!row) throw ownerNotFound();
    return present(row);
  }

  async function list(ctx: ServiceContext, query: BeneficialOwnerListQuery): Promise<Page<BeneficialOwnerView>> {
    await requireBusiness(db, ctx.platform.id, query.customerId);
    const page = await repo.listOwners(db, ctx.platform.id, query.customerId, query);
    return { data: page.rows.map(present), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  /** Changes the fields sent; a changed identity is screened again (sandbox: lastName suffix; production: PENDING). */
  async function update(ctx: ServiceContext<Platform>, id: string, patch: BeneficialOwnerUpdate): Promise<BeneficialOwnerView> {
    const { platform } = ctx;
    const now = clock.now(platform);
    return ctx.tx(async (trx) => {
      const unlocked = await repo.findOwner(trx, platform.id, id);
      if (!unlocked) throw ownerNotFound();
      await repo.lockBusiness(trx, platform.id, unlocked.customer_id);
      const current = await findActiveOwner(trx, platform.id, id, true);
      if (!current) throw ownerNotFound();
      const personalInfo = patch.personalInfo && { ...current.personal_info, ...patch.personalInfo };
      if (personalInfo) checkPersonalInfo(personalInfo, now);
      if (patch.ownershipPercentage !== undefined) await checkOwnershipTotal(trx, platform.id, current.customer_id, patch.ownershipPercentage, id);
      const updated = await repo.updateOwner(
        trx,
        id,
        {
          ...(patch.roles && { roles: patch.roles }),
          ...(patch.ownershipPercentage !== undefined && { ownership_percentage: patch.ownershipPercentage }),
          ...(personalInfo && { personal_info: personalInfo, kyc_status: screenPerson(platform.mode, personalInfo.lastName) }),
        },
        now,
      );
      return present(updated);
    });
  }

  /** The business a document holder id names (a BeneficialOwner's customer); undefined when unknown or deleted. */
  async function customerOfOwner(ex: Executor, platformId: string, ownerId: string): Promise<string | undefined> {
    return (await findActiveOwner(ex, platformId, ownerId))?.customer_id;
  }

  /** The owners of business customers as the customer views embed them, by customer id. */
  async function viewsByCustomer(ex: Executor, platformId: string, customerIds: readonly string[]): Promise<Map<string, BeneficialOwnerView[]>> {
    const byCustomer = new Map<string, BeneficialOwnerView[]>();
    for (const row of await repo.ownersOfAll(ex, platformId, customerIds)) {
      const views = byCustomer.get(row.customer_id) ?? [];
      views.push(present(row));
      byCustomer.set(row.customer_id, views);
    }
    return byCustomer;
  }

  return { create, get, list, update, customerOfOwner, viewsByCustomer };
}
