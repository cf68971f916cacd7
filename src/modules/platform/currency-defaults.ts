import { currency } from '../../core/currencies.js';
import type { CurrencyConfig, CurrencyConfigInput, CustomerInfoField, FeeSchedule } from './schemas.js';

/** Currencies a new platform supports until it configures its own. */
export const DEFAULT_CURRENCIES = ['USD', 'EUR', 'MXN'];

/** Fees of a new platform: 0.3% of the sending amount and a 0.25% FX spread, no fixed fee. */
export const DEFAULT_FEES: FeeSchedule = { variableFeeRate: 0.003, fixedFees: [], fxSpreadBps: 25 };

export function defaultCurrencyConfig(code: string): CurrencyConfigInput {
  const unit = 10 ** currency(code).decimals;
  return {
    currencyCode: code,
    minAmount: unit,
    maxAmount: unit * 1_000_000,
    requiredCounterpartyFields: [],
    enabledTransactionTypes: ['OUTGOING', 'INCOMING'],
  };
}

// What the built-in payout providers need, per currency (read-only in PlatformConfig).
const PROVIDER_CUSTOMER_FIELDS: Record<string, CustomerInfoField[]> = {
  MXN: ['NATIONALITY', 'BIRTH_DATE'],
  BRL: ['TAX_ID', 'BIRTH_DATE'],
  INR: ['NATIONALITY'],
  NGN: ['NATIONALITY', 'BIRTH_DATE'],
};
const PROVIDER_COUNTERPARTY_FIELDS: Record<string, CustomerInfoField[]> = {
  MXN: ['FULL_NAME'],
  BRL: ['FULL_NAME', 'TAX_ID'],
  INR: ['FULL_NAME', 'COUNTRY_OF_RESIDENCE'],
  NGN: ['FULL_NAME', 'COUNTRY_OF_RESIDENCE'],
  PHP: ['FULL_NAME'],
};

/** A stored currency entry as the API shows it, with the provider's read-only requirements. */
export function presentCurrencyConfig(entry: CurrencyConfigInput): CurrencyConfig {
  const customer = PROVIDER_CUSTOMER_FIELDS[entry.currencyCode];
  const counterparty = PROVIDER_COUNTERPARTY_FIELDS[entry.currencyCode];
  return {
    ...entry,
    ...(customer && { providerRequiredCustomerFields: customer }),
    ...(counterparty && { providerRequiredCounterpartyCustomerFields: counterparty }),
  };
}
