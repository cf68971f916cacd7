import { getPayRequest, PayReqResponse } from '@uma-sdk/core';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';
import type { Customer, CustomerService } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import type { QuoteRecord } from '../quotes/repository.js';
import type { RailPlan } from '../rails/rail.js';
import type { FailureDetail } from '../transactions/lifecycle.js';
import { UmaAuthError, type Authenticator } from './authentication.js';
import { callCounterparty, CounterpartyBusyError, CounterpartyError, type HttpAnswer, type KeyDirectory, type NetworkPolicy } from './counterparty.js';
import { parseInvoice } from './invoice.js';
import type { UmaKeys } from './keys.js';
import { toUmaData } from './payer-data.js';
import { kycStatusOf } from './receiver.js';
import * as repo from './repository.js';
import type { PaymentRecord, UmaLookupRecord } from './repository.js';
import { sandboxPlan } from './sandbox.js';
import type { Settlement } from './settlement.js';

export interface PayerDeps {
  network: NetworkPolicy;
  database: Database;
  clock: Clock;
  log?: Logger;
  keys: UmaKeys;
  directory: KeyDirectory;
  auth: Authenticator;
  customers: Pick<CustomerService, 'requireCustomer'>;
  settlement: Settlement;
}

/**
 * The payment never started (the receiver could not be reached, refused or could not be verified):
 * QUOTE_EXECUTION_FAILED, the reference's outgoing value for it; `detail` says what happened.
 */
export function failedPlan(detail: FailureDetail): RailPlan {
  return { steps: [{ afterMs: 0, event: { kind: 'FAILED', detail, reason: 'QUOTE_EXECUTION_FAILED' } }] };
}

/** Receiver error codes that mean "this sender is not allowed", as opposed to a technical failure. */
const COMPLIANCE_CODES = new Set(['SENDER_NOT_ACCEPTED', 'COUNTERPARTY_NOT_ALLOWED', 'MISSING_MANDATORY_PAYER_DATA', 'FORBIDDEN']);

/** What the sender's customer record tells the receiver (like quotes' required payer data check). */
function customerInformation(customer: Customer | null): Record<string, unknown> {
  if (!customer) return {};
  return {
    FULL_NAME: customer.fullName ?? customer.businessInfo?.legalName,
    BIRTH_DATE: customer.birthDate,
    NATIONALITY: customer.nationality,
    EMAIL: customer.email ?? undefined,
    POSTAL_ADDRESS: customer.address,
  };
}

type InvoiceOutcome = { payment: PaymentRecord } | { plan: RailPlan };

/**
 * The sending side of an executed UMA quote: the pay request (UMAD-05/06) that obtains the
 * receiver's invoice for exactly the quote's receiving amount, then the settlement of that invoice.
 * Sandbox lookups short-circuit to their scripted outcome.
 */
export function createUmaPayer(deps: PayerDeps) {
  const { database, clock } = deps;

  /** The payer data of the pay request: of what Corridor knows of the sender, only the fields the receiver asked for. */
  async function payerData(platform: Platform, q: QuoteRecord): Promise<{ customer: Customer | null; data: Record<string, unknown> }> {
    const customer = q.customerId ? await deps.customers.requireCustomer(database.db, platform.id, q.customerId).catch(() => null) : null;
    const info: Record<string, unknown> = { ...customerInformation(customer), ...(q.purposeOfPayment && { PURPOSE_OF_PAYMENT: q.purposeOfPayment }), ...q.senderCustomerInfo };
    const asked = q.delivery.kind === 'UMA' ? q.delivery.payerFields : undefined;
    const shared = asked ? Object.fromEntries(Object.entries(info).filter(([name]) => asked.includes(name))) : info;
    return { customer, data: toUmaData(shared) };
  }

  function refused(answer: HttpAnswer): RailPlan {
    const code = (answer.json as { code?: unknown } | undefined)?.code;
    const detail: FailureDetail = typeof code === 'string' && COMPLIANCE_CODES.has(code) ? 'COMPLIANCE_FAILED' : 'COUNTERPARTY_DELIVERY_FAILED';
    return failedPlan(detail);
  }

  /** Checks the pay-request response: authentic, and for exactly what the quote promised. */
  async function acceptResponse(platform: Platform, q: QuoteRecord, lookup: UmaLookupRecord, answer: HttpAnswer): Promise<InvoiceOutcome> {
    let response: PayReqResponse;
    try {
      response = PayReqResponse.parse(answer.json);
    } catch {
      return { plan: failedPlan('COUNTERPARTY_DELIVERY_FAILED') };
    }
    const compliance = response.payeeData?.compliance;
    if (!response.isUma() || !compliance?.signature || !compliance.signatureNonce || !compliance.signatureTimestamp) {
      return { plan: failedPlan('COUNTERPARTY_DELIVERY_FAILED') };
    }
    const payload = response.signablePayload(lookup.senderIdentifier!, lookup.receiverUmaAddress);
    await deps.auth.verifyMessage({ domain: lookup.receiverDomain, payload, signature: compliance.signature, nonce: compliance.signatureNonce, timestampSec: compliance.signatureTimestamp });
    const invoice = parseInvoice(response.pr);
    const { converted } = response;
    if (!invoice || converted.currencyCode !== q.receivingCurrency || converted.amount !== q.totalReceivingAmount) {
      deps.log?.warn({ quoteId: q.id, converted }, 'UMA receiver answered with an invoice for another amount or currency');
      return { plan: failedPlan('COUNTERPARTY_DELIVERY_FAILED') };
    }
    const payment = await repo.insertPayment(
      database.db,
      { quoteId: q.id, platformId: platform.id, receiverDomain: lookup.receiverDomain, invoice: response.pr, paymentHash: invoice.paymentHash, amountMsats: invoice.amountMsats, status: 'INVOICED', preimage: null },
      new Date(clock.realNowMs()),
    );
    return { payment };
  }

  /**
   * A call refused for want of a slot (UMA_COUNTERPARTY_CONCURRENCY) before the pay request went
   * out: nothing was sent, so the payment is not failed. The error is thrown on, which leaves the
   * quote PROCESSING with its legs held; the quote's recovery job delivers again (and, refused
   * again, is retried by the job runner with backoff). No payment row exists yet, so the retry
   * sends the pay request, once. A refusal after the pay request was sent (the key fetch that
   * checks its answer) is not one of these: it fails the payment, as a retry would send it twice.
   */
  function notSentYet(q: QuoteRecord, error: CounterpartyBusyError): CounterpartyBusyError {
    deps.log?.warn({ quoteId: q.id }, 'UMA pay request not sent: too many counterparty calls in flight; the recovery job will send it');
    return error;
  }

  /** The pay request: asks the receiver for an invoice of the quote's receiving amount. */
  async function requestInvoice(platform: Platform, q: QuoteRecord, lookup: UmaLookupRecord): Promise<InvoiceOutcome> {
    let receiverKeys;
    try {
      receiverKeys = (await deps.directory.keysOf(lookup.receiverDomain)).keys;
    } catch (error) {
      if (error instanceof CounterpartyBusyError) throw notSentYet(q, error);
      if (error instanceof CounterpartyError) return { plan: failedPlan('COUNTERPARTY_DELIVERY_FAILED') };
      throw error;
    }
    const [key, sender] = await Promise.all([deps.keys.get(platform), payerData(platform, q)]);
    const request = await getPayRequest({
      receiverEncryptionPubKey: receiverKeys.encryption,
      sendingVaspPrivateKey: key.privateKeyBytes,
      receivingCurrencyCode: q.receivingCurrency,
      amount: q.totalReceivingAmount,
      isAmountInReceivingCurrency: true,
      payerIdentifier: lookup.senderIdentifier!,
      payerKycStatus: kycStatusOf(sender.customer),
      umaMajorVersion: 1,
      payerData: sender.data,
      requestedPayeeData: { identifier: { mandatory: true }, name: { mandatory: false } },
    });
    let answer: HttpAnswer;
    try {
      answer = await callCounterparty(lookup.callback!, { method: 'POST', body: request.toJsonString() }, deps.network);
    } catch (error) {
      if (error instanceof CounterpartyBusyError) throw notSentYet(q, error);
      if (error instanceof CounterpartyError) return { plan: failedPlan('COUNTERPARTY_DELIVERY_FAILED') };
      throw error;
    }
    if (answer.status !== 200) return { plan: refused(answer) };
    try {
      return await acceptResponse(platform, q, lookup, answer);
    } catch (error) {
      if (error instanceof UmaAuthError) return { plan: failedPlan('COUNTERPARTY_DELIVERY_FAILED') };
      throw error;
    }
  }

  /** The UMA destination handler's `deliver` (idempotent per quote: each step is stored). */
  async function deliver(platform: Platform, q: QuoteRecord): Promise<RailPlan | null> {
    if (q.delivery.kind !== 'UMA') throw new Error('UMA payer called for another delivery');
    const lookup = await repo.findUmaLookup(database.db, platform.id, q.delivery.lookupId);
    if (!lookup || (!lookup.sandboxOutcome && (!lookup.callback || !lookup.senderIdentifier))) {
      return failedPlan('COUNTERPARTY_DELIVERY_FAILED');
    }
    if (lookup.sandboxOutcome) return sandboxPlan(lookup.sandboxOutcome);
    let payment = await repo.findPayment(database.db, platform.id, q.id);
    if (!payment) {
      const outcome = await requestInvoice(platform, q, lookup);
      if ('plan' in outcome) return outcome.plan;
      payment = outcome.payment;
    }
    return deps.settlement.pay(platform, q, payment);
  }

  return { deliver };
}

export type UmaPayer = ReturnType<typeof createUmaPayer>;
