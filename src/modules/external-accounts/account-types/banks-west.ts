import { Type } from 'typebox';
import { StringEnum } from '../../../http/common-schemas.js';
import {
  bankAccountDigits,
  checkAbaRoutingNumber,
  checkCanadianAccountNumber,
  checkCanadianInstitution,
  checkCanadianTransit,
  checkClabe,
  checkUsAccountNumber,
} from '../validators/americas.js';
import { checkBrazilianTaxId, checkPixKey, PIX_KEY_TYPES, type PixKeyType } from '../validators/brazil.js';
import { checkBic, checkIban, checkSortCode, checkUkAccountNumber } from '../validators/europe.js';
import { checkField } from '../validators/problem.js';
import { documentFields, individualBeneficiary, registrationNumberField } from './beneficiary.js';
import { checks, define } from './define.js';
import { field } from './fields.js';

/** Bank accounts in the Americas and Europe. */
export const WESTERN_BANK_TYPES = [
  define({
    accountType: 'USD_ACCOUNT',
    title: 'USD bank account',
    currencies: ['USD'],
    country: 'US',
    fields: {
      accountNumber: field.accountNumber('US bank account number, 4-17 digits.'),
      routingNumber: Type.String({ pattern: '^[0-9]{9}$', minLength: 9, maxLength: 9, description: 'Nine-digit ABA routing number; its check digit is verified.' }),
      bankAccountType: Type.Optional(field.bankAccountType()),
      bankName: Type.Optional(field.bankName('US')),
      platformAccountId: Type.Optional(Type.String({ maxLength: 255, description: 'Your own reference for this account.' })),
    },
    individual: individualBeneficiary(),
    paymentRails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
    railsFor: () => ['ACH', 'WIRE'],
    check: checks({ routingNumber: checkAbaRoutingNumber, accountNumber: checkUsAccountNumber }),
  }),
  define({
    accountType: 'CAD_ACCOUNT',
    title: 'CAD bank account',
    currencies: ['CAD'],
    country: 'CA',
    fields: {
      bankCode: Type.String({ pattern: '^[0-9]{3}$', minLength: 3, maxLength: 3, description: 'Three-digit financial institution number.' }),
      branchCode: Type.String({ pattern: '^[0-9]{5}$', minLength: 5, maxLength: 5, description: 'Five-digit branch transit number.' }),
      accountNumber: field.accountNumber('Account number, 7-12 digits.', { pattern: '^[0-9]{7,12}$', minLength: 7, maxLength: 12 }),
    },
    individual: individualBeneficiary({ extra: registrationNumberField }),
    paymentRails: ['BANK_TRANSFER'],
    check: checks({ bankCode: checkCanadianInstitution, branchCode: checkCanadianTransit, accountNumber: checkCanadianAccountNumber }),
  }),
  define({
    accountType: 'MXN_ACCOUNT',
    title: 'MXN account (SPEI)',
    currencies: ['MXN'],
    country: 'MX',
    fields: {
      clabeNumber: Type.String({ pattern: '^[0-9]{18}$', minLength: 18, maxLength: 18, description: 'Eighteen-digit CLABE; its check digit is verified.' }),
    },
    individual: individualBeneficiary(),
    paymentRails: ['SPEI'],
    identifierField: () => 'clabeNumber',
    check: checks({ clabeNumber: checkClabe }),
  }),
  define({
    accountType: 'BRL_ACCOUNT',
    title: 'BRL account (PIX)',
    currencies: ['BRL'],
    country: 'BR',
    fields: {
      pixKey: Type.String({ minLength: 1, maxLength: 77, description: 'PIX key, in the form `pixKeyType` requires.' }),
      pixKeyType: StringEnum(PIX_KEY_TYPES, {
        description: 'Kind of PIX key: CPF or CNPJ (digits, check digits verified), EMAIL, PHONE (+55…), RANDOM (EVP, a UUID).',
      }),
      taxId: Type.String({ pattern: '^[0-9]{11,14}$', minLength: 11, maxLength: 14, description: 'CPF (11 digits) or CNPJ (14 digits) of the account holder.' }),
    },
    individual: individualBeneficiary(),
    paymentRails: ['PIX'],
    identifierField: () => 'pixKey',
    check: (info, problems) => {
      checkField(problems, 'pixKey', info.pixKey, (key) => checkPixKey(key, info.pixKeyType as PixKeyType));
      checkField(problems, 'taxId', info.taxId, checkBrazilianTaxId);
    },
  }),
  define({
    accountType: 'COP_ACCOUNT',
    title: 'COP bank account',
    currencies: ['COP'],
    country: 'CO',
    fields: {
      bankName: field.bankName('CO'),
      accountNumber: field.accountNumber('Account number, 6-20 digits.'),
      bankAccountType: field.bankAccountType(),
    },
    individual: individualBeneficiary({ extra: documentFields, required: ['documentType', 'documentNumber'] }),
    paymentRails: ['BANK_TRANSFER'],
    check: checks({ accountNumber: bankAccountDigits(6, 20) }),
  }),
  define({
    accountType: 'GTQ_ACCOUNT',
    title: 'GTQ bank account',
    currencies: ['GTQ'],
    country: 'GT',
    fields: { accountNumber: field.accountNumber('Account number, 6-20 digits.'), bankAccountType: field.bankAccountType() },
    individual: individualBeneficiary({ required: ['countryOfResidence', 'phoneNumber'] }),
    paymentRails: ['BANK_TRANSFER'],
    check: checks({ accountNumber: bankAccountDigits(6, 20) }),
  }),
  define({
    accountType: 'JMD_ACCOUNT',
    title: 'JMD bank account',
    currencies: ['JMD'],
    country: 'JM',
    fields: {
      accountNumber: field.accountNumber('Account number, 5-20 digits.'),
      branchCode: field.branchCode('Five-digit branch (transit) code.'),
      bankAccountType: field.bankAccountType(),
    },
    individual: individualBeneficiary({ required: ['address', 'phoneNumber'] }),
    paymentRails: ['BANK_TRANSFER'],
    check: checks({ accountNumber: bankAccountDigits(5, 20) }),
  }),
  define({
    accountType: 'EUR_ACCOUNT',
    title: 'EUR account (SEPA)',
    currencies: ['EUR'],
    fields: {
      iban: field.iban('^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$', 15, 34, 'IBAN without spaces; country length and mod-97 check digits are verified.'),
      swiftCode: Type.Optional(field.swiftCode()),
    },
    individual: individualBeneficiary({ required: ['address'] }),
    paymentRails: ['SEPA', 'SEPA_INSTANT'],
    identifierField: () => 'iban',
    check: checks({ iban: (v) => checkIban(v), swiftCode: (v) => checkBic(v) }),
  }),
  define({
    accountType: 'DKK_ACCOUNT',
    title: 'DKK account',
    currencies: ['DKK'],
    country: 'DK',
    fields: {
      iban: field.iban('^DK[0-9]{16}$', 18, 18, 'Danish IBAN (DK + 16 digits); check digits are verified.'),
      swiftCode: Type.Optional(field.swiftCode()),
    },
    individual: individualBeneficiary(),
    paymentRails: ['SEPA', 'SEPA_INSTANT'],
    identifierField: () => 'iban',
    check: checks({ iban: (v) => checkIban(v, ['DK']), swiftCode: (v) => checkBic(v, 'DK') }),
  }),
  define({
    accountType: 'GBP_ACCOUNT',
    title: 'GBP account (Faster Payments)',
    currencies: ['GBP'],
    country: 'GB',
    fields: {
      sortCode: Type.String({ pattern: '^[0-9]{6}$', minLength: 6, maxLength: 6, description: 'Six-digit sort code, without dashes.' }),
      accountNumber: field.accountNumber('Eight-digit account number.', { pattern: '^[0-9]{8}$', minLength: 8, maxLength: 8 }),
    },
    individual: individualBeneficiary(),
    paymentRails: ['FASTER_PAYMENTS'],
    check: checks({ sortCode: checkSortCode, accountNumber: checkUkAccountNumber }),
  }),
];

