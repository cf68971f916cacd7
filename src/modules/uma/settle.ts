import { randomBytes } from 'node:crypto';
import { ErrorCode } from '@uma-sdk/core';
import type { CustomerService } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import type { TransactionService } from '../transactions/service.js';
import type { Deposits } from './deposit.js';
import { parseInvoice } from './invoice.js';
import { signUma } from './keys.js';
import { fail, verifyOrRefuse, type LnurlpDeps } from './lnurlp.js';
import * as repo from './repository.js';
import type { InvoiceRecord } from './repository.js';
import { settleRequestPayload, settleStatusPayload, type SettleStatus } from './settlement.js';

export interface SettleDeps extends LnurlpDeps {
  customers: LnurlpDeps['customers'] & Pick<CustomerService, 'requireCustomer'>;
  transactions: Pick<TransactionService, 'find'>;
  deposits: Deposits;
}

interface SettleRequest {
  invoice: string;
  vaspDomain: string;
  signatureNonce: string;
  signatureTimestamp: number;
  signature: string;
}

function parseRequest(body: unknown): SettleRequest {
  const b = (body ?? {}) as Partial<SettleRequest>;
  const strings = [b.invoice, b.vaspDomain, b.signatureNonce, b.signature].every((v) => typeof v === 'string' && v.length > 0 && v.length <= 2000);
  if (!strings || typeof b.signatureTimestamp !== 'number' || !Number.isSafeInteger(b.signatureTimestamp)) {
    throw fail(ErrorCode.INVALID_REQUEST_FORMAT, 'a settlement needs invoice, vaspDomain, signatureNonce, signatureTimestamp and signature');
  }
  return b as SettleRequest;
}

type State = { status: SettleStatus; detail: string };

/** The receiver's view of an accepted invoice: its incoming transaction decides. */
function stateOf(invoice: InvoiceRecord, transaction: Awaited<ReturnType<TransactionService['find']>>): State {
  switch (transaction?.status) {
    case 'COMPLETED':
      return { status: 'SETTLED', detail: invoice.preimage };
    case 'FAILED':
    case 'EXPIRED':
      return { status: 'FAILED', detail: transaction.failureReason ?? 'FAILED' };
    case 'REJECTED':
      return { status: 'FAILED', detail: 'REJECTED' };
    default:
      return { status: 'PENDING', detail: '' };
  }
}

/**
 * The receiving side of settlement (see settlement.ts): `POST /uma/settle` from the sender's VASP
 * accepts the invoice once (the incoming payment is created with the invoice's transaction id, so
 * a repeated call cannot credit twice) and answers its state, signed.
 */
export function createSettleHandler(deps: SettleDeps) {
  const { database, clock } = deps;

  /** Cancels an OPEN invoice; undefined when another call moved it first (accepted it, say). */
  async function cancel(invoice: InvoiceRecord, reason: string): Promise<State | undefined> {
    const moved = await repo.moveInvoice(database.db, invoice.paymentHash, 'OPEN', 'CANCELLED', new Date(clock.realNowMs()));
    return moved ? { status: 'FAILED', detail: reason } : undefined;
  }

  /**
   * Decides an OPEN invoice: cancelled (expired, receiver gone) or credited and ACCEPTED in one
   * commit. An invoice that already has its transaction (left OPEN by a version that credited and
   * moved it in two steps) is accepted, never cancelled. Undefined unless it was cancelled here.
   */
  async function decide(platform: Platform, invoice: InvoiceRecord): Promise<State | undefined> {
    if (await deps.transactions.find(database.db, platform.id, invoice.transactionId)) {
      await repo.moveInvoice(database.db, invoice.paymentHash, 'OPEN', 'ACCEPTED', new Date(clock.realNowMs()));
      return undefined;
    }
    if (invoice.expiresAt.getTime() < clock.realNowMs()) return cancel(invoice, 'INVOICE_EXPIRED');
    const customer = await deps.customers.requireCustomer(database.db, platform.id, invoice.customerId).catch(() => undefined);
    if (!customer) return cancel(invoice, 'RECEIVER_NOT_FOUND');
    await deps.deposits.credit(platform, invoice, customer.platformCustomerId);
    return undefined;
  }

  async function accept(platform: Platform, opened: InvoiceRecord): Promise<State> {
    let invoice = opened;
    if (invoice.status === 'OPEN') {
      const cancelled = await decide(platform, invoice);
      if (cancelled) return cancelled;
      // Accepted here, or moved by a concurrent call: its status now decides.
      invoice = (await repo.findInvoice(database.db, invoice.paymentHash))!;
    }
    if (invoice.status === 'CANCELLED') return { status: 'FAILED', detail: 'INVOICE_CANCELLED' };
    return stateOf(invoice, await deps.transactions.find(database.db, platform.id, invoice.transactionId));
  }

  async function signed(platform: Platform, invoice: InvoiceRecord, state: State) {
    const key = await deps.keys.get(platform);
    const nonce = randomBytes(16).toString('hex');
    const timestampSec = Math.floor(clock.realNowMs() / 1000);
    const signature = await signUma(settleStatusPayload(invoice.paymentHash, state.status, state.detail, nonce, timestampSec), key);
    const detail = state.status === 'SETTLED' ? { preimage: state.detail } : state.status === 'FAILED' ? { reason: state.detail } : {};
    return { status: state.status, ...detail, signatureNonce: nonce, signatureTimestamp: timestampSec, signature };
  }

  /** POST /uma/settle. */
  async function settle(host: string | undefined, body: unknown): Promise<unknown> {
    const platform = await deps.platformFor(host);
    const request = parseRequest(body);
    const parsed = parseInvoice(request.invoice);
    if (!parsed) throw fail(ErrorCode.INVALID_INVOICE, 'this is not an invoice Corridor issued');
    const invoice = await repo.findInvoice(database.db, parsed.paymentHash);
    if (!invoice || invoice.platformId !== platform.id || invoice.invoice !== request.invoice) {
      throw fail(ErrorCode.REQUEST_NOT_FOUND, 'no such invoice here');
    }
    if (request.vaspDomain.toLowerCase() !== invoice.senderDomain) throw fail(ErrorCode.FORBIDDEN, 'this invoice was issued to another VASP');
    await verifyOrRefuse(deps.auth, {
      domain: invoice.senderDomain,
      payload: settleRequestPayload(request.invoice, request.signatureNonce, request.signatureTimestamp),
      signature: request.signature,
      nonce: request.signatureNonce,
      timestampSec: request.signatureTimestamp,
    });
    return signed(platform, invoice, await accept(platform, invoice));
  }

  return { settle };
}
