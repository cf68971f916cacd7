import { Type, type Static } from 'typebox';
import { CurrencyCode, CurrencySchema, DateTime, Discriminated, StringEnum } from '../../http/common-schemas.js';
import { PaymentInstructions } from '../accounts/schemas.js';
import { CustomerInfoFieldName } from '../platform/schemas.js';

export const QUOTE_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'] as const;
export type QuoteStatus = (typeof QUOTE_STATUSES)[number];

export const PURPOSES_OF_PAYMENT = [
  'GIFT',
  'SELF',
  'GOODS_OR_SERVICES',
  'EDUCATION',
  'HEALTH_OR_MEDICAL',
  'REAL_ESTATE_PURCHASE',
  'TAX_PAYMENT',
  'LOAN_PAYMENT',
  'UTILITY_BILL',
  'DONATION',
  'TRAVEL',
  'OTHER',
] as const;
export type PurposeOfPayment = (typeof PURPOSES_OF_PAYMENT)[number];

const MAX_AMOUNT = 9_000_000_000_000_000;
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

// ── request ──────────────────────────────────────────────────────────────────────────────────────

const AccountQuoteSource = Type.Object(
  {
    sourceType: Type.Literal('ACCOUNT', { description: 'Pay from an internal account.' }),
    accountId: Id('Internal account the money comes from (`InternalAccount:…`).'),
    customerId: Type.Optional(
      Id('Customer on whose behalf the payment is made. Defaults to the account owner; needed when a platform account pays for a customer.'),
    ),
  },
  { additionalProperties: false, title: 'AccountQuoteSource', description: 'Funds come from an internal account.' },
);

const RealtimeFundingQuoteSource = Type.Object(
  {
    sourceType: Type.Literal('REALTIME_FUNDING', { description: 'Fund the quote with an instant payment to the returned payment instructions.' }),
    customerId: Type.Optional(Id('Customer on whose behalf the payment is made; without it, the platform itself pays.')),
    currency: CurrencyCode('Currency the payer sends.'),
    cryptoNetwork: Type.Optional(Type.String({ maxLength: 50, description: 'Network the payer sends crypto on (e.g. SOLANA_MAINNET, BASE_MAINNET); required for stablecoins (USDC, USDT). The deposit address in `paymentInstructions` is one of that network.' })),
  },
  { additionalProperties: false, title: 'RealtimeFundingQuoteSource', description: 'Funds arrive just in time, by an instant payment.' },
);

export const QuoteSourceInput = Discriminated('sourceType', [AccountQuoteSource, RealtimeFundingQuoteSource], {
  description: 'Where the money comes from: ACCOUNT (an internal account) or REALTIME_FUNDING (an instant payment after the quote).',
});
export type QuoteSourceInput = Static<typeof AccountQuoteSource> | Static<typeof RealtimeFundingQuoteSource>;

const AccountDestination = Type.Object(
  {
    destinationType: Type.Literal('ACCOUNT', { description: 'Pay to an account.' }),
    accountId: Id('External account (payout) or internal account (conversion) receiving the money.'),
    paymentRail: Type.Optional(Type.String({ maxLength: 50, description: 'Rail to pay out on; one of the destination account\'s rails. Default: the account\'s first.' })),
  },
  { additionalProperties: false, title: 'AccountDestination', description: 'An external or internal account.' },
);

const UmaAddressDestination = Type.Object(
  {
    destinationType: Type.Literal('UMA_ADDRESS', { description: 'Pay to an UMA address.' }),
    umaAddress: Type.String({ minLength: 3, maxLength: 300, description: 'UMA address of the recipient, e.g. `$alice@example.com`.' }),
    currency: Type.Optional(CurrencyCode('Currency the recipient receives.')),
  },
  { additionalProperties: false, title: 'UmaAddressDestination', description: 'An UMA address (needs a lookupId from GET /receiver/uma/{address}).' },
);

export const QuoteDestinationInput = Discriminated('destinationType', [AccountDestination, UmaAddressDestination], {
  description: 'Where the money goes: ACCOUNT or UMA_ADDRESS.',
});
export type QuoteDestinationInput = Static<typeof AccountDestination> | Static<typeof UmaAddressDestination>;

export const LockedSide = StringEnum(['SENDING', 'RECEIVING'], {
  description: 'SENDING: lockedCurrencyAmount is what leaves the source; RECEIVING: it is what the recipient gets.',
});

export const PurposeOfPaymentSchema = StringEnum(PURPOSES_OF_PAYMENT, { description: 'Why the money is sent; some corridors require it.' });

export const QuoteRequest = Type.Object(
  {
    lookupId: Type.Optional(Id('Lookup from GET /receiver/…; required for UMA destinations. Its required payer fields are enforced.')),
    source: QuoteSourceInput,
    destination: QuoteDestinationInput,
    lockedCurrencySide: LockedSide,
    lockedCurrencyAmount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Amount of the locked side, in the smallest unit of its currency.' }),
    immediatelyExecute: Type.Optional(
      Type.Boolean({ description: 'Create and execute in one call (internal-account sources other than embedded wallets). Default false.' }),
    ),
    description: Type.Optional(Type.String({ maxLength: 1000, description: 'Memo for the payment.' })),
    purposeOfPayment: Type.Optional(PurposeOfPaymentSchema),
    senderCustomerInfo: Type.Optional(
      Type.Object({}, {
        additionalProperties: true,
        maxProperties: 50,
        description: 'Information about the sender the receiver asked for (keys such as FULL_NAME, BIRTH_DATE, NATIONALITY).',
      }),
    ),
  },
  { additionalProperties: false, title: 'QuoteRequest' },
);
export type QuoteRequest = Static<typeof QuoteRequest>;

// ── response ─────────────────────────────────────────────────────────────────────────────────────

export const QuoteSource = Type.Object(
  {
    sourceType: StringEnum(['ACCOUNT', 'REALTIME_FUNDING'], { description: 'ACCOUNT: an internal account; REALTIME_FUNDING: an instant payment.' }),
    accountId: Type.Optional(Type.String({ description: 'Internal account paying (ACCOUNT).' })),
    customerId: Type.Optional(Type.String({ description: 'Customer on whose behalf the payment is made.' })),
    currency: Type.Optional(Type.String({ description: 'Currency the payer sends (REALTIME_FUNDING).' })),
    cryptoNetwork: Type.Optional(Type.String({ description: 'Network of a stablecoin deposit (REALTIME_FUNDING).' })),
  },
  { description: 'Where the money comes from.' },
);
export type QuoteSource = Static<typeof QuoteSource>;

export const QuoteDestination = Type.Object(
  {
    destinationType: StringEnum(['ACCOUNT', 'UMA_ADDRESS'], { description: 'ACCOUNT or UMA_ADDRESS.' }),
    accountId: Type.Optional(Type.String({ description: 'Account receiving the money (ACCOUNT).' })),
    paymentRail: Type.Optional(Type.String({ description: 'Rail the payout uses (external accounts).' })),
    umaAddress: Type.Optional(Type.String({ description: 'UMA address of the recipient (UMA_ADDRESS).' })),
    currency: Type.Optional(Type.String({ description: 'Currency the recipient receives (UMA_ADDRESS).' })),
  },
  { description: 'Where the money goes.' },
);
export type QuoteDestination = Static<typeof QuoteDestination>;

export const OutgoingRateDetails = Type.Object(
  {
    counterpartyMultiplier: Type.Number({ description: 'Smallest receiving units per millisatoshi (mid-market).' }),
    counterpartyFixedFee: Type.Integer({ description: 'Payout fee, in the smallest unit of the receiving currency.' }),
    serviceApiMultiplier: Type.Number({ description: 'Millisatoshis per smallest sending unit, after the FX spread.' }),
    serviceApiFixedFee: Type.Integer({ description: 'Platform fixed fee, in the smallest unit of the sending currency.' }),
    serviceApiVariableFeeRate: Type.Number({ description: 'Variable fee as a fraction of the sending amount.' }),
    serviceApiVariableFeeAmount: Type.Integer({ description: 'Variable fee, in the smallest unit of the sending currency (rounded up).' }),
  },
  { description: 'How the amounts were computed (docs/pricing.md).' },
);
export type OutgoingRateDetails = Static<typeof OutgoingRateDetails>;

const CurrencyView = (description: string) => Type.Object(CurrencySchema.properties, { description });

export const Quote = Type.Object(
  {
    id: Type.String({ description: 'Quote identifier (`Quote:…`).' }),
    status: StringEnum(QUOTE_STATUSES, {
      description: 'PENDING: waiting for execution or funds; PROCESSING: executed, payment under way; COMPLETED: delivered; FAILED: see the transaction\'s failureReason; EXPIRED: not executed in time.',
    }),
    createdAt: DateTime('When the quote was created.'),
    expiresAt: DateTime('Deadline for executing (or funding) the quote.'),
    source: QuoteSource,
    destination: QuoteDestination,
    sendingCurrency: CurrencyView('Currency of the sending amount.'),
    receivingCurrency: CurrencyView('Currency of the receiving amount.'),
    totalSendingAmount: Type.Integer({ description: 'What leaves the source, fees included, in the smallest sending unit.' }),
    totalReceivingAmount: Type.Integer({ description: 'What the recipient gets, in the smallest receiving unit.' }),
    exchangeRate: Type.Number({ description: 'Receiving-currency units per one sending-currency unit, after the spread and before fees.' }),
    feesIncluded: Type.Integer({ description: 'Fees inside totalSendingAmount, in the smallest sending unit.' }),
    transactionId: Type.String({ description: 'The transaction that follows this quote (`Transaction:…`).' }),
    paymentInstructions: Type.Optional(
      Type.Array(PaymentInstructions, {
        description: 'How to fund (REALTIME_FUNDING) or what to sign (EMBEDDED_WALLET sources: `payloadToSign`).',
      }),
    ),
    counterpartyInformation: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'What is known about the recipient (e.g. FULL_NAME of the account holder).' }),
    ),
    rateDetails: OutgoingRateDetails,
  },
  { title: 'Quote' },
);
export type QuoteView = Static<typeof Quote>;

export const ExecuteHeaders = Type.Object({
  'service-wallet-signature': Type.Optional(
    Type.String({ maxLength: 4096, description: 'EMBEDDED_WALLET sources: signature over the quote\'s `payloadToSign`; ignored otherwise.' }),
  ),
});

export const SandboxSendRequest = Type.Object(
  {
    quoteId: Id('Real-time funded quote to pay (`Quote:…`).'),
    currencyCode: CurrencyCode('Currency of the simulated payment; must be the quote\'s sending currency.'),
    currencyAmount: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Amount paid, smallest unit. Default: the quote\'s totalSendingAmount.' }),
    ),
  },
  { additionalProperties: false, title: 'SandboxSendRequest' },
);
export type SandboxSendRequest = Static<typeof SandboxSendRequest>;

// ── lookups ──────────────────────────────────────────────────────────────────────────────────────

export const LookupQuery = Type.Object({
  senderUmaAddress: Type.Optional(Type.String({ maxLength: 300, description: 'UMA address of the sender (or give customerId).' })),
  customerId: Type.Optional(Type.String({ maxLength: 200, description: 'Sending customer (or give senderUmaAddress).' })),
});
export type LookupQuery = Static<typeof LookupQuery>;

export const RequiredPayerField = Type.Object(
  {
    name: CustomerInfoFieldName,
    mandatory: Type.Boolean({ description: 'True: a quote without it is refused.' }),
  },
  { description: 'A piece of sender information the receiver asks for.' },
);
export type RequiredPayerField = Static<typeof RequiredPayerField>;

export const CurrencyPreference = Type.Object(
  {
    currency: CurrencyView('A currency the receiver accepts.'),
    estimatedExchangeRate: Type.Number({ description: 'Estimated units of this currency per unit of the sender\'s currency; not locked.' }),
    min: Type.Integer({ description: 'Smallest amount that can be received, smallest unit.' }),
    max: Type.Integer({ description: 'Largest amount that can be received, smallest unit.' }),
  },
  { description: 'A currency the receiver accepts, with limits and an estimated rate.' },
);
export type CurrencyPreference = Static<typeof CurrencyPreference>;

export const ExternalAccountLookup = Type.Object(
  {
    lookupId: Type.String({ description: 'Pass it as `lookupId` to POST /quotes (`Lookup:…`); valid for 15 minutes.' }),
    accountId: Type.String({ description: 'The external account looked up.' }),
    supportedCurrencies: Type.Array(CurrencyPreference, { description: 'Currencies the account can receive.' }),
    requiredPayerDataFields: Type.Array(RequiredPayerField, { description: 'Sender information to give in `senderCustomerInfo`.' }),
  },
  { title: 'ReceiverExternalAccountLookupResponse' },
);
export type ExternalAccountLookupView = Static<typeof ExternalAccountLookup>;
