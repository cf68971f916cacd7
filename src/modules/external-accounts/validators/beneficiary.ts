import { checkBirthDate, checkCountryCode, checkE164, checkEmail } from './common.js';
import { checkField, type FieldProblem } from './problem.js';

/**
 * Checks on a beneficiary (individual or business) beyond its schema: dates that exist and are
 * not in the future, real ISO country codes, E.164 phones. Paths are relative to the beneficiary.
 */
export function checkBeneficiary(beneficiary: Record<string, unknown>, today: Date): FieldProblem[] {
  const problems: FieldProblem[] = [];
  checkField(problems, 'birthDate', beneficiary.birthDate, (value) => checkBirthDate(value, today));
  checkField(problems, 'nationality', beneficiary.nationality, checkCountryCode);
  checkField(problems, 'countryOfResidence', beneficiary.countryOfResidence, checkCountryCode);
  checkField(problems, 'phoneNumber', beneficiary.phoneNumber, checkE164);
  checkField(problems, 'email', beneficiary.email, checkEmail);
  const address = beneficiary.address as Record<string, unknown> | undefined;
  if (address && typeof address === 'object') checkField(problems, 'address.country', address.country, checkCountryCode);
  return problems;
}
