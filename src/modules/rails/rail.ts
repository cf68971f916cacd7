import type { PlatformRef } from '../../core/context.js';
import type { FailureDetail, FailureReason } from '../transactions/lifecycle.js';

/** What is being asked of a rail. */
export type RailOperation =
  /** Push money from Corridor to an external account (same currency). */
  | 'TRANSFER_OUT'
  /** Pull money from an external account into Corridor (same currency). */
  | 'TRANSFER_IN'
  /** Deliver the receiving side of an executed quote to an external account. */
  | 'QUOTE_PAYOUT';

export interface RailRequest {
  platform: PlatformRef;
  operation: RailOperation;
  transactionId: string;
  /** The external account's main identifier (account number, IBAN, key, address). */
  identifier: string;
  accountType: string;
  currency: string;
  amount: number;
}

/**
 * One thing the rail reports about a payment. The module that owns the payment decides what it
 * means for its ledger legs and status (for example a transfer-out posts its hold on COMPLETED).
 */
export type RailEvent =
  | { kind: 'COMPLETED' }
  /** `reason` overrides the failureReason the owning module would derive from `detail`. */
  | { kind: 'FAILED'; detail: FailureDetail; reason?: FailureReason }
  /** Delivered, then sent back by the receiving bank: refund the sender. */
  | { kind: 'RETURNED' }
  /** Delivery failed and the refund failed too: the funds are stuck with the counterparty. */
  | { kind: 'REFUND_FAILED'; detail: FailureDetail };

/** When each event happens, relative to initiation (0 = during the request itself). */
export interface RailPlan {
  steps: Array<{ afterMs: number; event: RailEvent }>;
}

export interface RailAdapter {
  /** Starts the payment; the returned plan says what the rail will report, and when. */
  initiate(request: RailRequest): Promise<RailPlan>;
  /**
   * True for a rail that only simulates (the sandbox rail): `initiate` reaches nothing outside
   * and has no effect, so a payment may ask for its plan before its claim commits and store the
   * plan with the claim. A real rail is called only once the payment is committed.
   */
  simulated?: boolean;
}
