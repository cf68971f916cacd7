// Tenant isolation across the whole HTTP API, driven by the app's own OpenAPI document.
//
// Platform A gets one object of every kind the API can reach (customers and their internal
// accounts, a deleted customer, a business with a beneficial owner, external accounts, quotes
// pending / executed / real-time funded / paid from an embedded wallet, their transactions, an
// incoming payment waiting for approval, tokens, an invitation, a document and a verification,
// an agent with a pending action, wallet credentials and sessions, signed-retry challenges, a bulk
// import job, UMA and external-account lookups). Platform B then:
//   - calls every platform-authenticated operation with a path parameter with A's real ids (GET,
//     PATCH, PUT, DELETE, and POST with a body that would pass for A; with the sandbox's accepted
//     wallet signature and A's own Request-Ids where an operation is signed);
//   - reads every list and id-taking query, bare and with each of A's values as filter (and with
//     A's page cursors);
//   - sends the very same GETs as A at the same moment (reads are coalesced: src/http/coalescing.ts);
//   - creates things naming A's objects in the body (and reuses A's Idempotency-Key).
// B must get a 4xx (404 with the resource's *_NOT_FOUND code, 403 where the API defines it) and
// never see one of A's ids. Afterwards A's objects, lists, balances and events must be unchanged,
// and A itself must get through the very same calls (a different answer than B's), so every id
// and body is real and each refusal came from the platform boundary, not from a bad request.
//
// New routes are covered automatically. A path parameter without an entry in pathIds, a query
// parameter in neither queryValues nor NOT_IDENTIFYING, a write without path parameters in neither
// REFERENCE_PROBES nor NO_REFERENCES, or a new non-platform-authenticated operation fails the
// first test until someone classifies it; a body B's probe gets refused for (so that A is too)
// fails the last one.
//
// Not probed (not authenticated as a platform, so there is no "platform B" to be):
//   - the agent API, `/agents/me/*` (OpenAPI security AgentAuth: a bearer token scoped to one
//     agent of one customer), and the device-code routes `/agents/device-codes/{code}/status` and
//     `/redeem` (no authentication; the code is the capability). Listed in NOT_PLATFORM_AUTH. The
//     embedded-wallet routes (`/auth/credentials`, `/auth/sessions`, `/internal-accounts/{id}/export`)
//     are platform-authenticated (BasicAuth) and are probed.
//   - routes outside the API and outside /openapi.json: /healthz, /metrics, /docs, /openapi.json
//     (no tenant data) and the UMA protocol endpoints for other providers (/.well-known/lnurlpubkey,
//     /.well-known/lnurlp/{user}, /uma/payreq/{user}, /uma/settle), which pick the platform by its
//     Host header and are public by design. B does reach A's lnurlp endpoint through
//     GET /receiver/uma/{A's customer's address} (the app listens for that), and B's answer is
//     checked for A's ids.
//
// By design (docs/api/invitations.md, docs/uma.md) two answers to B are 2xx: any platform may read
// an invitation by its code, and a UMA address is a public receiving address any provider may look
// up. Those are listed in BY_DESIGN; B's answers are still checked for every other secret of A's.
//
// ISOLATION_LOG=1 prints every request and answer.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '../src/http/app.js';
import { generateClientKeyPair } from '../src/wallet-client/index.js';
import { agentPolicy, connectedAgent } from './support/agents.js';
import { basicAuth, startTestApp, type ApiResponse, type TestApp, type TestPlatform } from './support/app.js';
import { fund, newCustomer, usdAccount } from './support/quotes.js';
import { ADDRESS, beneficialOwnerBody, multipart, pdfFile, uploadDocument } from './support/verification.js';
import { emailSession, newWallet } from './support/wallets.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// ---------------------------------------------------------------------------------------------
// The two worlds

/** Appears in A's names only (case-sensitive: generated UMA addresses are lower case). */
const MARK = 'ZyxAlpha';

interface WorldA {
  tp: TestPlatform;
  platformId: string;
  customer: string;
  customerPcid: string;
  customerUma: string;
  business: string;
  deleted: string;
  usd: string;
  eur: string;
  walletCustomer: string;
  walletAccount: string;
  credential: string;
  session: string;
  ext: string;
  platformExt: string;
  token: string;
  tokenClientId: string;
  tokenName: string;
  pendingQuote: string;
  executedQuote: string;
  realtimeQuote: string;
  walletQuote: string;
  /** Request-Ids of signed-retry challenges A was given (export, session revocation). */
  exportRequestId: string;
  revokeRequestId: string;
  txPending: string;
  txTransfer: string;
  txQuote: string;
  txReference: string;
  umaLookup: string;
  extLookup: string;
  invitation: string;
  verification: string;
  document: string;
  owner: string;
  agent: string;
  action: string;
  bulkJob: string;
}

interface WorldB {
  tp: TestPlatform;
  customer: string;
  customerPcid: string;
  customerUma: string;
  usd: string;
  eur: string;
  ext: string;
  agent: string;
}

let t: TestApp;
let receiver: WebhookReceiver;
let doc: any;
let A: WorldA;
let B: WorldB;
/** Strings that are A's and must never reach B: ids, client ids, codes, UMA addresses, the marker. */
let secrets: string[] = [];
/** A's view of everything, before B's probes. */
let snapshotBefore: Map<string, unknown>;
let balancesBefore: Record<string, unknown>;
let eventsOfABefore: string[];

/** The events (webhooks) a platform has, as type and data. */
async function eventsOf(platformId: string): Promise<string[]> {
  const rows = await t.corridor.database.db.selectFrom('events').select(['id', 'type', 'data']).where('platform_id', '=', platformId).orderBy('id').execute();
  return rows.map((r) => `${r.id} ${r.type} ${JSON.stringify(r.data)}`);
}

/** Every balance of A's internal accounts and of its platform accounts. */
async function balancesOfA(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const path of ['/customers/internal-accounts', '/platform/internal-accounts']) {
    const list = ok(await A.tp.api.get(path, { limit: 100 }), 200, path);
    for (const account of list.data) out[account.id] = { balance: account.balance, totalBalance: account.totalBalance };
  }
  expect(Object.keys(out)).toEqual(expect.arrayContaining([A.usd, A.eur, A.walletAccount]));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tables: how to fill each parameter. A parameter without an entry fails the test.

/** Path parameter → A's ids that can stand in it (every one is tried). */
function pathIds(a: WorldA): Record<string, string[]> {
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
    externalAccountId: [a.ext, a.platformExt],
    documentId: [a.document],
    jobId: [a.bulkJob],
  };
}

/** B's own id for a path parameter, used to pair A's id with B's in paths with several parameters. */
function ownPathIds(b: WorldB): Record<string, string> {
  return { agentId: b.agent, customerId: b.customer, accountId: b.usd, externalAccountId: b.ext };
}

/** Query parameter → A's values to filter by (as B), each a reference to something of A's. */
function queryValues(a: WorldA): Record<string, string[]> {
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
function ownQueryValues(b: WorldB): Record<string, string> {
  return { customerId: b.customer, platformCustomerId: b.customerPcid, accountId: b.usd };
}

/** Query parameters that name no object (paging, dates, enums, currencies). */
const NOT_IDENTIFYING = new Set([
  'limit', 'createdAfter', 'createdBefore', 'updatedAfter', 'updatedBefore', 'startDate', 'endDate', 'sortOrder',
  'customerType', 'region', 'currency', 'type', 'status', 'isIncludingDeleted', 'isPaused', 'isConnected',
  'verificationStatus', 'countryCode', 'currencyCode', 'hasBlockedProviders', 'country', 'sourceCurrency',
  'destinationCurrency', 'sendingAmount', 'redirectUri',
]);

const clientPublicKey = generateClientKeyPair().publicKey;

/** Request bodies for operations with path parameters (key: `METHOD /path`); others send `{}`. */
const PATH_OP_BODIES: Record<string, (a: WorldA) => unknown> = {
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

/**
 * Headers for operations with path parameters: the sandbox's accepted wallet signature, with the
 * Request-Id of A's own signed-retry challenge where there is one (so that only the platform
 * boundary stands between B and the operation).
 */
const PATH_OP_HEADERS: Record<string, (a: WorldA) => Record<string, string>> = {
  'POST /quotes/{quoteId}/execute': () => ({ 'service-wallet-signature': SANDBOX_SIGNATURE }),
  'POST /internal-accounts/{id}/export': (a) => ({ 'service-wallet-signature': SANDBOX_SIGNATURE, 'request-id': a.exportRequestId }),
  'DELETE /auth/sessions/{id}': (a) => ({ 'service-wallet-signature': SANDBOX_SIGNATURE, 'request-id': a.revokeRequestId }),
};

/** Query strings for operations with path parameters, as each side would send them. */
const PATH_OP_QUERIES: Record<string, (own: { customer: string }) => Record<string, string>> = {
  'GET /receiver/external-account/{accountId}': (own) => ({ customerId: own.customer }),
  'GET /receiver/uma/{receiverUmaAddress}': (own) => ({ customerId: own.customer }),
};

/**
 * Operations that answer another platform by design, with the reason and the values of A's the
 * answer may show. Their answers to B are still checked for every other secret.
 */
const BY_DESIGN: Record<string, { why: string; mayShow: (a: WorldA) => string[] }> = {
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
const OTHER_REFUSALS: Record<string, { status: number; why: string }> = {};

/** Non-platform-authenticated operations (see the header); any other such operation fails the test. */
const NOT_PLATFORM_AUTH = new Set([
  'GET /agents/device-codes/{code}/status',
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

interface Probe {
  /** What B sends, naming A's objects. */
  b: (a: WorldA, b: WorldB) => RequestSpec;
  /** The same request as A would legitimately send it. */
  a: (a: WorldA) => RequestSpec;
  /** B's expected statuses when it is not a 4xx refusal (an existence oracle must not show). */
  expect?: number[];
  /** Removes what B created, so that later probes do not meet B's own copy of A's values. */
  undo?: (created: any) => Promise<ApiResponse>;
}

/**
 * Operations without path parameters whose body (or query) names other objects: B sends A's
 * ids there. Every write without path parameters must be here or in NO_REFERENCES.
 */
const REFERENCE_PROBES: Record<string, Probe[]> = {
  'POST /customers': [
    // "Other platforms' customers never conflict with yours" (docs/api/customers.md): a 409 would tell B that A has them.
    {
      b: (a) => ({ body: { customerType: 'INDIVIDUAL', platformCustomerId: a.customerPcid, fullName: 'Bea Copy' } }),
      a: () => ({ body: { customerType: 'INDIVIDUAL', platformCustomerId: `iso-a-fresh-${Date.now()}`, fullName: 'Fresh One' } }),
      expect: [201],
      undo: (created) => B.tp.api.delete(`/customers/${created.id}`),
    },
    // Same for the UMA address (B may get 400 if addresses on another platform's domain were refused, never 409).
    {
      b: (a) => ({ body: { customerType: 'INDIVIDUAL', umaAddress: a.customerUma, fullName: 'Bea Copy' } }),
      a: () => ({ body: { customerType: 'INDIVIDUAL', fullName: 'Fresh Two' } }),
      expect: [201, 400],
      undo: (created) => B.tp.api.delete(`/customers/${created.id}`),
    },
  ],
  // Query parameters of operations with path parameters (the path holds B's own or public values).
  'GET /receiver/external-account/{accountId}': [
    { b: (a, b) => ({ path: `/receiver/external-account/${b.ext}`, query: { customerId: a.customer } }), a: (a) => ({ path: `/receiver/external-account/${a.ext}`, query: { customerId: a.customer } }) },
  ],
  'GET /receiver/uma/{receiverUmaAddress}': [
    { b: (a) => ({ path: `/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`, query: { customerId: a.customer } }), a: (a) => ({ path: `/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`, query: { customerId: a.customer } }) },
    // B may not sign a UMA request as A's customer (a real counterparty: B's own customer, over UMA).
    { b: (a, b) => ({ path: `/receiver/uma/${encodeURIComponent(b.customerUma)}`, query: { senderUmaAddress: a.customerUma } }), a: (a) => ({ path: `/receiver/uma/${encodeURIComponent(B.customerUma)}`, query: { senderUmaAddress: a.customerUma } }) },
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
const NO_REFERENCES: Record<string, string> = {
  'PATCH /config': "the platform's own settings; no ids of other objects",
  'POST /sandbox/clock/advance': "moves B's own clock (A's pending quote, checked afterwards, must not expire)",
  'POST /tokens': 'a name and permissions only',
  'POST /platform/external-accounts': "B's own platform account; bank details only",
  'POST /sandbox/webhooks/test': "sends a test event to B's own endpoint",
  'POST /customers/bulk/csv': "creates B's own customers (the platformCustomerId non-conflict is checked on POST /customers)",
};

// ---------------------------------------------------------------------------------------------
// Bodies

function extAccountBody(customerId: string) {
  return {
    customerId,
    currency: 'USD',
    accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: `55${Date.now() % 1_000_000}001`, routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Rita Receiver' } },
  };
}

function cryptoFeeBody(internalAccountId: string) {
  return { internalAccountId, currency: 'USDC', cryptoNetwork: 'SOLANA_MAINNET', amount: 1_000_000, destinationAddress: '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU' };
}

function quoteBody(source: string, destination: string, amount = 1_000) {
  return {
    source: { sourceType: 'ACCOUNT', accountId: source },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  };
}

function realtimeQuoteBody(customerId: string, destination: string) {
  return {
    source: { sourceType: 'REALTIME_FUNDING', customerId, currency: 'USD' },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 3_000,
  };
}

function umaQuoteBody(source: string, lookupId: string) {
  return {
    lookupId,
    source: { sourceType: 'ACCOUNT', accountId: source },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: SANDBOX_RECEIVER, currency: 'USD' },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 1_000,
  };
}

function umaReceiveBody(to: { customerId?: string; receiverUmaAddress?: string }) {
  return { senderUmaAddress: SANDBOX_RECEIVER, ...to, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 1_500 };
}

function documentForm(holder: string): RequestSpec {
  return { body: { multipart: { documentHolder: holder, documentType: 'PASSPORT', country: 'US' } } };
}

const SANDBOX_RECEIVER = '$success.usd@sandbox.uma.money';
/** What sandbox platforms accept as an embedded wallet's signature (docs/embedded-wallets.md#sandbox). */
const SANDBOX_SIGNATURE = 'sandbox-valid-signature';
/** The Idempotency-Key of A's transfer-out: B sending it must neither replay A's answer nor learn that A used it. */
const IDEMPOTENCY_KEY = 'isolation-shared-key';

// ---------------------------------------------------------------------------------------------
// Requests (sent with app.inject directly, so that an unexpected 2xx is reported, not thrown by
// the reference check of the shared client)

interface RequestSpec {
  /** For probes of operations with path parameters: the filled-in path. */
  path?: string;
  query?: Record<string, string>;
  /** JSON, or `{ multipart: fields }` for a form with a PDF file. */
  body?: unknown;
  headers?: Record<string, string>;
}

interface Sent {
  side: 'A' | 'B';
  method: string;
  path: string;
  spec: RequestSpec;
  status: number;
  body: any;
  raw: string;
  /** Everything B put in the request: A's values in it are known to B and may be echoed. */
  requestText: string;
}

async function send(tp: TestPlatform, side: 'A' | 'B', method: string, path: string, spec: RequestSpec = {}): Promise<Sent> {
  const headers: Record<string, string> = { authorization: basicAuth(tp.credentials), ...spec.headers };
  let payload: string | Buffer | undefined;
  const form = (spec.body as any)?.multipart as Record<string, string> | undefined;
  if (form) {
    const built = multipart(form, [pdfFile()]);
    payload = built.payload;
    headers['content-type'] = built.contentType;
  } else if (spec.body !== undefined) {
    payload = JSON.stringify(spec.body);
    headers['content-type'] = 'application/json';
  }
  const response = await t.corridor.app.inject({ method: method as any, url: `${API_PREFIX}${path}`, query: spec.query, headers, payload });
  let body: any = response.body;
  try {
    body = JSON.parse(response.body);
  } catch {
    /* not JSON */
  }
  const raw = `${response.body}\n${JSON.stringify(response.headers)}`;
  const requestText = `${decodeURIComponent(path)}?${JSON.stringify(spec.query ?? {})} ${JSON.stringify(spec.body ?? {})} ${JSON.stringify(spec.headers ?? {})}`;
  const sent = { side, method, path, spec, status: response.statusCode, body, raw, requestText };
  if (process.env.ISOLATION_LOG) console.log(describeSent(sent));
  return sent;
}

function describeSent(s: Sent): string {
  const q = s.spec.query && Object.keys(s.spec.query).length ? `?${new URLSearchParams(s.spec.query)}` : '';
  const body = s.spec.body === undefined ? '' : ` ${JSON.stringify(s.spec.body)}`;
  return `${s.side}: ${s.method} ${s.path}${q}${body} → ${s.status} ${typeof s.body === 'object' ? JSON.stringify(s.body).slice(0, 300) : String(s.body).slice(0, 200)}`;
}

/** A's strings in B's answer that B did not send itself (and that the operation may not show by design). */
function leaked(s: Sent, mayShow: string[] = []): string[] {
  return secrets.filter((secret) => s.raw.includes(secret) && !s.requestText.includes(secret) && !mayShow.includes(secret));
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI document

interface Operation {
  key: string;
  method: string;
  /** Without the API prefix. */
  path: string;
  pathParams: string[];
  queryParams: Array<{ name: string; required: boolean }>;
  isList: boolean;
  basicAuth: boolean;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [fullPath, item] of Object.entries<any>(doc.paths)) {
    expect(fullPath.startsWith(`${API_PREFIX}/`), fullPath).toBe(true);
    const path = fullPath.slice(API_PREFIX.length);
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const security: any[] = op.security ?? doc.security ?? [];
      const params: any[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      let ok = op.responses?.['200']?.content?.['application/json']?.schema;
      if (ok?.$ref) ok = doc.components.schemas[ok.$ref.split('/').pop()];
      out.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: !!p.required })),
        isList: method === 'get' && !!ok?.properties?.data,
        basicAuth: security.some((s) => 'BasicAuth' in s),
      });
    }
  }
  return out;
}

/** Every way of filling the path's parameters with A's ids, alone or next to B's own ids. */
function pathVariants(op: Operation): Array<{ path: string; allA: boolean }> {
  const ids = pathIds(A);
  const own = ownPathIds(B);
  let combos: Array<Array<{ value: string; ofA: boolean }>> = [[]];
  for (const name of op.pathParams) {
    const choices = [...(ids[name] ?? []).map((value) => ({ value, ofA: true })), ...(own[name] && op.pathParams.length > 1 ? [{ value: own[name]!, ofA: false }] : [])];
    combos = combos.flatMap((combo) => choices.map((c) => [...combo, c]));
  }
  return combos
    .filter((combo) => combo.some((c) => c.ofA))
    .map((combo) => {
      let i = 0;
      return { path: op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(combo[i++]!.value)), allA: combo.every((c) => c.ofA) };
    });
}

function pathOpSpec(op: Operation, own: { customer: string }): RequestSpec {
  const body = PATH_OP_BODIES[op.key]?.(A) ?? (['POST', 'PATCH', 'PUT'].includes(op.method) ? {} : undefined);
  return { body, query: PATH_OP_QUERIES[op.key]?.(own), headers: PATH_OP_HEADERS[op.key]?.(A) };
}

/** Operations with a write method first read, then change, then delete (the customer last). */
function replayOrder(op: Operation): number {
  const rank: Record<string, number> = { GET: 0, PATCH: 1, PUT: 2, POST: 3, DELETE: 4 };
  return rank[op.method]! * 10 + (op.key === 'DELETE /customers/{customerId}' ? 5 : op.key.startsWith('DELETE /auth/credentials') ? 2 : 0);
}

// ---------------------------------------------------------------------------------------------
// A's view of its own objects

async function snapshotOfA(ops: Operation[]): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const values = queryValues(A);
  for (const op of ops.filter((o) => o.basicAuth && o.method === 'GET')) {
    if (op.pathParams.length > 0) {
      if (BY_DESIGN[op.key] || PATH_OP_QUERIES[op.key]) continue; // lookups: each call makes a new lookup
      for (const v of pathVariants(op).filter((v) => v.allA)) {
        const r = await send(A.tp, 'A', 'GET', v.path);
        if (r.status === 200) out.set(v.path, r.body);
      }
    } else {
      const query: Record<string, string> = {};
      for (const q of op.queryParams) {
        if (q.name === 'limit') query.limit = '100';
        if (q.name === 'isIncludingDeleted') query.isIncludingDeleted = 'true';
        if (q.required) query[q.name] = values[q.name]![0]!;
      }
      const r = await send(A.tp, 'A', 'GET', op.path, { query });
      if (r.status === 200) out.set(`${op.path}?${new URLSearchParams(query)}`, r.body);
    }
  }
  return out;
}

/** Reads served from another request's run so far (all routes). */
async function sharedReads(): Promise<number> {
  const metrics = String((await t.anonymous.get('/metrics')).body);
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('corridor_http_shared_reads_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

const ID_PATTERN = /\b[A-Z][A-Za-z]+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

function idsIn(value: unknown): Set<string> {
  return new Set(JSON.stringify(value).match(ID_PATTERN) ?? []);
}

// ---------------------------------------------------------------------------------------------
// Setup

function ok(res: { status: number; body: any }, status: number, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

async function internalAccounts(tp: TestPlatform, customerId: string) {
  const list = ok(await tp.api.get('/customers/internal-accounts', { customerId, limit: 100 }), 200, 'internal accounts');
  return list.data as any[];
}

async function buildA(domain: string): Promise<WorldA> {
  const tp = await t.createPlatform({ name: `Platform ${MARK}` });
  const api = tp.api;
  ok(await api.patch('/config', { umaDomain: domain, webhookEndpoint: receiver.url, embeddedWallets: { currencies: ['USD'] } }), 200, 'A config');

  const tokenName = `${MARK} token`;
  const token = ok(await api.post('/tokens', { name: tokenName, permissions: ['VIEW'] }), 201, 'token');

  const customerPcid = `iso-a-${Date.now()}`;
  const customer = ok(
    await api.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: customerPcid, fullName: `Ada ${MARK}`, email: 'ada.alpha@example.com', birthDate: '1990-01-15', nationality: 'US', address: ADDRESS, region: 'US' }),
    201,
    'customer',
  );
  const accounts = await internalAccounts(tp, customer.id);
  const usd = accounts.find((a) => a.type === 'INTERNAL_FIAT' && a.balance.currency.code === 'USD').id;
  const eur = accounts.find((a) => a.type === 'INTERNAL_FIAT' && a.balance.currency.code === 'EUR').id;
  const document = await uploadDocument(tp, customer.id);
  const verification = ok(await api.post('/verifications', { customerId: customer.id }), 200, 'verification');

  const business = ok(await api.post('/customers', { customerType: 'BUSINESS', address: ADDRESS, businessInfo: { legalName: `${MARK} Corp`, registrationNumber: 'REG-1' } }), 201, 'business');
  const owner = ok(await api.post('/beneficial-owners', beneficialOwnerBody(business.id, MARK)), 201, 'beneficial owner');

  const deleted = ok(await api.post('/customers', { customerType: 'INDIVIDUAL', fullName: `Gone ${MARK}` }), 201, 'customer to delete');
  ok(await api.delete(`/customers/${deleted.id}`), 200, 'delete customer');

  const wallet = await newWallet(tp);
  const session = await emailSession(t, wallet);
  const exportChallenge = ok(await api.post(`/internal-accounts/${wallet.accountId}/export`, { clientPublicKey }), 202, 'export challenge');
  const revokeChallenge = ok(await api.delete(`/auth/sessions/${session.id}`), 202, 'session revocation challenge');

  const ext = await usdAccount(tp, customer.id);
  const platformExt = ok(
    await api.post('/platform/external-accounts', { currency: 'USD', accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '987654001', routingNumber: '021000021', beneficiary: { beneficiaryType: 'BUSINESS', legalName: `${MARK} Treasury` } } }),
    201,
    'platform external account',
  );

  await fund(tp, usd, 1_000_000);
  const transfer = ok(await api.post('/transfer-out', { source: { accountId: usd }, destination: { accountId: ext }, amount: 1_000 }, { 'idempotency-key': IDEMPOTENCY_KEY }), 201, 'transfer-out');

  const executed = ok(await api.post('/quotes', quoteBody(usd, eur, 2_000)), 201, 'quote to execute');
  const execution = ok(await api.post(`/quotes/${executed.id}/execute`), 200, 'execute');
  const pendingQuote = ok(await api.post('/quotes', quoteBody(usd, eur, 2_500)), 201, 'pending quote');
  const realtimeQuote = ok(await api.post('/quotes', realtimeQuoteBody(customer.id, ext)), 201, 'realtime-funding quote');
  await fund(tp, wallet.accountId, 50_000);
  const walletExt = await usdAccount(tp, wallet.customerId);
  const walletQuote = ok(await api.post('/quotes', quoteBody(wallet.accountId, walletExt, 1_200)), 201, 'wallet quote');

  const umaLookup = ok(await api.get(`/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`, { customerId: customer.id }), 200, 'UMA lookup');
  const extLookup = ok(await api.get(`/receiver/external-account/${ext}`, { customerId: customer.id }), 200, 'external account lookup');

  // With a webhook endpoint the platform decides on incoming payments: this one waits for it.
  const incoming = ok(await api.post('/sandbox/uma/receive', umaReceiveBody({ customerId: customer.id })), 200, 'incoming payment');
  expect(incoming.status).toBe('PENDING');

  const invitation = ok(await api.post('/invitations', { inviterUma: customer.umaAddress, firstName: 'Ada', amountToSend: 2_500 }), 201, 'invitation');

  const agent = await connectedAgent(t, tp, customer.id, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }), `Agent ${MARK}`);
  const action = ok(await agent.api.post('/agents/me/transfer-out', { source: { accountId: usd }, destination: { accountId: ext }, amount: 1_500 }), 201, 'agent action');
  expect(action.status).toBe('PENDING_APPROVAL');

  const csv = `platformCustomerId,customerType,fullName\niso-a-bulk-${Date.now()},INDIVIDUAL,Bulk ${MARK}`;
  const form = multipart({}, [{ fileName: 'customers.csv', contentType: 'text/csv', content: Buffer.from(csv) }]);
  const bulk = ok(await api.request({ method: 'POST', path: '/customers/bulk/csv', body: form.payload, headers: { 'content-type': form.contentType } }), 202, 'bulk import');

  ok(await api.post('/sandbox/webhooks/test'), 200, 'webhook test');

  const txQuote = (await api.get(`/quotes/${executed.id}`)).body.transactionId ?? execution.transactionId;
  const transaction = ok(await api.get(`/transactions/${transfer.id}`), 200, 'transaction');
  expect(txQuote).toMatch(/^Transaction:/);
  expect(transaction.reconciliationInstructions?.reference).toEqual(expect.any(String));
  return {
    tp,
    platformId: tp.platform.id,
    customer: customer.id,
    customerPcid,
    customerUma: customer.umaAddress,
    business: business.id,
    deleted: deleted.id,
    usd,
    eur,
    walletCustomer: wallet.customerId,
    walletAccount: wallet.accountId,
    credential: session.credentialId,
    session: session.id,
    ext,
    platformExt: platformExt.id,
    token: token.id,
    tokenClientId: token.clientId,
    tokenName,
    pendingQuote: pendingQuote.id,
    executedQuote: executed.id,
    realtimeQuote: realtimeQuote.id,
    walletQuote: walletQuote.id,
    exportRequestId: exportChallenge.requestId,
    revokeRequestId: revokeChallenge.requestId,
    txPending: incoming.id,
    txTransfer: transfer.id,
    txQuote,
    txReference: transaction.reconciliationInstructions?.reference,
    umaLookup: umaLookup.lookupId,
    extLookup: extLookup.lookupId,
    invitation: invitation.code,
    verification: verification.id,
    document: document.id,
    owner: owner.id,
    agent: agent.id,
    action: action.id,
    bulkJob: bulk.jobId,
  };
}

async function buildB(domain: string): Promise<WorldB> {
  const tp = await t.createPlatform({ name: 'Platform Beta' });
  ok(await tp.api.patch('/config', { umaDomain: domain }), 200, 'B config');
  const customer = await newCustomer(tp, 'Bea Beta');
  const uma = (await tp.api.get(`/customers/${customer.id}`)).body.umaAddress;
  await fund(tp, customer.accounts.USD!, 500_000);
  const ext = await usdAccount(tp, customer.id);
  const agent = await connectedAgent(t, tp, customer.id, agentPolicy(), 'Beta agent');
  return { tp, customer: customer.id, customerPcid: customer.platformCustomerId, customerUma: uma, usd: customer.accounts.USD!, eur: customer.accounts.EUR!, ext, agent: agent.id };
}

beforeAll(async () => {
  t = await startTestApp();
  receiver = await startWebhookReceiver();
  receiver.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? { status: 202 } : { status: 200 }));
  // Listen, so that B's UMA lookup of A's customer really reaches A's lnurlp endpoint (the Host header picks the platform).
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.corridor.app.server.address() as AddressInfo).port;
  doc = (await t.anonymous.get('/openapi.json')).body;
  A = await buildA(`127.0.0.1:${port}`);
  B = await buildB(`localhost:${port}`);

  const ops = operations();
  snapshotBefore = await snapshotOfA(ops);
  balancesBefore = await balancesOfA();
  eventsOfABefore = await eventsOf(A.platformId);
  // A's secrets: every id in A's view of its objects (no id is shared between platforms).
  const aIds = new Set<string>();
  for (const body of snapshotBefore.values()) for (const id of idsIn(body)) aIds.add(id);
  for (const [key, value] of Object.entries(A)) if (key !== 'tp' && typeof value === 'string' && value) aIds.add(value);
  secrets = [...aIds];
  secrets.push(MARK);
  expect(secrets).toEqual(expect.arrayContaining([A.platformId, A.customer, A.usd, A.txPending, A.invitation, A.tokenClientId, A.customerUma]));
}, 120_000);

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

// ---------------------------------------------------------------------------------------------
// The checks

/** B's answers to the path probes, by operation key, for the sanity check at the end. */
const pathAnswers = new Map<string, Array<{ path: string; spec: RequestSpec; b: Sent }>>();
const queryAnswers: Array<{ op: Operation; param: string; aQuery: Record<string, string>; b: Sent; list: boolean; cursor: boolean }> = [];
const referenceAnswers: Array<{ key: string; probe: Probe; b: Sent }> = [];

describe('tenant isolation', () => {
  it('every operation of the OpenAPI document is classified', () => {
    const ops = operations();
    const problems: string[] = [];
    const ids = pathIds(A);
    const values = queryValues(A);
    for (const op of ops) {
      if (!op.basicAuth) {
        if (!NOT_PLATFORM_AUTH.has(op.key)) problems.push(`${op.key}: not platform-authenticated and not listed in NOT_PLATFORM_AUTH`);
        continue;
      }
      for (const name of op.pathParams) if (!ids[name]?.length) problems.push(`${op.key}: no id of A's for path parameter {${name}}`);
      for (const q of op.queryParams) {
        if (!NOT_IDENTIFYING.has(q.name) && q.name !== 'cursor' && !values[q.name]?.length) problems.push(`${op.key}: query parameter ${q.name} is neither in queryValues nor in NOT_IDENTIFYING`);
      }
      if (op.pathParams.length === 0 && op.method !== 'GET' && !REFERENCE_PROBES[op.key] && !NO_REFERENCES[op.key]) problems.push(`${op.key}: a write without path parameters in neither REFERENCE_PROBES nor NO_REFERENCES`);
    }
    for (const key of [...Object.keys(PATH_OP_BODIES), ...Object.keys(PATH_OP_QUERIES), ...Object.keys(PATH_OP_HEADERS), ...Object.keys(OTHER_REFUSALS), ...Object.keys(BY_DESIGN), ...Object.keys(REFERENCE_PROBES), ...Object.keys(NO_REFERENCES), ...NOT_PLATFORM_AUTH]) {
      if (!ops.some((o) => o.key === key)) problems.push(`${key}: listed here but not in /openapi.json`);
    }
    expect(problems).toEqual([]);
  });

  it("B gets a 4xx and none of A's data from every operation with a path parameter", async () => {
    const failures: string[] = [];
    let probes = 0;
    for (const op of operations().filter((o) => o.basicAuth && o.pathParams.length > 0)) {
      const answers: Array<{ path: string; spec: RequestSpec; b: Sent }> = [];
      for (const v of pathVariants(op)) {
        const spec = pathOpSpec(op, { customer: B.customer });
        const b = await send(B.tp, 'B', op.method, v.path, spec);
        probes++;
        if (v.allA) answers.push({ path: v.path, spec, b });
        const design = BY_DESIGN[op.key];
        const leaks = leaked(b, design?.mayShow(A) ?? []);
        if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
        if (design) {
          if (b.status >= 500) failures.push(`5xx ${describeSent(b)}`);
          continue;
        }
        if (b.status < 400 || b.status >= 500) failures.push(`NOT REFUSED ${describeSent(b)}`);
        else if (b.status === 404 && !/NOT_FOUND$/.test(b.body?.code)) failures.push(`404 without a *_NOT_FOUND code: ${describeSent(b)}`);
        else if (b.status !== 404 && b.status !== 403 && OTHER_REFUSALS[op.key]?.status !== b.status) failures.push(`neither 404 nor 403: ${describeSent(b)}`);
      }
      pathAnswers.set(op.key, answers);
    }
    expect(probes).toBeGreaterThan(40);
    expect(failures).toEqual([]);
  });

  it("B's lists, and queries naming A's objects, show nothing of A's", async () => {
    const failures: string[] = [];
    const values = queryValues(A);
    const own = ownQueryValues(B);
    for (const op of operations().filter((o) => o.basicAuth && o.method === 'GET' && o.pathParams.length === 0)) {
      const base = (side: 'A' | 'B', skip?: string): Record<string, string> => {
        const query: Record<string, string> = {};
        for (const q of op.queryParams) {
          if (q.name === 'limit') query.limit = '100';
          if (q.name === 'isIncludingDeleted') query.isIncludingDeleted = 'true';
          if (q.required && q.name !== skip) query[q.name] = side === 'B' ? own[q.name]! : values[q.name]![0]!;
        }
        return query;
      };
      // Unfiltered (B's own required values).
      if (op.queryParams.every((q) => !q.required || own[q.name])) {
        const b = await send(B.tp, 'B', 'GET', op.path, { query: base('B') });
        const leaks = leaked(b);
        if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
      }
      for (const q of op.queryParams) {
        const tries: Array<{ value: string; cursor: boolean }> = (values[q.name] ?? []).map((value) => ({ value, cursor: false }));
        if (q.name === 'cursor') {
          const first = await send(A.tp, 'A', 'GET', op.path, { query: { ...base('A'), limit: '1' } });
          if (first.body?.nextCursor) tries.push({ value: first.body.nextCursor, cursor: true });
        }
        for (const { value, cursor } of tries) {
          const query = { ...base('B', q.name), [q.name]: value };
          const b = await send(B.tp, 'B', 'GET', op.path, { query });
          queryAnswers.push({ op, param: q.name, aQuery: { ...base('A', q.name), [q.name]: value }, b, list: op.isList, cursor });
          // A's cursor is not A's data: B may see its own page, but nothing of A's.
          const leaks = leaked(b);
          if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
          if (cursor || b.status >= 400 && b.status < 500) continue;
          if (b.status >= 500) failures.push(`5xx ${describeSent(b)}`);
          else if (!op.isList) failures.push(`ANSWERED ${describeSent(b)}`);
          else if (!Array.isArray(b.body?.data) || b.body.data.length > 0) failures.push(`NOT EMPTY ${describeSent(b)}`);
        }
      }
    }
    expect(queryAnswers.length).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });

  it('identical GETs of A and B at the same moment do not share answers', async () => {
    // GETs are coalesced (src/http/coalescing.ts): identical reads in flight share one run. A and
    // B send the very same URLs together, several times over; B must still get its own answers.
    const failures: string[] = [];
    const values = queryValues(A);
    const urls: Array<{ path: string; query: Record<string, string>; single: boolean }> = [];
    for (const op of operations().filter((o) => o.basicAuth && o.method === 'GET' && !BY_DESIGN[o.key] && !PATH_OP_QUERIES[o.key])) {
      if (op.pathParams.length > 0) {
        for (const v of pathVariants(op).filter((v) => v.allA)) urls.push({ path: v.path, query: {}, single: true });
      } else {
        const query: Record<string, string> = {};
        for (const q of op.queryParams) {
          if (q.name === 'limit') query.limit = '100';
          if (q.required) query[q.name] = values[q.name]![0]!;
        }
        urls.push({ path: op.path, query, single: false });
      }
    }
    let aAnswered = 0;
    const sharedBefore = await sharedReads();
    for (const { path, query, single } of urls) {
      // Both orders: the request that starts a shared run is the one whose answer the others get.
      for (const first of [A, B] as Array<WorldA | WorldB>) {
        const sides = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? first : first === A ? B : A));
        const answers = await Promise.all(sides.map((w) => send(w.tp, w === A ? 'A' : 'B', 'GET', path, { query })));
        for (const r of answers) {
          if (r.side === 'A') {
            if (r.status === 200) aAnswered++;
            continue;
          }
          const leaks = leaked(r);
          if (leaks.length > 0) failures.push(`LEAK ${describeSent(r)}\n    shows A's ${leaks.join(', ')}`);
          if (single && (r.status < 400 || r.status >= 500)) failures.push(`NOT REFUSED ${describeSent(r)}`);
        }
      }
    }
    // The reads did overlap: some were served from another request's run.
    expect(await sharedReads()).toBeGreaterThan(sharedBefore);
    expect(aAnswered).toBeGreaterThan(urls.length);
    expect(failures).toEqual([]);
  });

  it("B cannot name A's objects in what it creates", async () => {
    const failures: string[] = [];
    for (const [key, probes] of Object.entries(REFERENCE_PROBES)) {
      const [method, path] = key.split(' ') as [string, string];
      for (const probe of probes) {
        const spec = probe.b(A, B);
        const b = await send(B.tp, 'B', method, spec.path ?? path, spec);
        referenceAnswers.push({ key, probe, b });
        if (probe.undo && b.status < 300) ok(await probe.undo(b.body), 200, `undo ${key}`);
        const leaks = leaked(b);
        if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
        if (probe.expect !== undefined) {
          if (!probe.expect.includes(b.status)) failures.push(`expected ${probe.expect.join(' or ')}: ${describeSent(b)}`);
        } else if (b.status < 400 || b.status >= 500) failures.push(`NOT REFUSED ${describeSent(b)}`);
        else if (b.status === 404 && !/NOT_FOUND$/.test(b.body?.code)) failures.push(`404 without a *_NOT_FOUND code: ${describeSent(b)}`);
      }
    }
    // B moves its own clock by an hour: A's pending quote (5 minutes) must stay pending.
    ok(await B.tp.api.post('/sandbox/clock/advance', { seconds: 3_600 }), 200, "B's clock");
    expect(failures).toEqual([]);
  });

  it("A's objects, balances and lists are as they were", async () => {
    const after = await snapshotOfA(operations());
    const changed = [...snapshotBefore.keys()].filter((key) => JSON.stringify(after.get(key)) !== JSON.stringify(snapshotBefore.get(key)));
    expect(changed.map((key) => `${key}\n  before ${JSON.stringify(snapshotBefore.get(key)).slice(0, 400)}\n  after  ${JSON.stringify(after.get(key)).slice(0, 400)}`)).toEqual([]);
    expect([...after.keys()].sort()).toEqual([...snapshotBefore.keys()].sort());
    // The same, spelled out for the objects B tried hardest to change.
    const api = A.tp.api;
    expect((await api.get(`/quotes/${A.pendingQuote}`)).body.status).toBe('PENDING');
    expect((await api.get(`/transactions/${A.txPending}`)).body.status).toBe('PENDING');
    expect((await api.get(`/customers/${A.customer}`)).body).toMatchObject({ fullName: `Ada ${MARK}`, isDeleted: false });
    expect((await api.get(`/agents/${A.agent}`)).body).toMatchObject({ name: `Agent ${MARK}`, isPaused: false });
    expect((await api.get('/agents/approvals', { agentId: A.agent })).body.data.map((x: any) => x.id)).toEqual([A.action]);
    expect((await api.get(`/invitations/${A.invitation}`)).body.status).toBe('PENDING');
    expect((await api.get(`/tokens/${A.token}`)).status).toBe(200);
    expect((await api.get(`/documents/${A.document}`)).body.documentType).toBe('PASSPORT');
    expect((await api.get(`/beneficial-owners/${A.owner}`)).body.ownershipPercentage).not.toBe(1);
    expect(await balancesOfA()).toEqual(balancesBefore);
    // B's probes caused no event (webhook) on A's side, and none of B's events carries A's data
    // (but for the platformCustomerId and UMA address B gave customers of its own, on purpose).
    expect(await eventsOf(A.platformId)).toEqual(eventsOfABefore);
    const bEvents = (await eventsOf(B.tp.platform.id)).join('\n');
    expect(secrets.filter((secret) => bEvents.includes(secret) && secret !== A.customerUma && secret !== A.customerPcid)).toEqual([]);
  });

  // Last: A changes its own objects here.
  it('A itself gets through the same calls, so every refusal above came from the platform boundary', async () => {
    const failures: string[] = [];
    // Each identifying query parameter finds something of A's for A with at least one of the values B tried.
    const found = new Map<string, string[]>();
    for (const { op, param, aQuery, list, cursor } of queryAnswers) {
      if (cursor) continue;
      const a = await send(A.tp, 'A', 'GET', op.path, { query: aQuery });
      const hit = a.status === 200 && (!list || (Array.isArray(a.body?.data) && a.body.data.length > 0));
      const key = `${op.key} ?${param}`;
      if (!found.has(key)) found.set(key, []);
      if (!hit) found.get(key)!.push(describeSent(a));
      else found.set(key, ['found']);
    }
    for (const [key, misses] of found) if (!misses.includes('found')) failures.push(`${key}: finds nothing even for A:\n    ${misses.join('\n    ')}`);
    for (const { key, probe, b } of referenceAnswers) {
      const [method, path] = key.split(' ') as [string, string];
      const spec = probe.a(A);
      const a = await send(A.tp, 'A', method, spec.path ?? path, spec);
      if (a.status >= 500 || (probe.expect === undefined && a.status === b.status && a.body?.code === b.body?.code)) {
        failures.push(`${key}: A gets what B got, so B's refusal proves nothing:\n    ${describeSent(a)}\n      vs ${describeSent(b)}`);
      }
    }
    // Then the path operations, reads first, deletions last (they change A's objects).
    const ops = operations().filter((o) => o.basicAuth && o.pathParams.length > 0 && !BY_DESIGN[o.key]);
    ops.sort((x, y) => replayOrder(x) - replayOrder(y));
    for (const op of ops) {
      const answers = pathAnswers.get(op.key) ?? [];
      const replays: string[] = [];
      let differs = false;
      for (const { path, b } of answers) {
        const a = await send(A.tp, 'A', op.method, path, pathOpSpec(op, { customer: A.customer }));
        replays.push(`${describeSent(a)}\n      vs ${describeSent(b)}`);
        if (a.status < 500 && (a.status !== b.status || a.body?.code !== b.body?.code)) differs = true;
      }
      if (!differs) failures.push(`${op.key}: A gets what B got, so B's refusal proves nothing:\n    ${replays.join('\n    ')}`);
    }
    expect(failures).toEqual([]);
  });
});
