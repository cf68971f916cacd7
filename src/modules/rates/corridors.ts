import type { PaymentRail } from '../accounts/schemas.js';

// The rail a payout in each currency normally uses; anything not listed goes out as a bank transfer.
const DEFAULT_RAILS: Record<string, PaymentRail> = {
  USD: 'ACH',
  EUR: 'SEPA_INSTANT',
  GBP: 'FASTER_PAYMENTS',
  INR: 'UPI',
  MXN: 'SPEI',
  BRL: 'PIX',
  SGD: 'FAST',
  KES: 'MOBILE_MONEY',
  GHS: 'MOBILE_MONEY',
  UGX: 'MOBILE_MONEY',
  TZS: 'MOBILE_MONEY',
  RWF: 'MOBILE_MONEY',
  ZMW: 'MOBILE_MONEY',
  MWK: 'MOBILE_MONEY',
  BWP: 'MOBILE_MONEY',
  HTG: 'MOBILE_MONEY',
  XOF: 'MOBILE_MONEY',
  XAF: 'MOBILE_MONEY',
};

export function defaultPaymentRail(receivingCurrency: string): PaymentRail {
  return DEFAULT_RAILS[receivingCurrency] ?? 'BANK_TRANSFER';
}

/**
 * What the payout partner charges per payout, in the smallest unit of the receiving currency
 * (`counterpartyFixedFee`). Instant bank rails are free to us; mobile-money and some local bank
 * networks charge a flat fee, which comes off the amount received.
 */
export const PAYOUT_FEES: Readonly<Record<string, number>> = {
  NGN: 5_000, // ₦50.00
  KES: 3_000, // KSh 30.00
  GHS: 100, // GH₵1.00
  UGX: 1_000, // USh 1,000 (no minor unit)
  TZS: 100_000, // TSh 1,000.00
  XOF: 100, // CFA 100 (no minor unit)
  XAF: 100, // FCFA 100 (no minor unit)
  PHP: 1_500, // ₱15.00
  RWF: 300, // FRw 300 (no minor unit)
  ZMW: 500, // K5.00
  MWK: 50_000, // MK500.00
  BWP: 500, // P5.00
  HTG: 5_000, // G50.00
};

export function payoutFee(receivingCurrency: string): number {
  return PAYOUT_FEES[receivingCurrency] ?? 0;
}
