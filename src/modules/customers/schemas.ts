import { Type, type Static, type TSchema } from 'typebox';
import { CurrencyCode, DateTime, Discriminated, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { BeneficialOwnerView } from '../compliance/schemas.js';
import { Address, CalendarDate, Countries, CountryCode, Text, VERIFICATION_STATUSES } from './fields.js';

export { Address, VERIFICATION_STATUSES, type VerificationStatus } from './fields.js';

export const CUSTOMER_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];

const CustomerTypeSchema = StringEnum(CUSTOMER_TYPES, { description: 'Whether the customer is a person or a business.' });
const Tag = <T extends CustomerType>(value: T) => StringEnum([value] as const, { description: `Always ${value} for this kind of customer.` });

const businessInfoFields = {
  legalName: Type.Optional(Text(200, 'Registered legal name.')),
  doingBusinessAs: Type.Optional(Text(200, 'Trade name, when it differs from the legal name.')),
  country: Type.Optional(CountryCode('Country of incorporation')),
  registrationNumber: Type.Optional(Text(100, 'Company registration number.')),
  incorporatedOn: Type.Optional(CalendarDate('Date of incorporation')),
  entityType: Type.Optional(
    StringEnum(['SOLE_PROPRIETORSHIP', 'PARTNERSHIP', 'LLC', 'CORPORATION', 'S_CORPORATION', 'NON_PROFIT', 'OTHER'], {
      description: 'Legal form of the business.',
    }),
  ),
  taxId: Type.Optional(Text(100, 'Tax identification number.')),
  countriesOfOperation: Type.Optional(Countries('Countries where the business operates.')),
  businessType: Type.Optional(
    StringEnum(
      [
        'AGRICULTURE_FORESTRY_FISHING_AND_HUNTING',
        'MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION',
        'UTILITIES',
        'CONSTRUCTION',
        'MANUFACTURING',
        'WHOLESALE_TRADE',
        'RETAIL_TRADE',
        'TRANSPORTATION_AND_WAREHOUSING',
        'INFORMATION',
        'FINANCE_AND_INSURANCE',
        'REAL_ESTATE_AND_RENTAL_AND_LEASING',
        'PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES',
        'MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES',
        'ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES',
        'EDUCATIONAL_SERVICES',
        'HEALTH_CARE_AND_SOCIAL_ASSISTANCE',
        'ARTS_ENTERTAINMENT_AND_RECREATION',
        'ACCOMMODATION_AND_FOOD_SERVICES',
        'OTHER_SERVICES',
        'PUBLIC_ADMINISTRATION',
      ],
      { description: 'Industry sector.' },
    ),
  ),
  purposeOfAccount: Type.Optional(
    StringEnum(
      [
        'CONTRACTOR_PAYOUTS',
        'CREATOR_PAYOUTS',
        'EMPLOYEE_PAYOUTS',
        'MARKETPLACE_SELLER_PAYOUTS',
        'SUPPLIER_PAYMENTS',
        'CROSS_BORDER_B2B',
        'AR_AUTOMATION',
        'AP_AUTOMATION',
        'EMBEDDED_PAYMENTS',
        'PLATFORM_FEE_COLLECTION',
        'P2P_TRANSFERS',
        'CHARITABLE_DONATIONS',
        'OTHER',
      ],
      { description: 'What the business will use the account for.' },
    ),
  ),
  sourceOfFunds: Type.Optional(Text(500, 'Where the business\'s money comes from.')),
  expectedMonthlyTransactionCount: Type.Optional(
    StringEnum(['COUNT_UNDER_10', 'COUNT_10_TO_100', 'COUNT_100_TO_500', 'COUNT_500_TO_1000', 'COUNT_OVER_1000'], {
      description: 'Expected number of payments per month.',
    }),
  ),
  expectedMonthlyTransactionVolume: Type.Optional(
    StringEnum(['VOLUME_UNDER_10K', 'VOLUME_10K_TO_100K', 'VOLUME_100K_TO_1M', 'VOLUME_1M_TO_10M', 'VOLUME_OVER_10M'], {
      description: 'Expected monthly payment volume, in USD equivalent.',
    }),
  ),
  expectedRecipientJurisdictions: Type.Optional(Countries('Countries the business expects to pay into.')),
};

/** Partial business details, as PATCH merges them into the stored ones. */
export const BusinessInfoUpdate = Type.Object(businessInfoFields, {
  additionalProperties: false,
  description: 'Business details to change; fields left out keep their values.',
});
export type BusinessInfo = Static<typeof BusinessInfoUpdate>;

export const BusinessInfoCreate = Type.Object(
  { ...businessInfoFields, legalName: Text(200, 'Registered legal name.') },
  { additionalProperties: false, description: 'Details of the business.' },
);

const VerificationStatusSchema = (description: string) => StringEnum(VERIFICATION_STATUSES, { description });
const KYC = 'Identity verification status. Only regulated platforms, which verify their customers themselves, may set it.';
const KYB = 'Business verification status. Only regulated platforms, which verify their customers themselves, may set it.';

const individualFields = {
  kycStatus: Type.Optional(VerificationStatusSchema(KYC)),
  fullName: Type.Optional(Text(200, 'Full legal name.')),
  birthDate: Type.Optional(CalendarDate('Date of birth')),
  nationality: Type.Optional(CountryCode('Nationality')),
  address: Type.Optional(Address),
};

const CurrencyList = Type.Array(CurrencyCode('A currency the platform supports.'), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: 'Currencies the customer uses; each must be one the platform supports.',
});
const Email = Type.String({ format: 'email', maxLength: 254, description: 'Email address.' });
const UmaAddress = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });

const createFields = {
  platformCustomerId: Type.Optional(
    Text(128, 'Your identifier for the customer, unique among your customers that are not deleted. Generated when left out.'),
  ),
  region: Type.Optional(CountryCode('Country whose rules apply to the customer; cannot change later')),
  currencies: Type.Optional(CurrencyList),
  email: Type.Optional(Email),
  umaAddress: Type.Optional(UmaAddress('UMA address (`$name@domain`), unique among your customers. Generated on your UMA domain when left out.')),
};

const updateFields = {
  currencies: Type.Optional(CurrencyList),
  email: Type.Optional(Email),
  umaAddress: Type.Optional(UmaAddress('New UMA address (`$name@domain`), unique among your customers.')),
};

/**
 * A body tagged by `customerType`. Naming the tag at the top level too makes a missing or unknown
 * type an error on `customerType` rather than on the whole body.
 */
function ByCustomerType<T extends TSchema[]>(variants: [...T], description: string) {
  const tagged = Discriminated('customerType', variants, { description });
  return Type.Unsafe<Static<T[number]>>({ ...tagged, required: ['customerType'], properties: { customerType: CustomerTypeSchema } });
}

export const IndividualCustomerCreate = Type.Object(
  { customerType: Tag('INDIVIDUAL'), ...createFields, ...individualFields },
  { additionalProperties: false, title: 'IndividualCustomerCreate' },
);
export const BusinessCustomerCreate = Type.Object(
  {
    customerType: Tag('BUSINESS'),
    ...createFields,
    kybStatus: Type.Optional(VerificationStatusSchema(KYB)),
    address: Type.Optional(Address),
    businessInfo: Type.Optional(BusinessInfoCreate),
  },
  { additionalProperties: false, title: 'BusinessCustomerCreate' },
);
export const CustomerCreate = ByCustomerType([IndividualCustomerCreate, BusinessCustomerCreate], 'A person or a business to register.');
export type CustomerCreate = Static<typeof CustomerCreate>;

export const IndividualCustomerUpdate = Type.Object(
  { customerType: Tag('INDIVIDUAL'), ...updateFields, ...individualFields },
  { additionalProperties: false, title: 'IndividualCustomerUpdate' },
);
export const BusinessCustomerUpdate = Type.Object(
  {
    customerType: Tag('BUSINESS'),
    ...updateFields,
    kybStatus: Type.Optional(VerificationStatusSchema(KYB)),
    address: Type.Optional(Address),
    businessInfo: Type.Optional(BusinessInfoUpdate),
  },
  { additionalProperties: false, title: 'BusinessCustomerUpdate' },
);
export const CustomerUpdate = ByCustomerType(
  [IndividualCustomerUpdate, BusinessCustomerUpdate],
  'Fields to change; fields left out keep their values. `customerType` must be the customer\'s type.',
);
export type CustomerUpdate = Static<typeof CustomerUpdate>;

const viewFields = {
  id: Type.String({ description: 'Customer identifier (`Customer:…`).' }),
  platformCustomerId: Type.String({ description: 'Your identifier for the customer.' }),
  region: Type.Optional(Type.String({ description: 'Country whose rules apply to the customer (ISO 3166-1 alpha-2).' })),
  currencies: Type.Array(Type.String({ description: 'A currency code.' }), { description: 'Currencies the customer uses.' }),
  email: Type.Optional(Type.String({ description: 'Email address.' })),
  umaAddress: Type.String({ description: 'UMA address that routes payments to the customer.' }),
  createdAt: DateTime('When the customer was created.'),
  updatedAt: DateTime('When the customer last changed.'),
  isDeleted: Type.Boolean({ description: 'Whether the customer has been deleted.' }),
};

export const IndividualCustomerView = Type.Object(
  {
    customerType: Tag('INDIVIDUAL'),
    ...viewFields,
    kycStatus: VerificationStatusSchema('Identity verification status.'),
    fullName: Type.Optional(Type.String({ description: 'Full legal name.' })),
    birthDate: Type.Optional(Type.String({ description: 'Date of birth (YYYY-MM-DD).' })),
    nationality: Type.Optional(Type.String({ description: 'Nationality (ISO 3166-1 alpha-2).' })),
    address: Type.Optional(Type.Object(Address.properties, { description: 'Postal address.' })),
  },
  { title: 'IndividualCustomer' },
);
export const BusinessCustomerView = Type.Object(
  {
    customerType: Tag('BUSINESS'),
    ...viewFields,
    kybStatus: VerificationStatusSchema('Business verification status.'),
    address: Type.Optional(Type.Object(Address.properties, { description: 'Registered address.' })),
    businessInfo: Type.Optional(Type.Object(businessInfoFields, { description: 'Details of the business.' })),
    beneficialOwners: Type.Optional(
      Type.Array(BeneficialOwnerView, { description: 'The people who own or control the business, oldest first (managed under /beneficial-owners).' }),
    ),
  },
  { title: 'BusinessCustomer' },
);
export const CustomerView = Discriminated('customerType', [IndividualCustomerView, BusinessCustomerView], {
  description: 'A customer of the platform: a person or a business.',
});
export type CustomerView = Static<typeof CustomerView>;

export const CustomerListQuery = Type.Object({
  platformCustomerId: Type.Optional(Type.String({ maxLength: 128, description: 'Only the customer with this identifier of yours.' })),
  customerType: Type.Optional(CustomerTypeSchema),
  region: Type.Optional(CountryCode('Only customers of this region')),
  currency: Type.Optional(CurrencyCode('Only customers that use this currency.')),
  umaAddress: Type.Optional(Type.String({ maxLength: 255, description: 'Only the customer with this UMA address (case-insensitive).' })),
  createdAfter: Type.Optional(DateTime('Only customers created at or after this time.')),
  createdBefore: Type.Optional(DateTime('Only customers created at or before this time.')),
  updatedAfter: Type.Optional(DateTime('Only customers updated at or after this time.')),
  updatedBefore: Type.Optional(DateTime('Only customers updated at or before this time.')),
  isIncludingDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Include deleted customers (default false).' })),
  ...PageQuery,
});
export type CustomerListQuery = Static<typeof CustomerListQuery>;
