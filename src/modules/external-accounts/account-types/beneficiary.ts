import { Type, type TProperties, type TSchema } from 'typebox';
import { Discriminated } from '../../../http/common-schemas.js';
import { Address, COUNTRY_PATTERN, E164_PATTERN } from './fields.js';

const common = {
  email: Type.String({ format: 'email', maxLength: 254, description: 'Email address of the account holder.' }),
  phoneNumber: Type.String({ pattern: E164_PATTERN, description: 'Phone number of the account holder, E.164.' }),
  countryOfResidence: Type.String({ pattern: COUNTRY_PATTERN, description: 'Country the account holder lives in (ISO 3166-1 alpha-2).' }),
  address: Address,
};

const individualFields = {
  fullName: Type.String({ minLength: 1, maxLength: 255, description: 'Full legal name of the person holding the account.' }),
  birthDate: Type.String({ format: 'date', description: 'Date of birth, YYYY-MM-DD.' }),
  nationality: Type.String({ pattern: COUNTRY_PATTERN, description: 'Nationality, ISO 3166-1 alpha-2.' }),
  ...common,
};

export interface IndividualVariant {
  /** Optional fields (common or extra) this rail makes mandatory. */
  required?: string[];
  /** Extra fields this rail accepts. */
  extra?: TProperties;
}

function withRequired(fields: TProperties, required: string[]): TProperties {
  const out: TProperties = {};
  for (const [name, schema] of Object.entries(fields)) out[name] = required.includes(name) ? schema : Type.Optional(schema);
  return out;
}

export function individualBeneficiary(variant: IndividualVariant = {}): TSchema {
  const { fullName, ...optional } = individualFields;
  return Type.Object(
    {
      beneficiaryType: Type.Literal('INDIVIDUAL', { description: 'The account holder is a person.' }),
      fullName,
      ...withRequired({ ...optional, ...variant.extra }, variant.required ?? []),
    },
    { additionalProperties: false, title: 'IndividualBeneficiary', description: 'A person holding the account.' },
  );
}

export const BusinessBeneficiary = Type.Object(
  {
    beneficiaryType: Type.Literal('BUSINESS', { description: 'The account holder is a company.' }),
    legalName: Type.String({ minLength: 1, maxLength: 255, description: 'Registered legal name of the company.' }),
    registrationNumber: Type.Optional(Type.String({ maxLength: 100, description: 'Company registration number.' })),
    taxId: Type.Optional(Type.String({ maxLength: 100, description: 'Tax identification number of the company.' })),
    ...withRequired(common, []),
  },
  { additionalProperties: false, title: 'BusinessBeneficiary', description: 'A company holding the account.' },
);

export function beneficiaryUnion(individual: TSchema): TSchema {
  return Discriminated('beneficiaryType', [individual, BusinessBeneficiary], {
    description: 'Who holds the account; the receiving rail may check this name against its records.',
  });
}

/** Extra individual fields some rails take. */
export const documentFields: TProperties = {
  documentType: Type.String({ minLength: 1, maxLength: 50, description: 'Kind of identity document, e.g. CC (cédula) or PASSPORT.' }),
  documentNumber: Type.String({ minLength: 1, maxLength: 50, description: 'Number of that identity document.' }),
};

export const registrationNumberField: TProperties = {
  registrationNumber: Type.String({ maxLength: 100, description: 'Registration or identity number of the account holder.' }),
};
