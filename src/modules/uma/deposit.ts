import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { enqueueJobs, type ClaimedJob, type JobRunner } from '../../core/jobs.js';
import { isUniqueViolation, type Database, type Trx } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { Platform, PlatformService } from '../platform/service.js';
import type { IncomingPayment, IncomingPayments, ReceiveWithin } from '../transactions/incoming.js';
import type { TransactionRecord, TransactionService } from '../transactions/service.js';
import type { TransferService } from '../transfers/service.js';
import * as repo from './repository.js';
import type { InvoiceRecord } from './repository.js';

/** Job that forwards a completed incoming UMA payment to the customer's defaultUmaDepositAccount. */
export const FORWARD_JOB = 'uma.forward-deposit';

export interface DepositDeps {
  database: Database;
  clock: Clock;
  log?: Logger;
  jobs: JobRunner;
  platforms: Pick<PlatformService, 'get'>;
  incomingPayments: Pick<IncomingPayments, 'receive' | 'receiveWithin'>;
  transactions: Pick<TransactionService, 'find'>;
  /** Built after this module (it needs the rails): looked up when a deposit is forwarded. */
  transfers: () => Pick<TransferService, 'transferOut'>;
}

class AlreadyForwarded extends Error {}
class InvoiceMoved extends Error {}

/**
 * Incoming UMA payments land in the customer's internal account of the receiving currency, through
 * the platform's approval flow (INCOMING_PAYMENT.PENDING when it has a webhook endpoint). When the
 * customer chose a defaultUmaDepositAccount, the completed payment is then forwarded to it with an
 * ordinary transfer-out (its own OUTGOING transaction), exactly once per invoice.
 */
export function createDeposits(deps: DepositDeps) {
  const { database, clock } = deps;

  /** The incoming payment an invoice's payment makes. */
  function paymentOf(invoice: InvoiceRecord, platformCustomerId: string): IncomingPayment {
    return {
      id: invoice.transactionId,
      customer: { id: invoice.customerId, platformCustomerId },
      account: { id: invoice.accountId, currency: invoice.currency },
      amount: invoice.amount,
      source: { sourceType: 'UMA_ADDRESS', umaAddress: invoice.senderIdentifier },
      ...(invoice.counterpartyInformation && { counterpartyInformation: invoice.counterpartyInformation }),
    };
  }

  /**
   * Accepts an OPEN invoice: its incoming payment and the move to ACCEPTED commit together, so an
   * invoice is never left OPEN (cancellable at expiry) with its customer already credited. Once:
   * the transaction id was fixed when the invoice was made, so a repeated call finds the transaction
   * instead of creating another. Does nothing when another call moved the invoice first.
   */
  async function credit(platform: Platform, invoice: InvoiceRecord, platformCustomerId: string): Promise<void> {
    try {
      await deps.incomingPayments.receiveWithin(platform, paymentOf(invoice, platformCustomerId), (create) =>
        transact(database.db, async (trx) => {
          if (!(await repo.moveInvoice(trx, invoice.paymentHash, 'OPEN', 'ACCEPTED', new Date(clock.realNowMs())))) throw new InvoiceMoved();
          return create(trx);
        }),
      );
    } catch (error) {
      if (error instanceof InvoiceMoved || isUniqueViolation(error, 'transactions_pkey')) return;
      throw error;
    }
  }

  /**
   * Credits an invoice just made, in the transaction `within` opens with the caller's own writes
   * (the sandbox's invoice and the request's Idempotency-Key record).
   */
  function creditWithin<R>(platform: Platform, invoice: InvoiceRecord, platformCustomerId: string, within: ReceiveWithin<R>): Promise<R> {
    return deps.incomingPayments.receiveWithin(platform, paymentOf(invoice, platformCustomerId), within);
  }

  /**
   * An incoming payment completed (credited at once, or approved later): if it paid an invoice of a
   * customer with a defaultUmaDepositAccount, its forward job commits with the completion, so no
   * crash can leave the money credited and never forwarded.
   */
  async function forwardCompleted(trx: Trx, platform: PlatformRef, record: TransactionRecord): Promise<void> {
    if (record.type !== 'INCOMING' || record.source.sourceType !== 'UMA_ADDRESS' || !record.customerId) return;
    const due = await repo.unforwardedOf(trx, platform.id, record.customerId, record.id);
    await enqueueJobs(trx, platform, due.map((paymentHash) => ({ kind: FORWARD_JOB, payload: { paymentHash } })), clock);
  }

  async function forwardNow(platform: Platform, invoice: InvoiceRecord): Promise<void> {
    const ctx = {
      platform,
      tx: <T>(work: (trx: Trx) => Promise<T>) =>
        transact(database.db, async (trx) => {
          const result = await work(trx);
          const id = (result as { id?: string }).id;
          if (!id || !(await repo.setForwarded(trx, invoice.paymentHash, id, clock.now(platform)))) throw new AlreadyForwarded();
          return result;
        }),
    };
    try {
      await deps.transfers().transferOut(ctx, { source: { accountId: invoice.accountId }, destination: { accountId: invoice.depositAccountId! }, amount: invoice.amount });
    } catch (error) {
      if (error instanceof AlreadyForwarded) return;
      if (!(error instanceof ServiceError)) throw error;
      // Refused (no rail, account closed, limits): the money stays in the internal account.
      deps.log?.warn({ err: error, paymentHash: invoice.paymentHash }, 'UMA deposit could not be forwarded to the default deposit account');
    }
  }

  /** The forwarding job: forwards a completed payment (one not completed yet gets its job when it completes). */
  async function forward(job: ClaimedJob): Promise<void> {
    const platform = job.platformId ? await deps.platforms.get(job.platformId) : undefined;
    const invoice = await repo.findInvoice(database.db, String(job.payload.paymentHash));
    if (!platform || !invoice || !invoice.depositAccountId || invoice.forwardTransactionId) return;
    const incoming = await deps.transactions.find(database.db, platform.id, invoice.transactionId);
    if (incoming?.status === 'COMPLETED') await forwardNow(platform, invoice);
  }

  /**
   * A customer just verified: forwards that the send rule held back (the customer could not send
   * yet) are tried again. The forward job skips payments already forwarded or not completed.
   */
  async function resumeForwards(trx: Trx, platform: PlatformRef, customerId: string): Promise<void> {
    const held = await repo.unforwardedOf(trx, platform.id, customerId);
    await enqueueJobs(trx, platform, held.map((paymentHash) => ({ kind: FORWARD_JOB, payload: { paymentHash } })), clock);
  }

  return {
    credit,
    creditWithin,
    forwardCompleted,
    resumeForwards,
    registerJobs: () => deps.jobs.register(FORWARD_JOB, forward),
  };
}

export type Deposits = ReturnType<typeof createDeposits>;
