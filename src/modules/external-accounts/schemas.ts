import { Type, type TSchema } from 'typebox';
import { CurrencyCode, DateTime, Discriminated, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { refusingBlanks } from '../../http/validation.js';
import { ACCOUNT_TYPES, createVariant, responseVariant, type AccountInfo } from './account-types/index.js';

export const ACCOUNT_STATUSES = ['PENDING', 'ACTIVE', 'UNDER_REVIEW', 'INACTIVE'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

export const VERIFICATION_STATUSES = ['MATCHED', 'PARTIAL_MATCH', 'NOT_MATCHED', 'UNSUPPORTED', 'CHECKED_BY_RECEIVING_FI', 'PENDING'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/** Ids of the shared components below (registered once, referenced by the routes). */
export const SCHEMA_IDS = { account: 'ExternalAccount', createInfo: 'ExternalAccountCreateInfo' } as const;

/** Every account type's request fields, tagged by `accountType`. */
export const ExternalAccountCreateInfo = Discriminated('accountType', ACCOUNT_TYPES.map(createVariant), {
  description: 'Where the money goes; `accountType` selects the fields. Identifiers are checked (checksums, formats) before anything is stored.',
});

const AccountInfoCreate = Type.Unsafe<AccountInfo>(Type.Ref(SCHEMA_IDS.createInfo));

const platformAccountId = Type.String({ minLength: 1, maxLength: 255, description: 'Your own identifier for the account, echoed back.' });

export const CustomerExternalAccountCreate = Type.Object(
  {
    customerId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Customer that owns the account (`Customer:…`). Omitted: the account belongs to the platform.' }),
    ),
    currency: CurrencyCode('Currency the account receives; must be one the account type holds (USD for USD_ACCOUNT, USDC for BASE_WALLET, …).'),
    platformAccountId: Type.Optional(platformAccountId),
    defaultUmaDepositAccount: Type.Optional(
      Type.Boolean({
        description:
          "Make this the customer's default UMA deposit account: incoming UMA payments land here instead of the internal account. Takes the flag from the customer's previous default.",
      }),
    ),
    accountInfo: AccountInfoCreate,
  },
  { additionalProperties: false },
);
export type CustomerExternalAccountCreate = {
  customerId?: string;
  currency: string;
  platformAccountId?: string;
  defaultUmaDepositAccount?: boolean;
  accountInfo: AccountInfo;
};

export const PlatformExternalAccountCreate = Type.Object(
  {
    currency: CurrencyCode('Currency the account receives; must be one the account type holds.'),
    platformAccountId: Type.Optional(platformAccountId),
    accountInfo: AccountInfoCreate,
  },
  { additionalProperties: false },
);
export type PlatformExternalAccountCreate = Omit<CustomerExternalAccountCreate, 'customerId' | 'defaultUmaDepositAccount'>;

export const ExternalAccount = Type.Object(
  {
    id: Type.String({ description: 'External account identifier (`ExternalAccount:…`).' }),
    customerId: Type.Optional(Type.String({ description: 'Owning customer; absent on an account of the platform itself.' })),
    status: StringEnum(ACCOUNT_STATUSES, {
      description: 'ACTIVE: usable. PENDING: beneficiary check still running. UNDER_REVIEW: the name did not match. INACTIVE: disabled.',
    }),
    platformAccountId: Type.Optional(Type.String({ description: 'Your own identifier for the account, as given at creation.' })),
    currency: Type.String({ description: 'Currency the account receives.' }),
    defaultUmaDepositAccount: Type.Boolean({ description: "Whether incoming UMA payments to the customer's address land in this account." }),
    beneficiaryVerificationStatus: Type.Optional(
      StringEnum(VERIFICATION_STATUSES, { description: 'Outcome of checking the beneficiary name against the receiving institution. Absent for wallets.' }),
    ),
    beneficiaryVerifiedData: Type.Optional(
      Type.Object(
        { fullName: Type.Optional(Type.String({ description: 'Account holder name as the receiving institution reports it.' })) },
        { description: 'What the verification learned about the holder (after MATCHED or PARTIAL_MATCH).' },
      ),
    ),
    accountInfo: Discriminated('accountType', ACCOUNT_TYPES.map(responseVariant), { description: 'Account details, with the rails that can reach it.' }),
    createdAt: DateTime('When the account was added.'),
    updatedAt: DateTime('When the account last changed.'),
  },
  { title: 'ExternalAccount' },
);

export interface ExternalAccountView {
  id: string;
  customerId?: string;
  status: AccountStatus;
  platformAccountId?: string;
  currency: string;
  defaultUmaDepositAccount: boolean;
  beneficiaryVerificationStatus?: VerificationStatus;
  beneficiaryVerifiedData?: { fullName?: string };
  accountInfo: AccountInfo & { paymentRails?: string[] };
  createdAt: string;
  updatedAt: string;
}

const currencyFilter = Type.Optional(Type.String({ pattern: '^[A-Z]{3,5}$', description: 'Only accounts in this currency.' }));

export const CustomerExternalAccountListQuery = Type.Object({
  currency: currencyFilter,
  customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only accounts of this customer.' })),
  ...PageQuery,
});
export type ExternalAccountListQuery = { currency?: string; customerId?: string; limit?: number; cursor?: string };

export const PlatformExternalAccountListQuery = Type.Object({ currency: currencyFilter, ...PageQuery });

// Shared components: the account unions are large, and inlining them in every route would
// repeat them in /openapi.json. Routes refer to them in a scope that added them.
/** The account view by reference to its shared schema. */
export const ExternalAccountRef = Type.Unsafe<ExternalAccountView>(Type.Ref(SCHEMA_IDS.account) as unknown as TSchema);

/**
 * Adds the shared schemas to a route scope. The request one carries the blank rule
 * (refusingBlanks) here, so that /openapi.json, which shows shared schemas as added, shows it.
 */
export function addExternalAccountSchemas(scope: { addSchema(schema: unknown): unknown }): void {
  scope.addSchema(refusingBlanks({ ...ExternalAccountCreateInfo, $id: SCHEMA_IDS.createInfo }));
  scope.addSchema({ ...ExternalAccount, $id: SCHEMA_IDS.account });
}
