import { Dec } from './decimal.js';

/** Mid-market prices as a provider reports them. */
export interface MidMarketRates {
  /** Price of one major unit of each currency in US dollars (USD itself is 1). */
  usdPrices: ReadonlyMap<string, Dec>;
}

/** Where mid-market rates come from. Implementations may be slow or fail: the rate service caches them. */
export interface RateProvider {
  /** Names the source in logs and error messages. */
  readonly name: string;
  midMarketRates(): Promise<MidMarketRates>;
}

/** A cached set of mid-market prices and the moment they were fetched. */
export interface RateSnapshot extends MidMarketRates {
  updatedAt: Date;
}

/** Prices quoted the way markets quote them: fiat as units per dollar, crypto as dollars per unit. */
export interface PriceTable {
  unitsPerUsd: Record<string, string>;
  usdPerUnit: Record<string, string>;
}

// Approximate mid-market rates of November 2025. A stand-in until a live provider is configured.
export const BUILT_IN_PRICES: PriceTable = {
  unitsPerUsd: {
    USD: '1',
    EUR: '0.862',
    GBP: '0.760',
    JPY: '154.20',
    CHF: '0.805',
    CAD: '1.405',
    AUD: '1.535',
    NZD: '1.770',
    CNY: '7.110',
    HKD: '7.775',
    SGD: '1.302',
    KRW: '1458',
    INR: '88.65',
    IDR: '16690',
    PHP: '58.95',
    THB: '32.45',
    MYR: '4.170',
    VND: '26330',
    TWD: '31.00',
    PKR: '281.0',
    BDT: '122.2',
    MXN: '18.35',
    BRL: '5.330',
    COP: '3790',
    CLP: '935.0',
    ARS: '1445',
    PEN: '3.370',
    UYU: '39.80',
    DOP: '63.60',
    GTQ: '7.665',
    CRC: '502.5',
    JMD: '160.5',
    NGN: '1440',
    KES: '129.25',
    GHS: '10.95',
    ZAR: '17.35',
    EGP: '47.30',
    MAD: '9.270',
    UGX: '3505',
    TZS: '2455',
    RWF: '1450',
    ZMW: '23.10',
    MWK: '1735',
    BWP: '13.55',
    HTG: '131.0',
    XOF: '565.43',
    XAF: '565.43',
    SEK: '9.520',
    NOK: '10.13',
    DKK: '6.435',
    PLN: '3.665',
    CZK: '20.95',
    HUF: '333.5',
    RON: '4.385',
    TRY: '42.25',
    ILS: '3.260',
    AED: '3.6725',
    SAR: '3.7502',
    QAR: '3.640',
    BHD: '0.376',
    KWD: '0.3072',
    OMR: '0.3845',
    JOD: '0.709',
  },
  usdPerUnit: {
    BTC: '91500',
    ETH: '3050',
    SOL: '138',
    USDC: '1.0000',
    USDT: '1.0000',
  },
};

/** Turns a quoted table into dollar prices, rejecting entries that are not positive numbers. */
export function toUsdPrices(table: PriceTable): Map<string, Dec> {
  const prices = new Map<string, Dec>();
  const add = (code: string, value: Dec) => {
    if (!value.isFinite() || value.lte(0)) throw new Error(`price of ${code} must be a positive number`);
    prices.set(code, value);
  };
  for (const [code, perUsd] of Object.entries(table.unitsPerUsd)) add(code, new Dec(1).div(perUsd));
  for (const [code, usd] of Object.entries(table.usdPerUnit)) add(code, new Dec(usd));
  return prices;
}

/** A provider that always reports the same prices: the built-in table, or a test's own. */
export function staticRateProvider(table: PriceTable = BUILT_IN_PRICES, name = 'built-in table'): RateProvider {
  const usdPrices = toUsdPrices(table);
  return { name, midMarketRates: async () => ({ usdPrices }) };
}
