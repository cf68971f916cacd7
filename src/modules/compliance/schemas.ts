import { Type, type Static } from 'typebox';
import { DateTime, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { Address, VERIFICATION_STATUSES } from '../customers/fields.js';

export const BENEFICIAL_OWNER_ROLES = ['UBO', 'DIRECTOR', 'COMPANY_OFFICER', 'CONTROL_PERSON', 'TRUSTEE', 'GENERAL_PARTNER'] as const;
export const ID_TYPES = ['SSN', 'ITIN', 'EIN', 'NON_US_TAX_ID'] as const;
export const VERIFICATION_STATES = ['RESOLVE_ERRORS', 'PENDING_MANUAL_REVIEW', 'IN_PROGRESS', 'APPROVED', 'REJECTED', 'READY_FOR_VERIFICATION'] as const;
export type VerificationState = (typeof VERIFICATION_STATES)[number];
export const VERIFICATION_ERROR_TYPES = [
  'MISSING_FIELD',
  'INVALID_FIELD',
  'MISSING_LEGAL_PRESENCE_DOCUMENT',
  'MISSING_COMPANY_DETAILS_DOCUMENT',
  'MISSING_CONTROL_STRUCTURE_DOCUMENT',
  'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
  'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
  'MISSING_IDENTITY_DOCUMENT',
  'INVALID_DOCUMENT',
  'EXPIRED_DOCUMENT',
  'POOR_QUALITY_DOCUMENT',
  'SUSPECTED_FRAUD_DOCUMENT',
  'WRONG_DOCUMENT_TYPE',
  'INCOMPLETE_DOCUMENT',
  'UNREADABLE_DOCUMENT',
  'DOCUMENT_VERIFICATION_FAILED',
  'APPLICANT_SANCTIONED',
  'APPLICANT_FRAUD',
  'APPLICANT_CRIMINAL_RECORD',
  'APPLICANT_REJECTED',
  'MISSING_BENEFICIAL_OWNER',
] as const;
export type VerificationErrorType = (typeof VERIFICATION_ERROR_TYPES)[number];

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Text = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, description });
const Country = (description: string) => Type.String({ pattern: '^[A-Z]{2}$', description: `${description} (ISO 3166-1 alpha-2).` });
const KycStatus = StringEnum(VERIFICATION_STATUSES, { description: 'Identity verification status of the person.' });

const personalInfoFields = {
  firstName: Text(100, 'First name.'),
  middleName: Type.Optional(Text(100, 'Middle name.')),
  lastName: Text(100, 'Last name. In the sandbox its last 3 characters pick the KYC outcome: 001 PENDING, 002 REJECTED, anything else APPROVED.'),
  birthDate: Type.String({ format: 'date', description: 'Date of birth (YYYY-MM-DD).' }),
  nationality: Country('Nationality'),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'Email address.' })),
  phoneNumber: Type.Optional(Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'Phone number in E.164 format.' })),
  address: Address,
  idType: StringEnum(ID_TYPES, { description: 'Kind of tax identification in `identifier`.' }),
  identifier: Text(100, 'The identification number.'),
  countryOfIssuance: Type.Optional(Country('Country that issued the identification')),
};

export const PersonalInfo = Type.Object(personalInfoFields, { additionalProperties: false, description: 'The person\'s identity.' });
export type PersonalInfo = Static<typeof PersonalInfo>;

export const PersonalInfoUpdate = Type.Partial(PersonalInfo, {
  additionalProperties: false,
  description: 'Identity fields to change; fields left out keep their values.',
});
export type PersonalInfoUpdate = Static<typeof PersonalInfoUpdate>;

const Roles = Type.Array(StringEnum(BENEFICIAL_OWNER_ROLES, { description: 'A role in the business.' }), {
  minItems: 1,
  maxItems: BENEFICIAL_OWNER_ROLES.length,
  uniqueItems: true,
  description: 'Roles of the person in the business.',
});
const Ownership = Type.Integer({ minimum: 0, maximum: 100, description: 'Percentage of the business the person owns (0-100).' });

export const BeneficialOwnerCreate = Type.Object(
  {
    customerId: Id('The business customer (`Customer:…`).'),
    roles: Roles,
    ownershipPercentage: Ownership,
    personalInfo: PersonalInfo,
  },
  { additionalProperties: false },
);
export type BeneficialOwnerCreate = Static<typeof BeneficialOwnerCreate>;

export const BeneficialOwnerUpdate = Type.Object(
  { roles: Type.Optional(Roles), ownershipPercentage: Type.Optional(Ownership), personalInfo: Type.Optional(PersonalInfoUpdate) },
  { additionalProperties: false, minProperties: 1 },
);
export type BeneficialOwnerUpdate = Static<typeof BeneficialOwnerUpdate>;

export const BeneficialOwnerView = Type.Object(
  {
    id: Type.String({ description: 'Beneficial owner identifier (`BeneficialOwner:…`).' }),
    customerId: Type.String({ description: 'The business customer.' }),
    roles: Type.Array(Type.String({ description: 'A role.' }), { description: 'Roles of the person in the business.' }),
    ownershipPercentage: Type.Integer({ description: 'Percentage owned.' }),
    personalInfo: Type.Object(PersonalInfo.properties, { description: 'The person\'s identity.' }),
    kycStatus: KycStatus,
    createdAt: DateTime('When the beneficial owner was added.'),
    updatedAt: DateTime('When it last changed.'),
  },
  { title: 'BeneficialOwner' },
);
export type BeneficialOwnerView = Static<typeof BeneficialOwnerView>;

export const BeneficialOwnerListQuery = Type.Object({ customerId: Id('The business customer whose owners to list.'), ...PageQuery });
export type BeneficialOwnerListQuery = Static<typeof BeneficialOwnerListQuery>;

export const VerificationRequest = Type.Object({ customerId: Id('The customer to verify (`Customer:…`).') }, { additionalProperties: false });
export type VerificationRequest = Static<typeof VerificationRequest>;

export const VerificationErrorSchema = Type.Object(
  {
    resourceId: Type.String({ description: 'The Customer, BeneficialOwner or Document the problem is about.' }),
    type: StringEnum(VERIFICATION_ERROR_TYPES, { description: 'Kind of problem.' }),
    field: Type.Optional(Type.String({ description: 'Dotted path of the missing or invalid field (MISSING_FIELD, INVALID_FIELD).' })),
    acceptedDocumentTypes: Type.Optional(Type.Array(Type.String({ description: 'A document type.' }), { description: 'Document types that satisfy a missing-document requirement.' })),
    reason: Type.String({ description: 'What is wrong, for people.' }),
  },
  { title: 'VerificationError' },
);
export type VerificationErrorView = Static<typeof VerificationErrorSchema>;

export const VerificationView = Type.Object(
  {
    id: Type.String({ description: 'Verification identifier (`Verification:…`).' }),
    customerId: Type.String({ description: 'The verified customer.' }),
    verificationStatus: StringEnum(VERIFICATION_STATES, { description: 'Where the verification stands.' }),
    errors: Type.Array(VerificationErrorSchema, { description: 'What must be supplied or fixed; empty unless RESOLVE_ERRORS or REJECTED.' }),
    kycStatus: Type.Optional(KycStatus),
    kybStatus: Type.Optional(StringEnum(VERIFICATION_STATUSES, { description: 'Business verification status of a business customer after this verification.' })),
    createdAt: DateTime('When the verification was submitted.'),
    updatedAt: DateTime('When it last changed.'),
  },
  { title: 'Verification' },
);
export type VerificationView = Static<typeof VerificationView>;

export const VerificationListQuery = Type.Object({
  customerId: Type.Optional(Id('Only verifications of this customer.')),
  verificationStatus: Type.Optional(StringEnum(VERIFICATION_STATES, { description: 'Only verifications in this status.' })),
  ...PageQuery,
});
export type VerificationListQuery = Static<typeof VerificationListQuery>;

export const KycLinkQuery = Type.Object({
  platformCustomerId: Text(128, 'Your identifier of the customer to verify.'),
  redirectUri: Type.Optional(Type.String({ maxLength: 2000, description: 'Where the hosted flow sends the customer afterwards (http or https URL).' })),
});
export type KycLinkQuery = Static<typeof KycLinkQuery>;

export const KycLinkView = Type.Object(
  {
    kycUrl: Type.String({ description: 'Link to the hosted verification flow for the customer.' }),
    platformCustomerId: Type.String({ description: 'Your identifier of the customer.' }),
    customerId: Type.String({ description: 'The customer (`Customer:…`).' }),
  },
  { title: 'KycLinkResponse' },
);
export type KycLinkView = Static<typeof KycLinkView>;
