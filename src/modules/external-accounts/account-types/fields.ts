import { Type, type TSchema } from 'typebox';
import { StringEnum } from '../../../http/common-schemas.js';

const BIC_PATTERN = '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$';
export const COUNTRY_PATTERN = '^[A-Z]{2}$';
export const E164_PATTERN = '^\\+[1-9][0-9]{6,14}$';

/** Schema builders for the fields account types share, each with its own description. */
export const field = {
  accountNumber: (description = 'Account number at the bank, digits only.', options: { pattern?: string; minLength?: number; maxLength?: number } = {}) =>
    Type.String({ minLength: 1, maxLength: 34, ...options, description }),
  bankName: (country: string) =>
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: `Receiving institution: a \`bankName\` (or display name) that \`GET /discoveries?country=${country}\` lists.`,
    }),
  swiftCode: (description = 'SWIFT/BIC of the receiving bank (8 or 11 characters).') =>
    Type.String({ minLength: 8, maxLength: 11, pattern: BIC_PATTERN, description }),
  iban: (pattern: string, minLength: number, maxLength: number, description: string) =>
    Type.String({ pattern, minLength, maxLength, description }),
  mobileNumber: (pattern = E164_PATTERN, description = 'Mobile-money phone number in E.164 form.') =>
    Type.String({ minLength: 7, maxLength: 15, pattern, description }),
  provider: () =>
    Type.String({ minLength: 1, maxLength: 255, description: 'Mobile-money operator holding the wallet, e.g. M-Pesa or MTN MoMo.' }),
  bankAccountType: () => StringEnum(['CHECKING', 'SAVINGS'] as const, { description: 'Kind of bank account.' }),
  branchCode: (description = 'Five-digit branch code.') => Type.String({ pattern: '^[0-9]{5}$', minLength: 5, maxLength: 5, description }),
  walletAddress: (description: string) => Type.String({ minLength: 1, maxLength: 200, description }),
} satisfies Record<string, (...args: any[]) => TSchema>;

export const Address = Type.Object(
  {
    line1: Type.String({ minLength: 1, maxLength: 255, description: 'Street address, first line.' }),
    line2: Type.Optional(Type.String({ maxLength: 255, description: 'Street address, second line (apartment, suite).' })),
    city: Type.Optional(Type.String({ maxLength: 255, description: 'City or locality.' })),
    state: Type.Optional(Type.String({ maxLength: 255, description: 'State, province or region.' })),
    postalCode: Type.String({ minLength: 1, maxLength: 32, description: 'Postal or ZIP code.' }),
    country: Type.String({ pattern: COUNTRY_PATTERN, description: 'Country, ISO 3166-1 alpha-2.' }),
  },
  { additionalProperties: false, title: 'Address', description: 'Postal address.' },
);
