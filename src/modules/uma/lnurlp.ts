import {
  Currency,
  ErrorCode,
  getLnurlpResponse,
  getPayReqResponse,
  getSignableLnurlpRequestPayload,
  isLnurlpRequestForUma,
  parseLnurlpRequest,
  PayRequest,
  UmaError,
  UnsupportedVersionError,
  type ErrorDetails,
  type LnurlpRequest,
  type PayeeData,
} from '@uma-sdk/core';
import { currency } from '../../core/currencies.js';
import { newId } from '../../core/ids.js';
import type { Customer } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import { domainOf } from './address.js';
import { UmaAuthError, type Authenticator, type SignedMessage } from './authentication.js';
import { baseUrlOf } from './counterparty.js';
import { createInvoice, type NewInvoice } from './invoice.js';
import type { UmaKeys } from './keys.js';
import { fromUmaData, missingMandatory, payerDataOptions, toUmaData } from './payer-data.js';
import type { ProviderBook } from './providers.js';
import { addressOf, creditedAccount, kycStatusOf, ProtocolError, receivingPlan, requireReceiver, type Receivable, type ReceiverDeps } from './receiver.js';
import { SANDBOX_MARK } from './remote-lookup.js';
import * as repo from './repository.js';

/** How long the receiver honours an invoice it issued (wall-clock time). */
export const INVOICE_LIFETIME_MS = 10 * 60_000;

export interface LnurlpDeps extends ReceiverDeps {
  keys: UmaKeys;
  auth: Authenticator;
  providers: ProviderBook;
  platformFor: (host: string | undefined) => Promise<Platform>;
}

export function fail(error: ErrorDetails, message: string, extra: Record<string, unknown> = {}): ProtocolError {
  return new ProtocolError(error.httpStatusCode, error.code, message, extra);
}

/**
 * A signature check that failed, as the UMA error the other VASP gets. Anyone can call these
 * endpoints, so why a domain's keys could not be fetched (how it resolved, whether it answered)
 * is not told: it would map the operator's network for strangers.
 */
export async function verifyOrRefuse(auth: Authenticator, message: SignedMessage): Promise<void> {
  try {
    await auth.verifyMessage(message, 'unsolicited');
  } catch (error) {
    if (error instanceof UmaAuthError && error.code === 'COUNTERPARTY_PUBKEY_FETCH_ERROR') {
      throw fail(ErrorCode.COUNTERPARTY_PUBKEY_FETCH_ERROR, `the public keys of ${message.domain} could not be fetched`);
    }
    if (error instanceof UmaAuthError) throw fail(ErrorCode[error.code], error.message);
    throw error;
  }
}

function displayName(customer: Customer): string {
  return customer.fullName ?? customer.businessInfo?.legalName ?? customer.umaAddress;
}

function metadataOf(customer: Customer, address: string): string {
  return JSON.stringify([
    ['text/plain', `Pay ${displayName(customer)}`],
    ['text/identifier', address],
  ]);
}

function currencyOption(c: Receivable): Currency {
  const known = currency(c.config.currencyCode);
  return new Currency(known.code, known.name, known.symbol, c.multiplier, Math.max(1, c.config.minAmount), c.maxAmount, c.decimals);
}

/** Sats bounds of the lnurlp response, from the receiver's first (preferred) currency. */
function sendableSats(first: Receivable): { min: number; max: number } {
  const min = Math.max(1, Math.ceil((Math.max(1, first.config.minAmount) * first.multiplier) / 1000));
  const max = Math.min(Number.MAX_SAFE_INTEGER, Math.max(min, Math.floor((first.maxAmount * first.multiplier) / 1000)));
  return { min, max };
}

/** Data about the receiver the sender asked for and Corridor knows (the identifier always). */
function payeeDataFor(requested: Record<string, { mandatory: boolean }> | undefined, customer: Customer, identifier: string): PayeeData {
  const known = toUmaData({ FULL_NAME: displayName(customer), EMAIL: customer.email, BIRTH_DATE: customer.birthDate, NATIONALITY: customer.nationality });
  const data: PayeeData = { identifier };
  for (const key of Object.keys(requested ?? {})) if (key in known) data[key] = known[key];
  return data;
}

/**
 * The receiving side of UMA's first two steps (UMAD-03..06): the lnurlp response (who the receiver
 * is, what it accepts, what it needs to know) and the pay request, which creates an invoice.
 */
export function createLnurlpHandlers(deps: LnurlpDeps) {
  function parseRequest(url: URL): LnurlpRequest {
    try {
      return parseLnurlpRequest(url);
    } catch (error) {
      if (error instanceof UnsupportedVersionError) throw fail(ErrorCode.UNSUPPORTED_UMA_VERSION, error.message, error.getAdditionalParams());
      if (error instanceof UmaError) throw new ProtocolError(400, error.code, error.message);
      throw fail(ErrorCode.PARSE_LNURLP_REQUEST_ERROR, 'the lnurlp request cannot be read');
    }
  }

  /** GET /.well-known/lnurlp/{user}: a signed lnurlp response for one of the platform's customers. */
  async function lnurlp(host: string | undefined, user: string, search: string): Promise<unknown> {
    const platform = await deps.platformFor(host);
    const domain = platform.umaDomain.toLowerCase();
    const request = parseRequest(new URL(`${baseUrlOf(domain)}/.well-known/lnurlp/${user}${search}`));
    if (!isLnurlpRequestForUma(request)) throw fail(ErrorCode.NON_UMA_LNURL_NOT_SUPPORTED, 'only UMA lnurlp requests are answered here');
    // Authenticated first, so that whether an address exists is told to known VASPs only.
    const message = { domain: request.vaspDomain.toLowerCase(), payload: getSignableLnurlpRequestPayload(request), signature: request.signature, nonce: request.nonce };
    await verifyOrRefuse(deps.auth, { ...message, timestampSec: Math.floor(request.timestamp.getTime() / 1000) });
    const customer = await requireReceiver(deps, platform, addressOf(user, domain));
    const plan = await receivingPlan(deps, platform, customer);
    if (plan.currencies.length === 0) throw fail(ErrorCode.USER_NOT_READY, `${request.receiverAddress} cannot receive any currency now`);
    const key = await deps.keys.get(platform);
    const sats = sendableSats(plan.currencies[0]);
    const response = await getLnurlpResponse({
      request,
      privateKeyBytes: key.privateKeyBytes,
      requiresTravelRuleInfo: platform.isRegulatedFinancialInstitution,
      callback: `${baseUrlOf(domain)}/uma/payreq/${encodeURIComponent(user)}`,
      encodedMetadata: metadataOf(customer, request.receiverAddress),
      minSendableSats: sats.min,
      maxSendableSats: sats.max,
      payerDataOptions: payerDataOptions(plan.requiredPayerData),
      currencyOptions: plan.currencies.map(currencyOption),
      receiverKycStatus: kycStatusOf(customer),
    });
    return { ...response.toJsonSchemaObject(), ...(platform.mode === 'SANDBOX' && { [SANDBOX_MARK]: true }) };
  }

  function parsePayRequest(body: unknown): PayRequest & { payerData: NonNullable<PayRequest['payerData']>; receivingCurrencyCode: string } {
    let request: PayRequest;
    try {
      request = PayRequest.parse(body);
    } catch {
      throw fail(ErrorCode.PARSE_PAYREQ_REQUEST_ERROR, 'the pay request cannot be read');
    }
    if (!request.isUma()) throw fail(ErrorCode.MISSING_REQUIRED_UMA_PARAMETERS, 'the pay request lacks UMA compliance data or a currency');
    return request;
  }

  /** The receiving currency and the amount credited, checked against what the receiver accepts. */
  function amountFor(request: PayRequest & { receivingCurrencyCode: string }, accepted: Receivable[]): { receivable: Receivable; amount: number } {
    const receivable = accepted.find((c) => c.config.currencyCode === request.receivingCurrencyCode);
    if (!receivable) throw fail(ErrorCode.INVALID_CURRENCY, `${request.receivingCurrencyCode} is not a currency this receiver accepts`);
    if (request.sendingAmountCurrencyCode && request.sendingAmountCurrencyCode !== request.receivingCurrencyCode) {
      throw fail(ErrorCode.INVALID_CURRENCY, 'the amount must be in millisatoshis or in the receiving currency');
    }
    const amount = request.sendingAmountCurrencyCode ? request.amount : Math.round(request.amount / receivable.multiplier);
    const { minAmount } = receivable.config;
    const { maxAmount } = receivable;
    if (!Number.isSafeInteger(amount) || amount < Math.max(1, minAmount) || amount > maxAmount) {
      throw fail(ErrorCode.AMOUNT_OUT_OF_RANGE, `the amount must be between ${Math.max(1, minAmount)} and ${maxAmount} ${receivable.config.currencyCode}`);
    }
    return { receivable, amount };
  }

  /** POST /uma/payreq/{user}: checks the signed pay request and issues an invoice for it. */
  async function payreq(host: string | undefined, user: string, body: unknown): Promise<unknown> {
    const platform = await deps.platformFor(host);
    const domain = platform.umaDomain.toLowerCase();
    const request = parsePayRequest(body);
    const payer = String(request.payerData.identifier ?? '');
    const senderDomain = domainOf(payer);
    if (!senderDomain) throw fail(ErrorCode.MISSING_REQUIRED_UMA_PARAMETERS, 'payerData.identifier must be the sender\'s UMA address');
    const compliance = request.payerData.compliance!;
    await verifyOrRefuse(deps.auth, {
      domain: senderDomain,
      payload: request.signablePayload(),
      signature: compliance.signature,
      nonce: compliance.signatureNonce,
      timestampSec: compliance.signatureTimestamp,
    });
    const customer = await requireReceiver(deps, platform, addressOf(user, domain));
    const plan = await receivingPlan(deps, platform, customer);
    const { receivable, amount } = amountFor(request, plan.currencies);
    // The lnurlp response can ask for one set of fields only (the union); the invoice needs those of its currency.
    const missing = missingMandatory(receivable.config.requiredCounterpartyFields, request.payerData);
    if (missing.length > 0) throw fail(ErrorCode.MISSING_MANDATORY_PAYER_DATA, `the receiver requires ${missing.join(', ')} about the sender`, { missingFields: missing });
    const account = await creditedAccount(deps, platform, customer, receivable.config.currencyCode);
    const key = await deps.keys.get(platform);
    const identifier = user.startsWith('$') ? `${user}@${domain}` : `$${user}@${domain}`;
    const nowMs = deps.clock.realNowMs();
    let issued: NewInvoice | undefined;
    const response = await getPayReqResponse({
      request,
      conversionRate: receivable.multiplier,
      receivingCurrencyCode: receivable.config.currencyCode,
      receivingCurrencyDecimals: receivable.decimals,
      invoiceCreator: { createUmaInvoice: async (msats: number) => (issued = createInvoice(msats, nowMs)).invoice },
      metadata: metadataOf(customer, identifier),
      receiverChannelUtxos: [],
      receiverFeesMillisats: 0,
      receivingVaspPrivateKey: key.privateKeyBytes,
      payeeIdentifier: identifier,
      payeeData: payeeDataFor(request.requestedPayeeData, customer, identifier),
      disposable: false,
    });
    await repo.insertInvoice(deps.database.db, {
      paymentHash: issued!.paymentHash,
      platformId: platform.id,
      invoice: issued!.invoice,
      customerId: customer.id,
      accountId: account.id,
      depositAccountId: plan.deposit?.id ?? null,
      senderIdentifier: payer,
      senderDomain,
      receiverIdentifier: identifier,
      currency: receivable.config.currencyCode,
      amount,
      amountMsats: issued!.amountMsats,
      preimage: issued!.preimage,
      counterpartyInformation: fromUmaData(request.payerData),
      status: 'OPEN',
      transactionId: newId('Transaction'),
      forwardTransactionId: null,
      expiresAt: new Date(nowMs + INVOICE_LIFETIME_MS),
      createdAt: new Date(nowMs),
    });
    await deps.providers.seen(platform, senderDomain, [receivable.config.currencyCode]);
    return { ...response.toJsonSchemaObject(), ...(platform.mode === 'SANDBOX' && { [SANDBOX_MARK]: true }) };
  }

  return { lnurlp, payreq };
}
