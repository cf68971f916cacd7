import { Type, type Static } from 'typebox';
import { CurrencyAmount, CurrencyCode, CurrencySchema, DateTime, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';

export const INTERNAL_ACCOUNT_TYPES = ['INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET'] as const;
export type InternalAccountType = (typeof INTERNAL_ACCOUNT_TYPES)[number];

export const InternalAccountTypeSchema = StringEnum(INTERNAL_ACCOUNT_TYPES, {
  description:
    'INTERNAL_FIAT: fiat balance held by Corridor; INTERNAL_CRYPTO: stablecoin or crypto balance held by Corridor; EMBEDDED_WALLET: self-custodial wallet whose outgoing payments the customer signs.',
});

export const PAYMENT_RAILS = [
  'ACH',
  'BANK_TRANSFER',
  'FAST',
  'FASTER_PAYMENTS',
  'FEDNOW',
  'MOBILE_MONEY',
  'PAYNOW',
  'PIX',
  'RTP',
  'SEPA',
  'SEPA_INSTANT',
  'SPEI',
  'UPI',
  'WIRE',
] as const;
export type PaymentRail = (typeof PAYMENT_RAILS)[number];

/** A CurrencyAmount with a description of its own (the shared schema has none to show). */
const Money = (description: string) =>
  Type.Object(
    {
      amount: CurrencyAmount.properties.amount,
      currency: Type.Object(CurrencySchema.properties, { description: 'Currency of the amount.' }),
    },
    { description },
  );

const text = (description: string) => Type.Optional(Type.String({ description }));

/**
 * Where to send money so that it lands in an account. One flat object: which fields are present
 * depends on `accountType` (bank details for `*_ACCOUNT`, an address for `*_WALLET`).
 */
export const DepositDetails = Type.Object(
  {
    accountType: Type.String({
      description:
        'Kind of details: USD_ACCOUNT, EUR_ACCOUNT, MXN_ACCOUNT, BRL_ACCOUNT, GBP_ACCOUNT, … for bank transfers (the reference API\'s formats; currencies it has none for get no deposit details), BASE_WALLET, TRON_WALLET or SPARK_WALLET for crypto.',
    }),
    paymentRails: Type.Optional(
      Type.Array(StringEnum(PAYMENT_RAILS, { description: 'A payment network.' }), { description: 'Networks that can deliver the deposit.' }),
    ),
    bankName: text('Name of the bank holding the account.'),
    accountNumber: text('Account number at that bank.'),
    routingNumber: text('US ABA routing number (9 digits).'),
    iban: text('International Bank Account Number.'),
    swiftCode: text('SWIFT/BIC code of the bank.'),
    clabeNumber: text('Mexican CLABE (18 digits).'),
    sortCode: text('UK sort code (6 digits).'),
    bankCode: text('Canadian institution number (3 digits).'),
    branchCode: text('Branch or transit number (5 digits).'),
    vpa: text('UPI virtual payment address.'),
    phoneNumber: text('Phone number to pay (E.164), where the format has one (IDR).'),
    qrCode: text('PIX "copia e cola" payload; render it as a QR code or paste it into a banking app.'),
    address: text('Wallet address to send the asset to.'),
    assetType: text('Asset the wallet address accepts (BTC, USDC, USDT).'),
    reference: text('Reference to quote with the payment (memo, remittance information) so it is credited to this account.'),
    invoice: text('Lightning (BOLT11) invoice for the exact amount (SPARK_WALLET funding of a quote).'),
    payloadToSign: text('EMBEDDED_WALLET quote sources: the exact string to sign with the wallet session key; send the signature as Service-Wallet-Signature on execute.'),
  },
  { title: 'DepositDetails', description: 'Bank details or wallet address to send the deposit to.' },
);
export type DepositDetails = Static<typeof DepositDetails>;

export const PaymentInstructions = Type.Object(
  {
    instructionsNotes: Type.Optional(Type.String({ description: 'Human-readable guidance for the payer.' })),
    isPlatformAccount: Type.Boolean({ description: 'True when the account belongs to the platform rather than a customer.' }),
    accountOrWalletInfo: DepositDetails,
  },
  { title: 'PaymentInstructions' },
);
export type PaymentInstructions = Static<typeof PaymentInstructions>;

export const InternalAccountView = Type.Object(
  {
    id: Type.String({ description: 'Internal account identifier (`InternalAccount:…`).' }),
    customerId: Type.Optional(Type.String({ description: 'Customer that owns the account; absent for the platform\'s own accounts.' })),
    type: InternalAccountTypeSchema,
    balance: Money('Available balance: settled funds minus funds held for pending outgoing payments.'),
    totalBalance: Money('Settled balance, including funds held for pending outgoing payments.'),
    fundingPaymentInstructions: Type.Array(PaymentInstructions, {
      description: 'How to deposit into this account. Empty on production platforms until a deposit rail is configured.',
    }),
    createdAt: DateTime('When the account was opened.'),
    updatedAt: DateTime('When the account or its balance last changed.'),
  },
  { title: 'InternalAccount' },
);
export type InternalAccountView = Static<typeof InternalAccountView>;

export const CustomerAccountListQuery = Type.Object({
  currency: Type.Optional(CurrencyCode('Only accounts in this currency.')),
  customerId: Type.Optional(Type.String({ maxLength: 200, description: 'Only accounts of this customer.' })),
  type: Type.Optional(InternalAccountTypeSchema),
  ...PageQuery,
});
export type CustomerAccountListQuery = Static<typeof CustomerAccountListQuery>;

export const PlatformAccountListQuery = Type.Object({
  currency: Type.Optional(CurrencyCode('Only accounts in this currency.')),
  type: Type.Optional(InternalAccountTypeSchema),
  // A platform has at most one account per currency and type, so by default one page holds them all.
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'Maximum number of items to return (1-100, default 100).' }),
  ),
  cursor: PageQuery.cursor,
});
export type PlatformAccountListQuery = Static<typeof PlatformAccountListQuery>;
