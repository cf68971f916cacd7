import type { Leg, LedgerService } from '../ledger/service.js';
import type { PlatformRef } from '../../core/context.js';
import type { QuoteRecord } from './repository.js';

/** The ledger accounts one quote's money passes through. */
export interface QuoteAccounts {
  /** Debited: the source internal account, or the funding system account for real-time funding. */
  source: string;
  fees: string;
  /** FX liquidity in the sending and the receiving currency. */
  fxSending: string;
  fxReceiving: string;
  /** Credited: RAIL_SETTLEMENT (payouts) or UMA_SETTLEMENT (UMA payments) of the receiving currency, or the destination internal account. */
  destination: string;
}

/**
 * Resolves (and on first use creates) the accounts. Call it before opening a database
 * transaction: creating a system account commits on its own.
 */
export async function quoteAccounts(ledger: LedgerService, platform: PlatformRef, q: QuoteRecord): Promise<QuoteAccounts> {
  const funding = platform.mode === 'SANDBOX' ? 'SANDBOX_FUNDING' : 'RAIL_SETTLEMENT';
  const [source, fees, fxSending, fxReceiving, destination] = await Promise.all([
    q.debitAccountId ?? ledger.systemAccount(platform.id, q.sendingCurrency, funding),
    ledger.systemAccount(platform.id, q.sendingCurrency, 'FEES'),
    ledger.systemAccount(platform.id, q.sendingCurrency, 'FX'),
    ledger.systemAccount(platform.id, q.receivingCurrency, 'FX'),
    q.delivery.kind === 'INTERNAL'
      ? q.delivery.accountId
      : ledger.systemAccount(platform.id, q.receivingCurrency, q.delivery.kind === 'UMA' ? 'UMA_SETTLEMENT' : 'RAIL_SETTLEMENT'),
  ]);
  return { source, fees, fxSending, fxReceiving, destination };
}

/** The internal accounts whose holds resolving these quotes posts or voids: their sources. */
export function heldAccounts(quotes: QuoteRecord[]): string[] {
  return quotes.flatMap((q) => (q.debitAccountId ? [q.debitAccountId] : []));
}

/**
 * What execution books (docs/api/quotes.md, "Ledger"): the fee and the converted amount leave the
 * source in the sending currency; the receiving amount leaves FX liquidity in the receiving
 * currency. Payouts hold them (pending) until the rail reports; internal conversions post at once.
 */
export function executionLegs(q: QuoteRecord, a: QuoteAccounts, pending: boolean): Leg[] {
  const legs: Leg[] = [];
  if (q.feesIncluded > 0) legs.push({ debit: a.source, credit: a.fees, amount: q.feesIncluded, pending, code: 'FEE' });
  legs.push({ debit: a.source, credit: a.fxSending, amount: q.totalSendingAmount - q.feesIncluded, pending, code: 'FX' });
  legs.push({ debit: a.fxReceiving, credit: a.destination, amount: q.totalReceivingAmount, pending, code: q.delivery.kind === 'INTERNAL' ? 'FX' : 'PAYOUT' });
  return legs;
}

/** A returned payout: every posted leg reversed, fees included (the sender gets everything back). */
export function refundLegs(q: QuoteRecord, a: QuoteAccounts): Leg[] {
  const legs: Leg[] = [
    { debit: a.destination, credit: a.fxReceiving, amount: q.totalReceivingAmount, code: 'REFUND' },
    { debit: a.fxSending, credit: a.source, amount: q.totalSendingAmount - q.feesIncluded, code: 'REFUND' },
  ];
  if (q.feesIncluded > 0) legs.push({ debit: a.fees, credit: a.source, amount: q.feesIncluded, code: 'REFUND' });
  return legs;
}
