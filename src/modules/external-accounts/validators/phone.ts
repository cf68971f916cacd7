import { checkE164 } from './common.js';
import { problem, type Problem } from './problem.js';

/** Dialling code and the shape of a mobile subscriber number, per country with mobile-money payouts. */
const MOBILE_NUMBERS: Record<string, { dial: string; national: RegExp; example: string }> = {
  BD: { dial: '880', national: /^1[3-9][0-9]{8}$/, example: '+8801712345678' },
  BJ: { dial: '229', national: /^(01[0-9]{8}|[4-9][0-9]{7})$/, example: '+2290197123456' },
  BW: { dial: '267', national: /^7[0-9]{7}$/, example: '+26771234567' },
  CG: { dial: '242', national: /^0[4-6][0-9]{7}$/, example: '+242061234567' },
  CI: { dial: '225', national: /^0[157][0-9]{8}$/, example: '+2250712345678' },
  CM: { dial: '237', national: /^6[0-9]{8}$/, example: '+237671234567' },
  GH: { dial: '233', national: /^[235][0-9]{8}$/, example: '+233241234567' },
  HT: { dial: '509', national: /^[2-5][0-9]{7}$/, example: '+50934123456' },
  ID: { dial: '62', national: /^8[0-9]{8,11}$/, example: '+6281234567890' },
  KE: { dial: '254', national: /^[17][0-9]{8}$/, example: '+254712345678' },
  MW: { dial: '265', national: /^[89][0-9]{8}$/, example: '+265991234567' },
  PK: { dial: '92', national: /^3[0-9]{9}$/, example: '+923001234567' },
  RW: { dial: '250', national: /^7[2-9][0-9]{7}$/, example: '+250781234567' },
  SN: { dial: '221', national: /^7[0-9]{8}$/, example: '+221771234567' },
  TG: { dial: '228', national: /^[79][0-9]{7}$/, example: '+22890123456' },
  TZ: { dial: '255', national: /^[67][0-9]{8}$/, example: '+255712345678' },
  UG: { dial: '256', national: /^7[0-9]{8}$/, example: '+256712345678' },
  ZM: { dial: '260', national: /^[79][0-9]{8}$/, example: '+260971234567' },
};

export const MOBILE_MONEY_COUNTRIES = Object.keys(MOBILE_NUMBERS);

/** A mobile number in E.164 form that belongs to `country`'s numbering plan. */
export function checkMobileNumber(value: string, country: string): Problem | undefined {
  const e164 = checkE164(value);
  if (e164) return e164;
  const plan = MOBILE_NUMBERS[country];
  if (!plan) return undefined;
  if (!value.startsWith(`+${plan.dial}`)) return problem('country', `must be a ${country} number starting with +${plan.dial}`);
  return plan.national.test(value.slice(plan.dial.length + 1))
    ? undefined
    : problem('format', `is not a ${country} mobile number (e.g. ${plan.example})`);
}

/** The example number for a country (used in documentation and tests). */
export function exampleMobileNumber(country: string): string | undefined {
  return MOBILE_NUMBERS[country]?.example;
}
