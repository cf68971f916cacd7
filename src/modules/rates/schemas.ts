import { Type, type Static } from 'typebox';
import { CurrencyCode, CurrencySchema, DateTime, StringEnum } from '../../http/common-schemas.js';
import { PAYMENT_RAILS } from '../accounts/schemas.js';

const MAX_AMOUNT = 9_000_000_000_000_000;

export const ExchangeRateQuery = Type.Object({
  sourceCurrency: Type.Optional(
    CurrencyCode('Only corridors sending this currency. Without it, every currency the platform supports is a source.'),
  ),
  destinationCurrency: Type.Optional(
    Type.Array(CurrencyCode('A receiving currency code.'), {
      maxItems: 50,
      description: 'Only corridors receiving these currencies; repeat the parameter for several. Without it, every other currency the platform supports.',
    }),
  ),
  sendingAmount: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_AMOUNT,
      default: 10_000,
      description: 'Amount to price, in the smallest unit of each source currency (default 10000).',
    }),
  ),
});
export type ExchangeRateQuery = Static<typeof ExchangeRateQuery>;

const currencyObject = (description: string) => Type.Object(CurrencySchema.properties, { description });

export const ExchangeRate = Type.Object(
  {
    sourceCurrency: currencyObject('Currency the sender pays in.'),
    destinationCurrency: currencyObject('Currency the receiver gets.'),
    sendingAmount: Type.Integer({ minimum: 0, description: 'The priced amount, in the smallest unit of the source currency.' }),
    minSendingAmount: Type.Integer({ minimum: 0, description: 'Smallest payment the platform allows in the source currency, in its smallest unit.' }),
    maxSendingAmount: Type.Integer({ minimum: 0, description: 'Largest payment the platform allows in the source currency, in its smallest unit.' }),
    destinationPaymentRail: StringEnum(PAYMENT_RAILS, { description: 'Network the payout normally uses in the destination currency.' }),
    receivingAmount: Type.Integer({
      minimum: 0,
      description: 'What `sendingAmount` delivers after every fee, in the smallest unit of the destination currency; 0 when it does not cover the fees.',
    }),
    exchangeRate: Type.Number({
      description: 'Destination-currency units received per one source-currency unit, after the FX spread and before fees (USD to EUR is about 0.86).',
    }),
    fees: Type.Object(
      { fixed: Type.Integer({ minimum: 0, description: 'Fixed fee per payment, in the smallest unit of the source currency.' }) },
      { description: 'The platform\'s fees for payments from the source currency.' },
    ),
    updatedAt: DateTime('When these rates were fetched from the rate source.'),
  },
  { title: 'ExchangeRate' },
);
export type ExchangeRateView = Static<typeof ExchangeRate>;

export const ExchangeRateList = Type.Object({
  data: Type.Array(ExchangeRate, { description: 'One entry per corridor the filters select.' }),
});
