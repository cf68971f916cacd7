import { utcDate } from '../../core/clock.js';
import { isCountryCode } from '../../core/countries.js';
import { ServiceError, type FieldError } from '../../core/errors.js';
import type { Platform } from '../platform/service.js';
import type { Address, BusinessInfo } from './schemas.js';

/** `$user@domain`: user 1-64 of a-z 0-9 . _ + - ; domain a host name, optionally with a port. */
export const UMA_ADDRESS = /^\$[a-z0-9._+-]{1,64}@[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$/i;

export function checkUmaAddress(address: string | undefined): void {
  if (address === undefined || UMA_ADDRESS.test(address)) return;
  const message = 'umaAddress must look like $name@domain (name: letters, digits, . _ + -; up to 64 characters)';
  throw new ServiceError('INVALID_UMA_ADDRESS', message, { details: { errors: [{ field: 'umaAddress', constraint: 'format', message }] } });
}

/** The fields of a create or update body that need more than schema validation. */
export interface CheckedFields {
  region?: string;
  kycStatus?: string;
  kybStatus?: string;
  birthDate?: string;
  nationality?: string;
  address?: Address;
  businessInfo?: BusinessInfo;
}

class Problems {
  readonly list: FieldError[] = [];
  add(field: string, constraint: string, message: string): void {
    this.list.push({ field, constraint, message });
  }
  country(field: string, code: string | undefined): void {
    if (code !== undefined && !isCountryCode(code)) this.add(field, 'country', `${code} is not an ISO 3166-1 alpha-2 country code`);
  }
  countries(field: string, codes: string[] | undefined): void {
    codes?.forEach((code, i) => this.country(`${field}.${i}`, code));
  }
  dateRange(field: string, value: string | undefined, earliest: string, latest: string): void {
    if (value === undefined) return;
    if (value > latest) this.add(field, 'maximum', `${field} cannot be in the future`);
    else if (value < earliest) this.add(field, 'minimum', `${field} must not be before ${earliest}`);
  }
}

function fail(code: 'INVALID_INPUT' | 'INVALID_CURRENCY', errors: FieldError[]): never {
  throw new ServiceError(code, `${errors[0].field}: ${errors[0].message}`, { details: { errors } });
}

/** Currencies must be among the platform's supported ones (INVALID_CURRENCY, as elsewhere in the API). */
export function checkCurrencies(currencies: string[] | undefined, platform: Platform): void {
  const supported = new Set(platform.supportedCurrencies.map((c) => c.currencyCode));
  const problems = new Problems();
  currencies?.forEach((code, i) => {
    if (!supported.has(code)) problems.add(`currencies.${i}`, 'currency', `${code} is not one of the platform's supported currencies`);
  });
  if (problems.list.length > 0) fail('INVALID_CURRENCY', problems.list);
}

/** Country codes, plausible dates and who may set verification statuses. */
export function checkCustomerFields(fields: CheckedFields, platform: Platform, now: Date): void {
  const today = utcDate(now);
  const problems = new Problems();
  problems.country('region', fields.region);
  problems.country('nationality', fields.nationality);
  problems.country('address.country', fields.address?.country);
  const business = fields.businessInfo;
  problems.country('businessInfo.country', business?.country);
  problems.countries('businessInfo.countriesOfOperation', business?.countriesOfOperation);
  problems.countries('businessInfo.expectedRecipientJurisdictions', business?.expectedRecipientJurisdictions);
  problems.dateRange('birthDate', fields.birthDate, '1900-01-01', today);
  problems.dateRange('businessInfo.incorporatedOn', business?.incorporatedOn, '1800-01-01', today);

  for (const field of ['kycStatus', 'kybStatus'] as const) {
    if (fields[field] !== undefined && !platform.isRegulatedFinancialInstitution) {
      problems.add(field, 'regulated', `${field} is set by Corridor's verification unless the platform is a regulated institution`);
    }
  }
  if (problems.list.length > 0) fail('INVALID_INPUT', problems.list);
}
