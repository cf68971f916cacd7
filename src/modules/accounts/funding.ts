import { newReference } from '../../core/ids.js';
import type { DepositDetails, PaymentInstructions, PaymentRail } from './schemas.js';
import { clabe, evmAddress, iban, pixQrCode, pixRandomKey, seededDigits, sparkAddress, tronAddress } from './sandbox-addresses.js';

export const SANDBOX_BANK_NAME = 'Corridor Sandbox Bank';
/** A routing number with a valid ABA checksum that no real bank uses for deposits. */
export const SANDBOX_ROUTING_NUMBER = '110000000';

/** Crypto assets get INTERNAL_CRYPTO accounts; everything else is fiat. */
const CRYPTO_CODES = new Set(['BTC', 'ETH', 'SOL', 'USDC', 'USDT']);

export function isCryptoCurrency(code: string): boolean {
  return CRYPTO_CODES.has(code);
}

/** A fresh deposit reference: short, upper-case alphanumeric, safe in any bank's memo field. */
export const newFundingReference = (): string => newReference();

export interface FundingSubject {
  id: string;
  currency: string;
  customerId: string | null;
  fundingReference: string;
}

interface Seed {
  digits(label: string, count: number): string;
  reference: string;
  id: string;
}

/** A test BIC (a '0' as second location character marks test codes) for the currency's country. */
function sandboxBic(country: string): string {
  return `CRDR${country}20`;
}

function bank(accountType: string, rails: PaymentRail[], fields: Partial<DepositDetails>, seed: Seed): DepositDetails {
  return { accountType, paymentRails: rails, bankName: SANDBOX_BANK_NAME, ...fields, reference: seed.reference };
}

function ibanAccount(accountType: string, country: string, bbanDigits: number, rails: PaymentRail[], s: Seed): DepositDetails {
  return bank(accountType, rails, { iban: iban(country, s.digits('iban', bbanDigits)), swiftCode: sandboxBic(country) }, s);
}

/** Bank account number plus SWIFT code (the reference's HKD, MYR, SGD, THB and VND formats). */
function swiftAccount(code: string, digits: number, rails: PaymentRail[] = ['BANK_TRANSFER'], extra: Partial<DepositDetails> = {}) {
  return (s: Seed) =>
    bank(`${code}_ACCOUNT`, rails, { accountNumber: s.digits('account', digits), swiftCode: sandboxBic(code.slice(0, 2)), ...extra }, s);
}

const BUILDERS: Record<string, (seed: Seed) => DepositDetails> = {
  USD: (s) => bank('USD_ACCOUNT', ['ACH', 'WIRE'], { accountNumber: s.digits('account', 12), routingNumber: SANDBOX_ROUTING_NUMBER }, s),
  EUR: (s) => ibanAccount('EUR_ACCOUNT', 'DE', 18, ['SEPA', 'SEPA_INSTANT'], s),
  DKK: (s) => ibanAccount('DKK_ACCOUNT', 'DK', 14, ['SEPA'], s),
  AED: (s) => ibanAccount('AED_ACCOUNT', 'AE', 19, ['BANK_TRANSFER'], s),
  MXN: (s) => bank('MXN_ACCOUNT', ['SPEI'], { clabeNumber: clabe(`999180${s.digits('clabe', 11)}`) }, s),
  BRL: (s) => bank('BRL_ACCOUNT', ['PIX'], { qrCode: pixQrCode(pixRandomKey(s.id), s.reference) }, s),
  GBP: (s) => bank('GBP_ACCOUNT', ['FASTER_PAYMENTS'], { sortCode: `99${s.digits('sort', 4)}`, accountNumber: s.digits('account', 8) }, s),
  CAD: (s) => bank('CAD_ACCOUNT', ['BANK_TRANSFER'], { bankCode: '999', branchCode: s.digits('branch', 5), accountNumber: s.digits('account', 12) }, s),
  INR: (s) => bank('INR_ACCOUNT', ['UPI'], { vpa: `${s.reference.toLowerCase()}@corridor` }, s),
  NGN: (s) => bank('NGN_ACCOUNT', ['BANK_TRANSFER'], { accountNumber: s.digits('account', 10) }, s),
  PHP: (s) => bank('PHP_ACCOUNT', ['BANK_TRANSFER'], { accountNumber: s.digits('account', 12) }, s),
  ZAR: (s) => bank('ZAR_ACCOUNT', ['BANK_TRANSFER'], { accountNumber: s.digits('account', 11) }, s),
  SGD: swiftAccount('SGD', 12, ['FAST', 'BANK_TRANSFER']),
  HKD: swiftAccount('HKD', 12),
  MYR: swiftAccount('MYR', 12),
  THB: swiftAccount('THB', 10),
  VND: swiftAccount('VND', 12),
  IDR: (s) => swiftAccount('IDR', 12, ['BANK_TRANSFER'], { phoneNumber: `+62${s.digits('phone', 10)}` })(s),
  // Argentina's CBU: 22 digits.
  ARS: (s) => bank('ARS_ACCOUNT', ['BANK_TRANSFER'], { accountNumber: s.digits('account', 22) }, s),
  USDC: (s) => ({ accountType: 'BASE_WALLET', assetType: 'USDC', address: evmAddress(s.id) }),
  USDT: (s) => ({ accountType: 'TRON_WALLET', assetType: 'USDT', address: tronAddress(s.id) }),
  BTC: (s) => ({ accountType: 'SPARK_WALLET', assetType: 'BTC', address: sparkAddress(s.id) }),
};

function notes(details: DepositDetails): string {
  if (details.address) return `Sandbox deposit address: send only ${details.assetType} on this network.`;
  return 'Sandbox deposit details: include the reference with the payment so it is credited to this account.';
}

/**
 * Deposit details of a sandbox account, derived from its id and funding reference so they never
 * change. Only currencies the reference API has a deposit format for get details: a client of the
 * production API could not parse others (a JPY account, say, has none).
 */
export function sandboxFundingInstructions(account: FundingSubject): PaymentInstructions[] {
  const seed: Seed = {
    id: account.id,
    reference: account.fundingReference,
    digits: (label, count) => seededDigits(account.id, label, count),
  };
  const build = BUILDERS[account.currency];
  if (!build) return [];
  const details = build(seed);
  return [{ instructionsNotes: notes(details), isPlatformAccount: account.customerId === null, accountOrWalletInfo: details }];
}
