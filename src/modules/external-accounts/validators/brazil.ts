import { checkEmail, checkUuid } from './common.js';
import { checkDigits, problem, type Problem } from './problem.js';

export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

function mod11Digit(digits: number[], weights: number[]): number {
  const rest = digits.reduce((sum, d, i) => sum + d * weights[i], 0) % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** Brazilian individual tax id: 11 digits, the last two mod-11 check digits. */
export function checkCpf(value: string): Problem | undefined {
  const digits = checkDigits(value, 11, 11, 'CPF');
  if (digits) return digits;
  // Repeated digits pass the arithmetic but are never issued.
  if (/^(\d)\1{10}$/.test(value)) return problem('checksum', 'CPF is not a valid number');
  const d = [...value].map(Number);
  const first = mod11Digit(d.slice(0, 9), [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  const second = mod11Digit(d.slice(0, 10), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return first === d[9] && second === d[10] ? undefined : problem('checksum', 'CPF fails its check digits');
}

/** Brazilian company tax id: 14 digits, the last two mod-11 check digits. */
export function checkCnpj(value: string): Problem | undefined {
  const digits = checkDigits(value, 14, 14, 'CNPJ');
  if (digits) return digits;
  if (/^(\d)\1{13}$/.test(value)) return problem('checksum', 'CNPJ is not a valid number');
  const d = [...value].map(Number);
  const first = mod11Digit(d.slice(0, 12), [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  const second = mod11Digit(d.slice(0, 13), [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return first === d[12] && second === d[13] ? undefined : problem('checksum', 'CNPJ fails its check digits');
}

/** A taxId for a PIX account: a CPF (11 digits) or a CNPJ (14 digits). */
export function checkBrazilianTaxId(value: string): Problem | undefined {
  if (value.length === 14) return checkCnpj(value);
  if (value.length === 11) return checkCpf(value);
  return problem('length', 'taxId must be a CPF (11 digits) or a CNPJ (14 digits)');
}

/** PIX phone keys are Brazilian numbers in E.164: +55, 2-digit area code, 8-9 digit number. */
export function checkPixPhone(value: string): Problem | undefined {
  return /^\+55[1-9][0-9][0-9]{8,9}$/.test(value) ? undefined : problem('format', 'PIX phone key must be +55 followed by area code and number');
}

/** A PIX key in the form its declared type requires. */
export function checkPixKey(key: string, type: PixKeyType): Problem | undefined {
  switch (type) {
    case 'CPF':
      return checkCpf(key);
    case 'CNPJ':
      return checkCnpj(key);
    case 'EMAIL':
      return key.length > 77 ? problem('length', 'PIX email keys are at most 77 characters') : checkEmail(key);
    case 'PHONE':
      return checkPixPhone(key);
    case 'RANDOM':
      return checkUuid(key, 'random PIX key (EVP)');
  }
}
