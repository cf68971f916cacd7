import { ServiceError, type FieldError } from '../../core/errors.js';
import type { DiscoveryService } from '../discovery/service.js';
import { accountTypeDef, identifierOf, text, type AccountInfo, type AccountTypeDef } from './account-types/index.js';
import { checkBeneficiary } from './validators/beneficiary.js';
import type { FieldProblem } from './validators/problem.js';

export interface ValidatedAccount {
  def: AccountTypeDef;
  /** accountInfo with bankName replaced by the catalogue's canonical name. */
  info: AccountInfo;
  identifier: { field: string; value: string };
}

function prefixed(prefix: string, problems: FieldProblem[]): FieldError[] {
  return problems.map(({ field, constraint, message }) => ({ field: `${prefix}${field}`, constraint, message }));
}

function currencyProblem(def: AccountTypeDef, currency: string): FieldError[] {
  if (def.currencies.includes(currency)) return [];
  const allowed = def.currencies.join(' or ');
  return [{ field: 'currency', constraint: 'enum', message: `${def.accountType} accounts hold ${allowed}, not ${currency}` }];
}

/** Resolves bankName against discovery: the account's country and currency must list it. */
function resolveBankName(def: AccountTypeDef, info: AccountInfo, currency: string, discovery: Pick<DiscoveryService, 'findInstitution'>) {
  const bankName = text(info, 'bankName');
  if (bankName === undefined) return { info, errors: [] };
  const institution = discovery.findInstitution(bankName, { country: def.country, currency });
  if (institution) return { info: { ...info, bankName: institution.bankName }, errors: [] };
  const where = def.country ? `country=${def.country}&currency=${currency}` : `currency=${currency}`;
  const message = `"${bankName}" is not a known institution; use a bankName from GET /discoveries?${where}`;
  return { info, errors: [{ field: 'accountInfo.bankName', constraint: 'enum', message }] };
}

/**
 * Everything the schema cannot say about an account: currency per type, checksums and formats
 * of identifiers, bankName from discovery, beneficiary dates and countries. All problems are
 * reported together as one INVALID_INPUT.
 */
export function validateAccount(
  input: { currency: string; accountInfo: AccountInfo },
  discovery: Pick<DiscoveryService, 'findInstitution'>,
  today: Date,
): ValidatedAccount {
  const def = accountTypeDef(input.accountInfo.accountType);
  const fieldProblems: FieldProblem[] = [];
  def.check(input.accountInfo, fieldProblems);
  const bank = resolveBankName(def, input.accountInfo, input.currency, discovery);
  const beneficiary = input.accountInfo.beneficiary;
  const errors = [
    ...currencyProblem(def, input.currency),
    ...prefixed('accountInfo.', fieldProblems),
    ...bank.errors,
    ...(beneficiary ? prefixed('accountInfo.beneficiary.', checkBeneficiary(beneficiary, today)) : []),
  ];
  if (errors.length > 0) {
    throw new ServiceError('INVALID_INPUT', `${errors[0].field}: ${errors[0].message}`, { details: { errors } });
  }
  return { def, info: bank.info, identifier: identifierOf(def, bank.info) };
}
