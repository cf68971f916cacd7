import { isCountryCode } from '../../../core/countries.js';
import { checkDigits, problem, type Problem } from './problem.js';

// IBAN length per country, from the SWIFT IBAN registry.
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28,
  CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18,
  FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22,
  IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20,
  LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18,
  NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31,
  SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29,
  VA: 22, VG: 24, XK: 20,
};

/** ISO 13616 mod-97 over the rearranged IBAN (letters as 10-35); 1 means valid. */
export function ibanRemainder(iban: string): number {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? char.charCodeAt(0) - 55 : Number(char);
    remainder = (remainder * (value > 9 ? 100 : 10) + value) % 97;
  }
  return remainder;
}

/** IBAN check digits for a country and BBAN (tests use it to build valid IBANs). */
export function ibanCheckDigits(country: string, bban: string): string {
  return String(98 - ibanRemainder(`${country}00${bban}`)).padStart(2, '0');
}

/**
 * An IBAN without spaces: registered country, that country's length, mod-97 check digits.
 * `countries` limits which countries' IBANs the account type accepts.
 */
export function checkIban(value: string, countries?: readonly string[]): Problem | undefined {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(value)) {
    return problem('format', 'IBAN must be uppercase letters and digits without spaces, starting with a country code and check digits');
  }
  const country = value.slice(0, 2);
  const length = IBAN_LENGTHS[country];
  if (!length) return problem('country', `${country} does not issue IBANs`);
  if (countries && !countries.includes(country)) return problem('country', `IBAN must be from ${countries.join(', ')}`);
  if (value.length !== length) return problem('length', `${country} IBANs are ${length} characters`);
  return ibanRemainder(value) === 1 ? undefined : problem('checksum', 'IBAN fails its mod-97 check digits');
}

/** UK sort code: 6 digits, no dashes. */
export function checkSortCode(value: string): Problem | undefined {
  return checkDigits(value, 6, 6, 'sort code');
}

/** UK account number: 8 digits. */
export function checkUkAccountNumber(value: string): Problem | undefined {
  return checkDigits(value, 8, 8, 'account number');
}

/**
 * SWIFT/BIC (ISO 9362): 4-letter institution, ISO country, 2-character location, optional
 * 3-character branch. `country`, when given, is the country the bank must be in.
 */
export function checkBic(value: string, country?: string): Problem | undefined {
  if (!/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(value)) {
    return problem('format', 'SWIFT/BIC must be 8 or 11 characters: bank (4 letters), country (2 letters), location (2), optional branch (3)');
  }
  const bicCountry = value.slice(4, 6);
  if (!isCountryCode(bicCountry)) return problem('country', `SWIFT/BIC country ${bicCountry} is not an ISO 3166-1 country`);
  if (country && bicCountry !== country) return problem('country', `SWIFT/BIC must belong to a bank in ${country}`);
  return undefined;
}
