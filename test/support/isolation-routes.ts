// How test/isolation.test.ts fills each operation of the OpenAPI document for platform B (and A):
// which of A's ids go in which path and query parameter, the bodies, headers and queries of
// operations with path parameters, what B may see by design, and the writes naming other objects.
// Classify new routes here; the first test of test/isolation.test.ts lists what is missing.
import { agentPolicy } from './agents.js';
import type { ApiResponse } from './app.js';
import { clientPublicKey, cryptoFeeBody, documentForm, extAccountBody, IDEMPOTENCY_KEY, quoteBody, realtimeQuoteBody, SANDBOX_RECEIVER, umaQuoteBody, umaReceiveBody, type RequestSpec, type WorldA, type WorldB } from './isolation-world.js';
import { beneficialOwnerBody } from './verification.js';

// ---------------------------------------------------------------------------------------------
// Tables: how to fill each parameter. A parameter without an entry fails the test.

/** Path parameter → A's ids that can stand in it (every one is tried). */
export function pathIds(a: WorldA): Record<string, string[]> {
  return {
    tokenId: [a.token],
    customerId: [a.customer, a.business, a.deleted],
    quoteId: [a.pendingQuote, a.walletQuote, a.realtimeQuote, a.executedQuote],
    // /receiver/external-account/{accountId} takes an external account, /sandbox/internal-accounts/{accountId}/fund an internal one.
    accountId: [a.usd, a.ext],
    // /auth/credentials/{id}, /auth/sessions/{id}, /internal-accounts/{id}/export.
    id: [a.credential, a.session, a.walletAccount],
    transactionId: [a.txPending, a.txTransfer, a.txQuote],
    receiverUmaAddress: [a.customerUma],
    invitationCode: [a.invitation],
    verificationId: [a.verification],
    beneficialOwnerId: [a.owner],
    agentId: [a.agent],
    actionId: [a.action],
    // /agents/device-codes/{code}/status (the redeem route takes no platform credentials).
    code: [a.agentCode],
    externalAccountId: [a.ext, a.platformExt],
    documentId: [a.document],
    jobId: [a.bulkJob],
  };
}

/** B's own id for a path parameter, used to pair A's id with B's in paths with several parameters. */
export function ownPathIds(b: WorldB): Record<string, string> {
  return { agentId: b.agent, customerId: b.customer, accountId: b.usd, externalAccountId: b.ext };
}

/** Query parameter → A's values to filter by (as B), each a reference to something of A's. */
export function queryValues(a: WorldA): Record<string, string[]> {
  return {
    customerId: [a.customer, a.business, a.deleted, a.walletCustomer, a.platformId],
    platformCustomerId: [a.customerPcid, a.platformId],
    umaAddress: [a.customerUma],
    accountIdentifier: [a.usd, a.ext],
    senderAccountIdentifier: [a.usd],
    receiverAccountIdentifier: [a.ext, a.eur],
    reference: [a.txReference],
    agentId: [a.agent],
    documentHolder: [a.customer, a.owner],
    accountId: [a.walletAccount],
    name: [a.tokenName],
    senderUmaAddress: [a.customerUma],
  };
}

/** B's own value for a query parameter, for required parameters that are not under test. */
export function ownQueryValues(b: WorldB): Record<string, string> {
  return { customerId: b.customer, platformCustomerId: b.customerPcid, accountId: b.usd };
}

/** Query parameters that name no object (paging, dates, enums, currencies). */
export const NOT_IDENTIFYING = new Set([
  'limit', 'createdAfter', 'createdBefore', 'updatedAfter', 'updatedBefore', 'startDate', 'endDate', 'sortOrder',
  'customerType', 'region', 'currency', 'type', 'status', 'isIncludingDeleted', 'isPaused', 'isConnected',
  'verificationStatus', 'countryCode', 'currencyCode', 'hasBlockedProviders', 'country', 'sourceCurrency',
  'destinationCurrency', 'sendingAmount', 'redirectUri',
]);

/** Request bodies for operations with path parameters (key: `METHOD /path`); others send `{}`. */
export const PATH_OP_BODIES: Record<string, (a: WorldA) => unknown> = {
  'PATCH /customers/{customerId}': () => ({ customerType: 'INDIVIDUAL', fullName: 'Mallory Changed' }),
  'POST /auth/credentials/{id}/verify': () => ({ type: 'EMAIL_OTP', otp: '000000', clientPublicKey }), // the sandbox's accepted code
  'POST /internal-accounts/{id}/export': () => ({ clientPublicKey }),
  'POST /transactions/{transactionId}/reject': () => ({ reason: 'probe' }),
  'POST /sandbox/internal-accounts/{accountId}/fund': () => ({ amount: 777 }),
  // B names A's customer: a claim is for one of the claiming platform's own customers.
  'POST /invitations/{invitationCode}/claim': (a) => ({ inviteeUma: a.customerUma }),
  'PATCH /beneficial-owners/{beneficialOwnerId}': () => ({ ownershipPercentage: 1 }),
  'PATCH /agents/{agentId}': () => ({ name: 'Mallory', isPaused: true }),
  'PATCH /agents/{agentId}/policy': () => ({ defaultExecutionMode: 'AUTO' }),
  'POST /agents/{agentId}/actions/{actionId}/reject': () => ({ reason: 'probe' }),
  'PUT /documents/{documentId}': () => ({ multipart: { documentType: 'DRIVERS_LICENSE', country: 'US' } }),
};

/** What sandbox platforms accept as an embedded wallet's signature (docs/embedded-wallets.md#sandbox). */
const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

/**
 * Headers for operations with path parameters: the sandbox's accepted wallet signature, with the
 * Request-Id of A's own signed-retry challenge where there is one (so that only the platform
 * boundary stands between B and the operation).
 */
export const PATH_OP_HEADERS: Record<string, (a: WorldA) => Record<string, string>> = {
  'POST /quotes/{quoteId}/execute': () => ({ 'service-wallet-signature': SANDBOX_SIGNATURE }),
  'POST /internal-accounts/{id}/export': (a) => ({ 'service-wallet-signature': SANDBOX_SIGNATURE, 'request-id': a.exportRequestId }),
  'DELETE /auth/sessions/{id}': (a) => ({ 'service-wallet-signature': SANDBOX_SIGNATURE, 'request-id': a.revokeRequestId }),
};

/** Query strings for operations with path parameters, as each side would send them. */
export const PATH_OP_QUERIES: Record<string, (own: { customer: string }) => Record<string, string>> = {
  'GET /receiver/external-account/{accountId}': (own) => ({ customerId: own.customer }),
  'GET /receiver/uma/{receiverUmaAddress}': (own) => ({ customerId: own.customer }),
};

/**
 * Operations that answer another platform by design, with the reason and the values of A's the
 * answer may show. Their answers to B are still checked for every other secret.
 */
export const BY_DESIGN: Record<string, { why: string; mayShow: (a: WorldA) => string[] }> = {
  'GET /invitations/{invitationCode}': {
    why: 'docs/api/invitations.md: the code is the capability; any platform of the instance may read the invitation',
    mayShow: (a) => [a.invitation, a.customerUma],
  },
  'GET /receiver/uma/{receiverUmaAddress}': {
    why: 'docs/uma.md: a UMA address is a public receiving address; any provider may look it up over UMA',
    mayShow: (a) => [a.customerUma],
  },
};

/**
 * Refusals other than 404 *_NOT_FOUND and 403 that are legitimate for B's path probes (say, a 400
 * for a check made before the lookup), by operation key and status, with the reason. None so far.
 */
export const OTHER_REFUSALS: Record<string, { status: number; why: string }> = {};

/** Non-platform-authenticated operations (see the header); any other such operation fails the test. */
export const NOT_PLATFORM_AUTH = new Set([
  'POST /agents/device-codes/{code}/redeem',
  'GET /agents/me',
  'GET /agents/me/transactions',
  'GET /agents/me/transactions/{transactionId}',
  'GET /agents/me/internal-accounts',
  'GET /agents/me/actions',
  'GET /agents/me/actions/{actionId}',
  'POST /agents/me/quotes',
  'GET /agents/me/quotes/{quoteId}',
  'POST /agents/me/quotes/{quoteId}/execute',
  'POST /agents/me/transfer-out',
  'POST /agents/me/transfer-in',
  'GET /agents/me/external-accounts',
  'POST /agents/me/external-accounts',
  'GET /agents/me/external-accounts/{externalAccountId}',
  'DELETE /agents/me/external-accounts/{externalAccountId}',
]);

export interface Probe {
  /** What B sends, naming A's objects. */
  b: (a: WorldA, b: WorldB) => RequestSpec;
  /** The same request as A would legitimately send it. */
  a: (a: WorldA, b: WorldB) => RequestSpec;
  /** B's expected statuses when it is not a 4xx refusal (an existence oracle must not show). */
  expect?: number[];
  /** Removes what B created, so that later probes do not meet B's own copy of A's values. */
  undo?: (created: any, b: WorldB) => Promise<ApiResponse>;
}

/**
 * Operations without path parameters whose body (or query) names other objects: B sends A's
 * ids there. Every write without path parameters must be here or in NO_REFERENCES.
 */
export const REFERENCE_PROBES: Record<string, Probe[]> = {
  'POST /customers': [
    // "Other platforms' customers never conflict with yours" (docs/api/customers.md): a 409 would tell B that A has them.
    {
      b: (a) => ({ body: { customerType: 'INDIVIDUAL', platformCustomerId: a.customerPcid, fullName: 'Bea Copy' } }),
      a: () => ({ body: { customerType: 'INDIVIDUAL', platformCustomerId: `iso-a-fresh-${Date.now()}`, fullName: 'Fresh One' } }),
      expect: [201],
      undo: (created, b) => b.tp.api.delete(`/customers/${created.id}`),
    },
    // Same for the UMA address (B may get 400 if addresses on another platform's domain were refused, never 409).
    {
      b: (a) => ({ body: { customerType: 'INDIVIDUAL', umaAddress: a.customerUma, fullName: 'Bea Copy' } }),
      a: () => ({ body: { customerType: 'INDIVIDUAL', fullName: 'Fresh Two' } }),
      expect: [201, 400],
      undo: (created, b) => b.tp.api.delete(`/customers/${created.id}`),
    },
  ],
  // Query parameters of operations with path parameters (the path holds B's own or public values).
  'GET /receiver/external-account/{accountId}': [
    { b: (a, b) => ({ path: `/receiver/external-account/${b.ext}`, query: { customerId: a.customer } }), a: (a) => ({ path: `/receiver/external-account/${a.ext}`, query: { customerId: a.customer } }) },
  ],
  'GET /receiver/uma/{receiverUmaAddress}': [
    { b: (a) => ({ path: `/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`, query: { customerId: a.customer } }), a: (a) => ({ path: `/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`, query: { customerId: a.customer } }) },
    // B may not sign a UMA request as A's customer (a real counterparty: B's own customer, over UMA).
    { b: (a, b) => ({ path: `/receiver/uma/${encodeURIComponent(b.customerUma)}`, query: { senderUmaAddress: a.customerUma } }), a: (a, b) => ({ path: `/receiver/uma/${encodeURIComponent(b.customerUma)}`, query: { senderUmaAddress: a.customerUma } }) },
  ],
  'POST /customers/external-accounts': [
    { b: (a) => ({ body: extAccountBody(a.customer) }), a: (a) => ({ body: extAccountBody(a.customer) }) },
  ],
  'POST /crypto/estimate-withdrawal-fee': [
    { b: (a) => ({ body: cryptoFeeBody(a.walletAccount) }), a: (a) => ({ body: cryptoFeeBody(a.walletAccount) }) },
  ],
  'POST /quotes': [
    { b: (a, b) => ({ body: quoteBody(a.usd, b.ext) }), a: (a) => ({ body: quoteBody(a.usd, a.ext) }) },
    { b: (a, b) => ({ body: quoteBody(b.usd, a.ext) }), a: (a) => ({ body: quoteBody(a.usd, a.ext) }) },
    { b: (a, b) => ({ body: quoteBody(b.usd, a.eur) }), a: (a) => ({ body: quoteBody(a.usd, a.eur) }) },
    { b: (a, b) => ({ body: { ...quoteBody(b.usd, b.ext), source: { sourceType: 'ACCOUNT', accountId: b.usd, customerId: a.customer } } }), a: (a) => ({ body: { ...quoteBody(a.usd, a.ext), source: { sourceType: 'ACCOUNT', accountId: a.usd, customerId: a.customer } } }) },
    { b: (a, b) => ({ body: realtimeQuoteBody(a.customer, b.ext) }), a: (a) => ({ body: realtimeQuoteBody(a.customer, a.ext) }) },
    { b: (a, b) => ({ body: umaQuoteBody(b.usd, a.umaLookup) }), a: (a) => ({ body: umaQuoteBody(a.usd, a.umaLookup) }) },
    { b: (a, b) => ({ body: { ...quoteBody(b.usd, a.ext), lookupId: a.extLookup } }), a: (a) => ({ body: { ...quoteBody(a.usd, a.ext), lookupId: a.extLookup } }) },
  ],
  'POST /sandbox/send': [
    { b: (a) => ({ body: { quoteId: a.realtimeQuote, currencyCode: 'USD' } }), a: (a) => ({ body: { quoteId: a.realtimeQuote, currencyCode: 'USD' } }) },
  ],
  'POST /auth/credentials': [
    { b: (a) => ({ body: { type: 'EMAIL_OTP', accountId: a.walletAccount, email: 'mallory@example.com' } }), a: (a) => ({ body: { type: 'EMAIL_OTP', accountId: a.walletAccount, email: 'second@example.com' } }) },
  ],
  'POST /transfer-in': [
    { b: (a, b) => ({ body: { source: { accountId: a.ext }, destination: { accountId: b.usd }, amount: 100 } }), a: (a) => ({ body: { source: { accountId: a.ext }, destination: { accountId: a.usd }, amount: 100 } }) },
    { b: (a, b) => ({ body: { source: { accountId: b.ext }, destination: { accountId: a.usd }, amount: 100 } }), a: (a) => ({ body: { source: { accountId: a.ext }, destination: { accountId: a.usd }, amount: 100 } }) },
  ],
  'POST /transfer-out': [
    // A's exact request, key included: a replay of A's 201 would hand B A's transaction.
    {
      b: (a) => ({ body: { source: { accountId: a.usd }, destination: { accountId: a.ext }, amount: 1_000 }, headers: { 'idempotency-key': IDEMPOTENCY_KEY } }),
      a: (a) => ({ body: { source: { accountId: a.usd }, destination: { accountId: a.ext }, amount: 1_000 }, headers: { 'idempotency-key': IDEMPOTENCY_KEY } }),
    },
    // B's own request with A's key: a 422 IDEMPOTENCY_KEY_MISMATCH would tell B that A used the key.
    {
      b: (_a, b) => ({ body: { source: { accountId: b.usd }, destination: { accountId: b.ext }, amount: 100 }, headers: { 'idempotency-key': IDEMPOTENCY_KEY } }),
      a: (a) => ({ body: { source: { accountId: a.usd }, destination: { accountId: a.ext }, amount: 100 }, headers: { 'idempotency-key': IDEMPOTENCY_KEY } }),
      expect: [201],
    },
    { b: (a, b) => ({ body: { source: { accountId: a.usd }, destination: { accountId: b.ext }, amount: 100 } }), a: (a) => ({ body: { source: { accountId: a.usd }, destination: { accountId: a.ext }, amount: 100 } }) },
    { b: (a, b) => ({ body: { source: { accountId: b.usd }, destination: { accountId: a.ext }, amount: 100 } }), a: (a) => ({ body: { source: { accountId: a.usd }, destination: { accountId: a.ext }, amount: 100 } }) },
  ],
  'POST /sandbox/uma/receive': [
    { b: (a) => ({ body: umaReceiveBody({ customerId: a.customer }) }), a: (a) => ({ body: umaReceiveBody({ customerId: a.customer }) }) },
    { b: (a) => ({ body: umaReceiveBody({ receiverUmaAddress: a.customerUma }) }), a: (a) => ({ body: umaReceiveBody({ receiverUmaAddress: a.customerUma }) }) },
  ],
  'POST /invitations': [
    { b: (a) => ({ body: { inviterUma: a.customerUma, firstName: 'Mal' } }), a: (a) => ({ body: { inviterUma: a.customerUma, firstName: 'Ada' } }) },
  ],
  'POST /verifications': [
    { b: (a) => ({ body: { customerId: a.customer } }), a: (a) => ({ body: { customerId: a.customer } }) },
  ],
  'POST /beneficial-owners': [
    { b: (a) => ({ body: beneficialOwnerBody(a.business, 'Probe', 10) }), a: (a) => ({ body: beneficialOwnerBody(a.business, 'Second', 10) }) },
  ],
  'POST /agents': [
    { b: (a) => ({ body: { name: 'Mallory agent', customerId: a.customer, policy: agentPolicy() } }), a: (a) => ({ body: { name: 'Second agent', customerId: a.customer, policy: agentPolicy() } }) },
  ],
  'POST /documents': [
    { b: (a) => documentForm(a.customer), a: (a) => documentForm(a.customer) },
    { b: (a) => documentForm(a.owner), a: (a) => documentForm(a.owner) },
  ],
};

/** Writes without path parameters that name no object of the platform's, and why. */
export const NO_REFERENCES: Record<string, string> = {
  'PATCH /config': "the platform's own settings; no ids of other objects",
  'POST /sandbox/clock/advance': "moves B's own clock (A's pending quote, checked afterwards, must not expire)",
  'POST /tokens': 'a name and permissions only',
  'POST /platform/external-accounts': "B's own platform account; bank details only",
  'POST /sandbox/webhooks/test': "sends a test event to B's own endpoint",
  'POST /customers/bulk/csv': "creates B's own customers (the platformCustomerId non-conflict is checked on POST /customers)",
};
