// The two platforms of test/isolation.test.ts: platform A with one object of every kind the API can
// reach, platform B with a few of its own, and the request bodies both are built (and probed) with.
import { expect } from 'vitest';
import { generateClientKeyPair } from '../../src/wallet-client/index.js';
import { agentPolicy, connectedAgent } from './agents.js';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp, type TestPlatform } from './app.js';
import { fund, newCustomer, usdAccount } from './quotes.js';
import { ADDRESS, beneficialOwnerBody, multipart, uploadDocument } from './verification.js';
import { emailSession, newWallet } from './wallets.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

// ---------------------------------------------------------------------------------------------
// The two worlds

/** Appears in A's names only (case-sensitive: generated UMA addresses are lower case). */
export const MARK = 'ZyxAlpha';

export interface WorldA {
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
  /** The agent's device code (redeemed). */
  agentCode: string;
  action: string;
  bulkJob: string;
}

export interface WorldB {
  tp: TestPlatform;
  customer: string;
  customerPcid: string;
  customerUma: string;
  usd: string;
  eur: string;
  ext: string;
  agent: string;
}

// ---------------------------------------------------------------------------------------------
// Bodies

export interface RequestSpec {
  /** For probes of operations with path parameters: the filled-in path. */
  path?: string;
  query?: Record<string, string>;
  /** JSON, or `{ multipart: fields }` for a form with a PDF file. */
  body?: unknown;
  headers?: Record<string, string>;
}

export function extAccountBody(customerId: string) {
  return {
    customerId,
    currency: 'USD',
    accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: `55${Date.now() % 1_000_000}001`, routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Rita Receiver' } },
  };
}

export function cryptoFeeBody(internalAccountId: string) {
  return { internalAccountId, currency: 'USDC', cryptoNetwork: 'SOLANA_MAINNET', amount: 1_000_000, destinationAddress: '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU' };
}

export function quoteBody(source: string, destination: string, amount = 1_000) {
  return {
    source: { sourceType: 'ACCOUNT', accountId: source },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  };
}

export function realtimeQuoteBody(customerId: string, destination: string) {
  return {
    source: { sourceType: 'REALTIME_FUNDING', customerId, currency: 'USD' },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 3_000,
  };
}

export function umaQuoteBody(source: string, lookupId: string) {
  return {
    lookupId,
    source: { sourceType: 'ACCOUNT', accountId: source },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: SANDBOX_RECEIVER, currency: 'USD' },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 1_000,
  };
}

export function umaReceiveBody(to: { customerId?: string; receiverUmaAddress?: string }) {
  return { senderUmaAddress: SANDBOX_RECEIVER, ...to, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 1_500 };
}

export function documentForm(holder: string): RequestSpec {
  return { body: { multipart: { documentHolder: holder, documentType: 'PASSPORT', country: 'US' } } };
}

export const SANDBOX_RECEIVER = '$success.usd@sandbox.uma.money';
/** The Idempotency-Key of A's transfer-out: B sending it must neither replay A's answer nor learn that A used it. */
export const IDEMPOTENCY_KEY = 'isolation-shared-key';
export const clientPublicKey = generateClientKeyPair().publicKey;

// ---------------------------------------------------------------------------------------------
// Building them

export function ok(res: { status: number; body: any }, status: number, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

async function internalAccounts(tp: TestPlatform, customerId: string) {
  const list = ok(await tp.api.get('/customers/internal-accounts', { customerId, limit: 100 }), 200, 'internal accounts');
  return list.data as any[];
}

export async function buildA(t: TestApp, receiver: WebhookReceiver, domain: string): Promise<WorldA> {
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
    agentCode: agent.code,
    action: action.id,
    bulkJob: bulk.jobId,
  };
}

export async function buildB(t: TestApp, domain: string): Promise<WorldB> {
  const tp = await t.createPlatform({ name: 'Platform Beta' });
  ok(await tp.api.patch('/config', { umaDomain: domain }), 200, 'B config');
  const customer = await newCustomer(tp, 'Bea Beta');
  const uma = (await tp.api.get(`/customers/${customer.id}`)).body.umaAddress;
  await fund(tp, customer.accounts.USD!, 500_000);
  const ext = await usdAccount(tp, customer.id);
  const agent = await connectedAgent(t, tp, customer.id, agentPolicy(), 'Beta agent');
  return { tp, customer: customer.id, customerPcid: customer.platformCustomerId, customerUma: uma, usd: customer.accounts.USD!, eur: customer.accounts.EUR!, ext, agent: agent.id };
}

/** Every balance of A's internal accounts and of its platform accounts. */
export async function balancesOfA(a: WorldA): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const path of ['/customers/internal-accounts', '/platform/internal-accounts']) {
    const list = ok(await a.tp.api.get(path, { limit: 100 }), 200, path);
    for (const account of list.data) out[account.id] = { balance: account.balance, totalBalance: account.totalBalance };
  }
  expect(Object.keys(out)).toEqual(expect.arrayContaining([a.usd, a.eur, a.walletAccount]));
  return out;
}

/**
 * The app listening on loopback (so that B's UMA lookup of A's customer really reaches A's lnurlp
 * endpoint; the Host header picks the platform), a webhook receiver that leaves incoming payments
 * pending, the server's OpenAPI document, and the two platforms' worlds.
 */
export async function startWorlds(): Promise<{ t: TestApp; receiver: WebhookReceiver; doc: any; A: WorldA; B: WorldB }> {
  const t = await startTestApp();
  const receiver = await startWebhookReceiver();
  receiver.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? { status: 202 } : { status: 200 }));
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.corridor.app.server.address() as AddressInfo).port;
  const doc = (await t.anonymous.get('/openapi.json')).body;
  const A = await buildA(t, receiver, `127.0.0.1:${port}`);
  const B = await buildB(t, `localhost:${port}`);
  return { t, receiver, doc, A, B };
}
