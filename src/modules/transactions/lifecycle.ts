import type { EventType } from '../../core/events.js';

export const TRANSACTION_STATUSES = ['CREATED', 'PENDING', 'PROCESSING', 'COMPLETED', 'REJECTED', 'FAILED', 'REFUNDED', 'EXPIRED'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export type TransactionType = 'INCOMING' | 'OUTGOING';

/**
 * Which status may follow which. COMPLETED → FAILED is a payment the receiving bank returned
 * after it settled (its funds are refunded). Terminal statuses have no successors.
 */
const NEXT: Record<TransactionStatus, TransactionStatus[]> = {
  CREATED: ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED', 'REJECTED'],
  PENDING: ['PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED', 'REJECTED'],
  PROCESSING: ['COMPLETED', 'FAILED', 'REJECTED', 'REFUNDED'],
  COMPLETED: ['FAILED', 'REFUNDED'],
  REJECTED: [],
  FAILED: [],
  REFUNDED: [],
  EXPIRED: [],
};

/** The statuses a transaction may be in for a move to `to`. */
export function statusesBefore(to: TransactionStatus): TransactionStatus[] {
  return TRANSACTION_STATUSES.filter((from) => NEXT[from].includes(to));
}

export function isTerminal(status: TransactionStatus): boolean {
  return NEXT[status].length === 0;
}

/** The webhook a status change announces. */
export function eventFor(type: TransactionType, status: TransactionStatus): EventType | undefined {
  if (type === 'INCOMING') {
    if (status === 'PENDING') return 'INCOMING_PAYMENT.PENDING';
    if (status === 'COMPLETED') return 'INCOMING_PAYMENT.COMPLETED';
    if (status === 'FAILED' || status === 'REJECTED' || status === 'EXPIRED') return 'INCOMING_PAYMENT.FAILED';
    return undefined;
  }
  switch (status) {
    case 'PENDING':
      return 'OUTGOING_PAYMENT.PENDING';
    case 'PROCESSING':
      return 'OUTGOING_PAYMENT.PROCESSING';
    case 'COMPLETED':
      return 'OUTGOING_PAYMENT.COMPLETED';
    case 'FAILED':
    case 'REJECTED':
      return 'OUTGOING_PAYMENT.FAILED';
    case 'REFUNDED':
      return 'OUTGOING_PAYMENT.REFUND_COMPLETED';
    case 'EXPIRED':
      return 'OUTGOING_PAYMENT.EXPIRED';
    default:
      return undefined;
  }
}

/** failureReason of incoming transactions: the reference's IncomingTransactionFailureReason. */
export const INCOMING_FAILURE_REASONS = [
  'LNURLP_FAILED',
  'PAY_REQUEST_FAILED',
  'PAYMENT_APPROVAL_WEBHOOK_ERROR',
  'PAYMENT_APPROVAL_TIMED_OUT',
  'OFFRAMP_FAILED',
  'MISSING_MANDATORY_PAYEE_DATA',
  'QUOTE_EXPIRED',
  'QUOTE_EXECUTION_FAILED',
] as const;
/** failureReason of outgoing transactions: the reference's OutgoingTransactionFailureReason. */
export const OUTGOING_FAILURE_REASONS = [
  'QUOTE_EXPIRED',
  'QUOTE_EXECUTION_FAILED',
  'LIGHTNING_PAYMENT_FAILED',
  'FUNDING_AMOUNT_MISMATCH',
  'COUNTERPARTY_POST_TX_FAILED',
] as const;
export type OutgoingFailureReason = (typeof OUTGOING_FAILURE_REASONS)[number];
export type FailureReason = (typeof INCOMING_FAILURE_REASONS)[number] | OutgoingFailureReason;
export const FAILURE_REASONS: readonly FailureReason[] = [...new Set([...INCOMING_FAILURE_REASONS, ...OUTGOING_FAILURE_REASONS])];

/** Whether the reference's enum for transactions of this direction has `reason`. */
export function reasonFits(type: TransactionType, reason: FailureReason): boolean {
  const allowed: readonly FailureReason[] = type === 'OUTGOING' ? OUTGOING_FAILURE_REASONS : INCOMING_FAILURE_REASONS;
  return allowed.includes(reason);
}

/**
 * A rail that took the payment and could not deliver it: the closest value in each direction's
 * enum (failureDetail says what the rail reported).
 */
export function railFailureReason(type: TransactionType): FailureReason {
  return type === 'OUTGOING' ? 'COUNTERPARTY_POST_TX_FAILED' : 'OFFRAMP_FAILED';
}

/**
 * failureDetail (a Corridor extension): what the rail reported, finer than failureReason, so
 * clients that validate failureReason against the reference's enum keep working.
 */
export const FAILURE_DETAILS = [
  'INSUFFICIENT_FUNDS',
  'ACCOUNT_CLOSED',
  'BANK_REJECTED',
  'TIMEOUT',
  'COUNTERPARTY_DELIVERY_FAILED',
  'RETURNED_BY_RECEIVING_BANK',
  'USER_CANCELLATION',
  'PAYOUT_AND_REFUND_FAILED',
  'EXECUTION_FAILED',
  'COMPLIANCE_FAILED',
  'PLATFORM_REJECTED',
  'NO_RAIL_CONFIGURED',
  'BALANCE_LIMIT',
] as const;
export type FailureDetail = (typeof FAILURE_DETAILS)[number];
