import { currency } from '../../core/currencies.js';
import { ServiceError } from '../../core/errors.js';
import type { QuoteRecord } from './repository.js';
import type { QuoteView } from './schemas.js';

export function presentQuote(q: QuoteRecord): QuoteView {
  return {
    id: q.id,
    status: q.status,
    createdAt: q.createdAt.toISOString(),
    expiresAt: q.expiresAt.toISOString(),
    source: q.source,
    destination: q.destination,
    sendingCurrency: currency(q.sendingCurrency),
    receivingCurrency: currency(q.receivingCurrency),
    totalSendingAmount: q.totalSendingAmount,
    totalReceivingAmount: q.totalReceivingAmount,
    exchangeRate: q.exchangeRate,
    feesIncluded: q.feesIncluded,
    transactionId: q.transactionId,
    ...(q.paymentInstructions && { paymentInstructions: q.paymentInstructions }),
    ...(q.counterpartyInformation && { counterpartyInformation: q.counterpartyInformation }),
    rateDetails: q.rateDetails,
  };
}

export const quoteNotFound = () => new ServiceError('QUOTE_NOT_FOUND', 'quote not found');

/**
 * Throws the 409 that explains why a quote can no longer be executed or funded: it expired
 * (whether or not the expiry job has run yet), or it was executed already.
 */
export function refuseUnlessExecutable(q: QuoteRecord, now: Date): void {
  if (q.status === 'EXPIRED' || (q.status === 'PENDING' && q.expiresAt <= now)) {
    throw new ServiceError('QUOTE_EXPIRED', `this quote expired at ${q.expiresAt.toISOString()}; create a new one`, {
      details: { expiresAt: q.expiresAt.toISOString() },
    });
  }
  if (q.status !== 'PENDING') {
    throw new ServiceError('QUOTE_ALREADY_EXECUTED', `this quote was already executed (status ${q.status})`, {
      details: { status: q.status, transactionId: q.transactionId },
    });
  }
}
