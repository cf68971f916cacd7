import { Type } from 'typebox';
import { bankAccountDigits } from '../validators/americas.js';
import { checkIfsc, checkVpa } from '../validators/asia.js';
import { checkBic, checkIban } from '../validators/europe.js';
import { checkMobileNumber } from '../validators/phone.js';
import { individualBeneficiary } from './beneficiary.js';
import { checks, define, firstOf, requireAny, text, type AccountInfo } from './define.js';
import { field } from './fields.js';

/** A bank account named by bankName + account number + SWIFT code (common across Asia). */
function swiftBank(currency: string, country: string, digits: [number, number], phone?: string) {
  const [min, max] = digits;
  return define({
    accountType: `${currency}_ACCOUNT`,
    title: `${currency} bank account`,
    currencies: [currency],
    country,
    fields: {
      bankName: field.bankName(country),
      accountNumber: field.accountNumber(`Account number, ${min}-${max} digits.`),
      swiftCode: field.swiftCode(`SWIFT/BIC of the receiving bank; must be a bank in ${country}.`),
      ...(phone && { phoneNumber: field.mobileNumber(phone, 'Phone number of the account holder, E.164.') }),
    },
    individual: individualBeneficiary(),
    paymentRails: currency === 'SGD' ? ['PAYNOW', 'FAST', 'BANK_TRANSFER'] : ['BANK_TRANSFER'],
    railsFor: () => (currency === 'SGD' ? ['FAST', 'BANK_TRANSFER'] : ['BANK_TRANSFER']),
    check: checks({
      accountNumber: bankAccountDigits(min, max),
      swiftCode: (v) => checkBic(v, country),
      ...(phone && { phoneNumber: (v: string) => checkMobileNumber(v, country) }),
    }),
  });
}

/** A bank account named by bankName + account number only. */
function namedBank(currency: string, country: string, accountNumber: ReturnType<typeof field.accountNumber>, digits: [number, number]) {
  return define({
    accountType: `${currency}_ACCOUNT`,
    title: `${currency} bank account`,
    currencies: [currency],
    country,
    fields: { accountNumber, bankName: field.bankName(country) },
    individual: individualBeneficiary(),
    paymentRails: ['BANK_TRANSFER'],
    check: checks({ accountNumber: bankAccountDigits(...digits) }),
  });
}

/** Bank transfer when there is an account number, mobile money when there is only a phone number. */
function bankOrMobile(info: AccountInfo): string[] {
  const rails = [];
  if (text(info, 'accountNumber') || text(info, 'iban')) rails.push('BANK_TRANSFER');
  if (text(info, 'phoneNumber')) rails.push('MOBILE_MONEY');
  return rails;
}

/** Bank accounts in Asia, the Middle East and Africa. */
export const EASTERN_BANK_TYPES = [
  swiftBank('HKD', 'HK', [6, 17]),
  swiftBank('IDR', 'ID', [6, 20], '^\\+62[0-9]{9,12}$'),
  swiftBank('MYR', 'MY', [6, 18]),
  swiftBank('SGD', 'SG', [6, 17]),
  swiftBank('THB', 'TH', [10, 15]),
  swiftBank('VND', 'VN', [6, 19]),
  namedBank('NGN', 'NG', field.accountNumber('Ten-digit NUBAN account number.', { pattern: '^[0-9]{10}$', minLength: 10, maxLength: 10 }), [10, 10]),
  namedBank('PHP', 'PH', field.accountNumber('Account number, 8-16 digits.', { pattern: '^[0-9]{8,16}$', minLength: 8, maxLength: 16 }), [8, 16]),
  namedBank('ZAR', 'ZA', field.accountNumber('Account number, 9-13 digits.', { pattern: '^[0-9]{9,13}$', minLength: 9, maxLength: 13 }), [9, 13]),
  define({
    accountType: 'INR_ACCOUNT',
    title: 'INR account (UPI or IMPS)',
    currencies: ['INR'],
    country: 'IN',
    fields: {
      vpa: Type.Optional(Type.String({ minLength: 3, maxLength: 255, description: 'UPI address (VPA), e.g. priya.sharma@okhdfc. Give this, or accountNumber and ifscCode.' })),
      accountNumber: Type.Optional(field.accountNumber('Corridor extension: bank account number (9-18 digits) for IMPS, with ifscCode.')),
      ifscCode: Type.Optional(Type.String({ pattern: '^[A-Z]{4}0[A-Z0-9]{6}$', description: 'Corridor extension: IFSC of the branch (e.g. HDFC0000123), with accountNumber.' })),
    },
    individual: individualBeneficiary(),
    paymentRails: ['UPI', 'IMPS'],
    railsFor: (info) => (text(info, 'vpa') ? ['UPI'] : ['IMPS']),
    identifierField: (info) => firstOf(info, ['vpa', 'accountNumber']),
    check: (info, problems) => {
      checks({ vpa: checkVpa, accountNumber: bankAccountDigits(9, 18), ifscCode: checkIfsc })(info, problems);
      if (text(info, 'vpa')) return;
      requireAny(info, problems, ['vpa', 'accountNumber']);
      if (text(info, 'accountNumber')) requireAny(info, problems, ['ifscCode']);
    },
  }),
  define({
    accountType: 'AED_ACCOUNT',
    title: 'AED bank account',
    currencies: ['AED'],
    country: 'AE',
    fields: {
      iban: field.iban('^AE[0-9]{21}$', 23, 23, 'UAE IBAN (AE + 21 digits); check digits are verified.'),
      swiftCode: Type.Optional(field.swiftCode()),
    },
    individual: individualBeneficiary(),
    paymentRails: ['BANK_TRANSFER'],
    identifierField: () => 'iban',
    check: checks({ iban: (v) => checkIban(v, ['AE']), swiftCode: (v) => checkBic(v, 'AE') }),
  }),
  define({
    accountType: 'EGP_ACCOUNT',
    title: 'EGP bank account',
    currencies: ['EGP'],
    country: 'EG',
    fields: {
      bankName: field.bankName('EG'),
      accountNumber: field.accountNumber('Account number, 5-29 digits.'),
      iban: Type.Optional(field.iban('^EG[0-9]{27}$', 29, 29, 'Egyptian IBAN (EG + 27 digits); check digits are verified.')),
      swiftCode: Type.Optional(field.swiftCode()),
    },
    individual: individualBeneficiary({ required: ['address', 'countryOfResidence', 'phoneNumber'] }),
    paymentRails: ['BANK_TRANSFER'],
    check: checks({ accountNumber: bankAccountDigits(5, 29), iban: (v) => checkIban(v, ['EG']), swiftCode: (v) => checkBic(v, 'EG') }),
  }),
  define({
    accountType: 'PKR_ACCOUNT',
    title: 'PKR bank or mobile-money account',
    currencies: ['PKR'],
    country: 'PK',
    fields: {
      accountNumber: Type.Optional(field.accountNumber('Account number, 8-20 digits.')),
      iban: Type.Optional(field.iban('^PK[0-9]{2}[A-Z]{4}[0-9]{16}$', 24, 24, 'Pakistani IBAN; check digits are verified.')),
      phoneNumber: Type.Optional(field.mobileNumber(undefined, 'Mobile wallet number (+92…), for JazzCash or Easypaisa.')),
      bankName: Type.Optional(field.bankName('PK')),
    },
    individual: individualBeneficiary(),
    paymentRails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
    railsFor: bankOrMobile,
    identifierField: (info) => firstOf(info, ['iban', 'accountNumber', 'phoneNumber']),
    check: (info, problems) => {
      checks({ accountNumber: bankAccountDigits(8, 20), iban: (v) => checkIban(v, ['PK']), phoneNumber: (v) => checkMobileNumber(v, 'PK') })(info, problems);
      requireAny(info, problems, ['iban', 'accountNumber', 'phoneNumber']);
    },
  }),
  define({
    accountType: 'BDT_ACCOUNT',
    title: 'BDT bank or mobile-money account',
    currencies: ['BDT'],
    country: 'BD',
    fields: {
      accountNumber: Type.Optional(field.accountNumber('Account number, 8-20 digits.')),
      branchCode: Type.Optional(field.branchCode()),
      swiftCode: Type.Optional(field.swiftCode()),
      phoneNumber: Type.Optional(field.mobileNumber(undefined, 'Mobile wallet number (+880…), for bKash or Nagad.')),
    },
    individual: individualBeneficiary(),
    paymentRails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
    railsFor: bankOrMobile,
    identifierField: (info) => firstOf(info, ['accountNumber', 'phoneNumber']),
    check: (info, problems) => {
      checks({ accountNumber: bankAccountDigits(8, 20), swiftCode: (v) => checkBic(v, 'BD'), phoneNumber: (v) => checkMobileNumber(v, 'BD') })(info, problems);
      requireAny(info, problems, ['accountNumber', 'phoneNumber']);
    },
  }),
  define({
    accountType: 'GHS_ACCOUNT',
    title: 'GHS bank or mobile-money account',
    currencies: ['GHS'],
    country: 'GH',
    fields: {
      accountNumber: Type.Optional(field.accountNumber('Account number, 8-20 digits.')),
      phoneNumber: Type.Optional(field.mobileNumber(undefined, 'Mobile-money number (+233…).')),
    },
    individual: individualBeneficiary(),
    paymentRails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
    railsFor: bankOrMobile,
    identifierField: (info) => firstOf(info, ['accountNumber', 'phoneNumber']),
    check: (info, problems) => {
      checks({ accountNumber: bankAccountDigits(8, 20), phoneNumber: (v) => checkMobileNumber(v, 'GH') })(info, problems);
      requireAny(info, problems, ['accountNumber', 'phoneNumber']);
    },
  }),
];
