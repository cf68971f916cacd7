import { checkDigits, problem, type Problem } from './problem.js';

// First two digits of a valid ABA number: Fed districts (01-12), thrifts (21-32),
// electronic (61-72), traveller's cheques (80) and the U.S. government (00).
const ROUTING_PREFIX = /^(0[0-9]|1[0-2]|2[1-9]|3[0-2]|6[1-9]|7[0-2]|80)/;

/** US ABA routing number: 9 digits whose 3-7-1 weighted sum is a multiple of 10. */
export function checkAbaRoutingNumber(value: string): Problem | undefined {
  const digits = checkDigits(value, 9, 9, 'routing number');
  if (digits) return digits;
  if (!ROUTING_PREFIX.test(value)) return problem('format', 'routing number does not start with a valid Federal Reserve prefix');
  const d = [...value].map(Number);
  const sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
  return sum % 10 === 0 ? undefined : problem('checksum', 'routing number fails the ABA check digit');
}

/** US bank account numbers: 4-17 digits (the NACHA field width). */
export function checkUsAccountNumber(value: string): Problem | undefined {
  return checkDigits(value, 4, 17, 'account number');
}

/** The CLABE check digit over its first 17 digits (weights 3, 7, 1 repeating). */
export function clabeCheckDigit(first17: string): number {
  const weights = [3, 7, 1];
  const sum = [...first17].reduce((acc, digit, i) => acc + ((Number(digit) * weights[i % 3]) % 10), 0);
  return (10 - (sum % 10)) % 10;
}

/** Mexican CLABE: 18 digits (bank, branch, account, check digit). */
export function checkClabe(value: string): Problem | undefined {
  const digits = checkDigits(value, 18, 18, 'CLABE');
  if (digits) return digits;
  return clabeCheckDigit(value.slice(0, 17)) === Number(value[17]) ? undefined : problem('checksum', 'CLABE fails its check digit');
}

/** Canadian financial institution number (3 digits). */
export function checkCanadianInstitution(value: string): Problem | undefined {
  return checkDigits(value, 3, 3, 'institution number');
}

/** Canadian branch transit number (5 digits). */
export function checkCanadianTransit(value: string): Problem | undefined {
  return checkDigits(value, 5, 5, 'transit number');
}

export function checkCanadianAccountNumber(value: string): Problem | undefined {
  return checkDigits(value, 7, 12, 'account number');
}

/** A domestic account number of `min`-`max` digits, for rails without a published checksum. */
export function bankAccountDigits(min: number, max: number): (value: string) => Problem | undefined {
  return (value) => checkDigits(value, min, max, 'account number');
}
