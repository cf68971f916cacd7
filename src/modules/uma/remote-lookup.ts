import { getMajorVersion, getSignedLnurlpRequestUrl, LnurlpResponse } from '@uma-sdk/core';
import { ServiceError, type ErrorCode } from '../../core/errors.js';
import type { Platform } from '../platform/service.js';
import type { RequiredPayerField } from '../quotes/schemas.js';
import type { UmaAddress } from './address.js';
import { UmaAuthError, type Authenticator } from './authentication.js';
import { baseUrlOf, callCounterparty, CounterpartyError, isLoopbackDomain, type HttpAnswer, type NetworkPolicy } from './counterparty.js';
import type { UmaKeys } from './keys.js';
import { requiredFieldsFrom } from './payer-data.js';
import type { ReceiverCurrency } from './repository.js';

/**
 * A Corridor extension of the lnurlp response: true when the receiving platform is a sandbox.
 * Sandbox money is made up, so a sandbox platform pays only receivers that say they are sandboxes
 * too, and a production platform only receivers that do not: a sandbox token could otherwise
 * credit a production platform's customers (on this instance or another) with nothing behind it.
 */
export const SANDBOX_MARK = 'corridorSandbox';

function checkSameMode(platform: Platform, receiver: UmaAddress, answer: HttpAnswer): void {
  const receiverIsSandbox = (answer.json as Record<string, unknown>)[SANDBOX_MARK] === true;
  if (receiverIsSandbox === (platform.mode === 'SANDBOX')) return;
  const why = receiverIsSandbox ? 'is a sandbox, and a production platform pays only production receivers' : 'is not a sandbox, and a sandbox platform pays only sandbox receivers';
  throw counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} ${why}`, { reason: 'SANDBOX_MISMATCH' });
}

/** What an lnurlp exchange with a receiving VASP established. */
export interface RemoteReceiver {
  callback: string;
  umaVersion: string;
  currencies: ReceiverCurrency[];
  requiredPayerDataFields: RequiredPayerField[];
}

function counterpartyFailure(code: ErrorCode, message: string, details: Record<string, unknown> = {}): ServiceError {
  return new ServiceError(code, message, { details });
}

/** The receiver answered something other than a usable lnurlp response. */
function refusal(receiver: UmaAddress, answer: HttpAnswer): ServiceError {
  const body = (answer.json ?? {}) as { code?: unknown; reason?: unknown; supportedMajorVersions?: unknown };
  const said = { counterpartyStatus: answer.status, ...(typeof body.code === 'string' && { counterpartyCode: body.code }), ...(typeof body.reason === 'string' && { counterpartyReason: body.reason.slice(0, 300) }) };
  if (answer.status === 404) return new ServiceError('USER_NOT_FOUND', `${receiver.domain} has no UMA address ${receiver.address}`, { details: said });
  if (answer.status === 412) {
    const versions = Array.isArray(body.supportedMajorVersions) ? { supportedMajorVersions: body.supportedMajorVersions } : {};
    return counterpartyFailure('UNSUPPORTED_UMA_VERSION', `${receiver.domain} does not support UMA 1.0`, { ...said, ...versions });
  }
  return counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} refused the lnurlp request (HTTP ${answer.status})`, said);
}

/** The callback must be an absolute https URL (plain http only on loopback hosts). */
function checkCallback(callback: string, receiver: UmaAddress): string {
  let url: URL;
  try {
    url = new URL(callback);
  } catch {
    throw counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} gave an invalid callback URL`);
  }
  const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackDomain(url.host));
  if (!allowed || url.username || url.password) throw counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} gave a callback URL Corridor will not call`);
  return url.toString();
}

function parseResponse(receiver: UmaAddress, answer: HttpAnswer): LnurlpResponse {
  let response: LnurlpResponse;
  try {
    response = LnurlpResponse.parse(answer.json);
  } catch {
    throw counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} sent an lnurlp response that is not valid`);
  }
  if (!response.isUma()) throw counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} answered with a plain LNURL response, not UMA`);
  if (getMajorVersion(response.umaVersion) !== 1) {
    throw counterpartyFailure('NO_COMPATIBLE_UMA_VERSION', `${receiver.domain} chose UMA ${response.umaVersion}; Corridor speaks UMA 1.x`);
  }
  if (response.compliance.receiverIdentifier.toLowerCase() !== receiver.address.toLowerCase()) {
    throw counterpartyFailure('LNURLP_REQUEST_FAILED', `${receiver.domain} answered for ${response.compliance.receiverIdentifier}, not ${receiver.address}`);
  }
  return response;
}

async function checkSignature(auth: Authenticator, receiver: UmaAddress, response: LnurlpResponse & { compliance: NonNullable<LnurlpResponse['compliance']> }) {
  try {
    await auth.verifyMessage({
      domain: receiver.domain,
      payload: response.signablePayload(),
      signature: response.compliance.signature,
      nonce: response.compliance.signatureNonce,
      timestampSec: response.compliance.signatureTimestamp,
    });
  } catch (error) {
    if (!(error instanceof UmaAuthError)) throw error;
    const code = error.code === 'COUNTERPARTY_PUBKEY_FETCH_ERROR' ? 'COUNTERPARTY_PUBKEY_FETCH_ERROR' : 'LNURLP_REQUEST_FAILED';
    throw counterpartyFailure(code, `the lnurlp response of ${receiver.domain} is not authentic: ${error.message}`, { reason: error.code });
  }
}

/**
 * The sending side of an UMA lookup (UMAD-03/04): a signed lnurlp request to the receiver's domain,
 * and its signed response checked against the receiver's published key.
 */
export async function lookUpRemote(
  deps: { keys: UmaKeys; auth: Authenticator; network: NetworkPolicy },
  platform: Platform,
  receiver: UmaAddress,
): Promise<RemoteReceiver> {
  const key = await deps.keys.get(platform);
  const signed = await getSignedLnurlpRequestUrl({
    isSubjectToTravelRule: platform.isRegulatedFinancialInstitution,
    receiverAddress: receiver.address,
    senderVaspDomain: platform.umaDomain.toLowerCase(),
    signingPrivateKey: key.privateKeyBytes,
  });
  let answer: HttpAnswer;
  try {
    answer = await callCounterparty(`${baseUrlOf(receiver.domain)}${signed.pathname}${signed.search}`, { method: 'GET' }, deps.network);
  } catch (error) {
    if (error instanceof CounterpartyError) throw counterpartyFailure('LNURLP_REQUEST_FAILED', `lnurlp request to ${receiver.domain} failed: ${error.message}`);
    throw error;
  }
  if (answer.status !== 200) throw refusal(receiver, answer);
  const response = parseResponse(receiver, answer);
  await checkSignature(deps.auth, receiver, response as LnurlpResponse & { compliance: NonNullable<LnurlpResponse['compliance']> });
  checkSameMode(platform, receiver, answer);
  return {
    callback: checkCallback(response.callback, receiver),
    umaVersion: response.umaVersion!,
    currencies: (response.currencies ?? []).map((c) => ({ code: c.code, multiplier: c.multiplier, decimals: c.decimals, min: c.minSendable, max: c.maxSendable })),
    requiredPayerDataFields: requiredFieldsFrom(response.payerData),
  };
}
