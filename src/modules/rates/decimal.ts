import { Decimal } from 'decimal.js';

/**
 * The decimal type of the rates module. 64 significant digits keep every product exact: an amount
 * (at most 16 digits) times two multipliers of 15 significant digits needs at most 46.
 * Start arithmetic from `Dec` values (`new Dec(x).times(y)`): a result takes the precision of the
 * value whose method was called, and the library's default of 20 digits would silently round.
 */
export const Dec = Decimal.clone({ precision: 64, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 40 });
export type Dec = Decimal;

export { Decimal };
