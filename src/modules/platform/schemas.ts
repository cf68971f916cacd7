import { Type, type Static } from 'typebox';
import { CurrencyCode, DateTime, StringEnum } from '../../http/common-schemas.js';
import { EmbeddedWalletSettingsUpdate, EmbeddedWalletSettingsView } from './embedded-wallets.js';

export const CUSTOMER_INFO_FIELDS = [
  'FULL_NAME',
  'BIRTH_DATE',
  'NATIONALITY',
  'PHONE_NUMBER',
  'EMAIL',
  'POSTAL_ADDRESS',
  'TAX_ID',
  'REGISTRATION_NUMBER',
  'USER_TYPE',
  'COUNTRY_OF_RESIDENCE',
  'ACCOUNT_IDENTIFIER',
  'FI_LEGAL_ENTITY_NAME',
  'FI_ADDRESS',
  'PURPOSE_OF_PAYMENT',
  'ULTIMATE_INSTITUTION_COUNTRY',
  'IDENTIFIER',
  'BUSINESS_TYPE',
  'COMPANY_LEGAL_NAME',
] as const;
export type CustomerInfoField = (typeof CUSTOMER_INFO_FIELDS)[number];

export const CustomerInfoFieldName = StringEnum(CUSTOMER_INFO_FIELDS, {
  description: 'A piece of information about a customer or counterparty.',
});

export const CounterpartyFieldDefinition = Type.Object(
  {
    name: CustomerInfoFieldName,
    mandatory: Type.Boolean({ description: 'Whether a payment without this field is refused.' }),
  },
  { additionalProperties: false },
);

export const TransactionDirection = StringEnum(['INCOMING', 'OUTGOING'], { description: 'Direction of a payment.' });

const currencyConfigFields = {
  currencyCode: CurrencyCode('Currency this entry configures.'),
  minAmount: Type.Integer({ minimum: 0, maximum: 9_000_000_000_000_000, description: 'Smallest amount a payment may have, in the smallest unit.' }),
  maxAmount: Type.Integer({ minimum: 0, maximum: 9_000_000_000_000_000, description: 'Largest amount a payment may have, in the smallest unit.' }),
  requiredCounterpartyFields: Type.Array(CounterpartyFieldDefinition, {
    maxItems: 20,
    description: 'Information the platform asks counterparties to provide about their customers.',
  }),
  enabledTransactionTypes: Type.Array(TransactionDirection, {
    maxItems: 2,
    description: 'Payment directions enabled for this currency.',
  }),
};

export const CurrencyConfigInput = Type.Object(currencyConfigFields, { additionalProperties: false });
export type CurrencyConfigInput = Static<typeof CurrencyConfigInput>;

export const CurrencyConfig = Type.Object({
  ...currencyConfigFields,
  providerRequiredCustomerFields: Type.Optional(
    Type.Array(CustomerInfoFieldName, {
      description: 'Read-only. Customer fields the payout provider needs before a customer can use this currency.',
    }),
  ),
  providerRequiredCounterpartyCustomerFields: Type.Optional(
    Type.Array(CustomerInfoFieldName, {
      description: 'Read-only. Counterparty fields the payout provider needs; quotes fail without them.',
    }),
  ),
});
export type CurrencyConfig = Static<typeof CurrencyConfig>;

/**
 * An entry of `PATCH /config`'s list: the stored fields, plus the read-only provider fields, which
 * may be sent back as `GET /config` returned them (so a read-modify-write works) but not changed.
 */
export const CurrencyConfigUpdate = Type.Object(CurrencyConfig.properties, { additionalProperties: false });
export type CurrencyConfigUpdate = Static<typeof CurrencyConfigUpdate>;

export const FeeSchedule = Type.Object(
  {
    variableFeeRate: Type.Number({
      minimum: 0,
      maximum: 0.5,
      description: 'Fraction of the sending amount charged on cross-currency payments (0.003 = 0.3%).',
    }),
    fixedFees: Type.Array(
      Type.Object(
        {
          currencyCode: CurrencyCode('Sending currency the fee applies to.'),
          amount: Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Fixed fee in the smallest unit of that currency.' }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100, description: 'Fixed fee per sending currency; currencies not listed pay none.' },
    ),
    fxSpreadBps: Type.Integer({
      minimum: 0,
      maximum: 1000,
      description: 'Basis points taken off the mid-market rate when converting (25 = 0.25%).',
    }),
  },
  { additionalProperties: false, description: 'Corridor extension: how cross-currency payments of this platform are priced.' },
);
export type FeeSchedule = Static<typeof FeeSchedule>;

export const PlatformConfig = Type.Object(
  {
    id: Type.String({ description: 'Identifier of this configuration (`PlatformConfig:…`).' }),
    umaDomain: Type.String({ description: 'Domain of the UMA addresses of this platform\'s customers.' }),
    proxyUmaSubdomain: Type.Optional(Type.String({ description: 'Subdomain to which incoming UMA requests are proxied.' })),
    webhookEndpoint: Type.Optional(Type.String({ description: 'URL that receives webhook notifications.' })),
    supportedCurrencies: Type.Array(CurrencyConfig, {
      description: 'Currencies the platform\'s customers can hold, send and receive.',
    }),
    isRegulatedFinancialInstitution: Type.Boolean({
      description: 'Set by the operator at platform creation. When false, customers must be verified before they send.',
    }),
    fees: FeeSchedule,
    embeddedWallets: EmbeddedWalletSettingsView,
    createdAt: DateTime('When the platform was created.'),
    updatedAt: DateTime('When the configuration last changed.'),
  },
  { title: 'PlatformConfig' },
);
export type PlatformConfigView = Static<typeof PlatformConfig>;

export const PlatformConfigUpdate = Type.Object(
  {
    umaDomain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        // A port is 1 to 65535.
        pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$',
        description: 'New UMA domain (host name, optionally with a port for local development).',
      }),
    ),
    proxyUmaSubdomain: Type.Optional(
      Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$', description: 'New proxy subdomain.' }),
    ),
    webhookEndpoint: Type.Optional(
      Type.String({ maxLength: 2048, description: 'New webhook URL (http or https; on production platforms not a loopback or private address); an empty string removes it.' }),
    ),
    supportedCurrencies: Type.Optional(
      Type.Array(CurrencyConfigUpdate, {
        minItems: 1,
        maxItems: 50,
        description: 'Replaces the whole list of supported currencies.',
      }),
    ),
    fees: Type.Optional(FeeSchedule),
    embeddedWallets: Type.Optional(EmbeddedWalletSettingsUpdate),
  },
  { additionalProperties: false },
);
export type PlatformConfigUpdate = Static<typeof PlatformConfigUpdate>;

export const ClockAdvance = Type.Object(
  {
    seconds: Type.Integer({ minimum: 1, maximum: 366 * 24 * 3600, description: 'How far to move the test clock forward.' }),
  },
  { additionalProperties: false },
);

export const ClockState = Type.Object({
  now: DateTime('The platform\'s current time on its test clock.'),
  offsetSeconds: Type.Number({ description: 'How far the test clock is ahead of real time.' }),
  jobsRun: Type.Integer({ description: 'Scheduled jobs that became due and ran during this call.' }),
});
