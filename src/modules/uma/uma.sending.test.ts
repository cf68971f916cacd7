import {
  Currency,
  getLnurlpResponse,
  getPayReqResponse,
  KycStatus,
  parseLnurlpRequest,
  PayRequest,
  signPayload,
} from '@uma-sdk/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { failOnce } from '../../../test/support/faults.js';
import { holdableClock, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, balances, expectError, expectLedgerClean, fund, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';
import { startFakeVasp, umaKeyPair, type FakeVasp, type VaspRequest } from '../../../test/support/uma-vasp.js';
import { FAILED_DOMAIN_MEMORY_MS } from './counterparty.js';
import { createInvoice, parseInvoice } from './invoice.js';
import { settleStatusPayload, type SettleStatus } from './settlement.js';

/**
 * Corridor as the sending VASP, against a fake receiving VASP that answers with genuine UMA SDK
 * messages, or with forged, replayed, stale or wrong ones.
 */
type LnurlpMode = 'genuine' | 'bad-signature' | 'stale' | 'other-receiver' | 'replay' | 'v0-only' | 'not-uma' | 'production';
type PayMode = 'genuine' | 'wrong-amount' | 'refuse' | 'stall';
type SettleScript = Array<{ status: SettleStatus; reason?: string; forged?: boolean; stall?: boolean }>;

const time = holdableClock();
let t: TestApp;
let p: TestPlatform;
let vasp: FakeVasp;
let alice: TestCustomer;
let lnurlpMode: LnurlpMode;
let payMode: PayMode;
let settleScript: SettleScript;
let lastLnurlp: unknown;
const preimages = new Map<string, string>();

const RECEIVER = () => `$rita@${vasp.domain}`;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function resign(body: any, timestampSec: number, identifier: string) {
  body.compliance.signatureTimestamp = timestampSec;
  body.compliance.receiverIdentifier = identifier;
  body.compliance.signature = await signPayload(`${identifier}|${body.compliance.signatureNonce}|${timestampSec}`, vasp.privateKey);
}

async function lnurlpAnswer(request: VaspRequest) {
  if (lnurlpMode === 'v0-only') return { status: 412, body: { status: 'ERROR', reason: 'no', code: 'UNSUPPORTED_UMA_VERSION', supportedMajorVersions: [0] } };
  if (lnurlpMode === 'replay' && lastLnurlp) return { body: lastLnurlp };
  const parsed = parseLnurlpRequest(new URL(`http://${vasp.domain}${request.url}`));
  const response = await getLnurlpResponse({
    request: parsed,
    privateKeyBytes: vasp.privateKey,
    requiresTravelRuleInfo: false,
    callback: `http://${vasp.domain}/pay`,
    encodedMetadata: '[["text/plain","Rita"]]',
    minSendableSats: 1,
    maxSendableSats: 10_000_000,
    payerDataOptions: { name: { mandatory: true }, countryOfResidence: { mandatory: false }, favouriteColour: { mandatory: false } },
    currencyOptions: [new Currency('EUR', 'Euro', '€', 1_000, 100, 1_000_000, 2), new Currency('XXQ', 'Nothing', '?', 1, 1, 2, 0)],
    receiverKycStatus: KycStatus.Verified,
  });
  const body: any = response.toJsonSchemaObject();
  if (lnurlpMode === 'bad-signature') body.compliance.signature = (await signPayload('something else', vasp.privateKey));
  if (lnurlpMode === 'stale') await resign(body, Math.floor(Date.now() / 1000) - 3600, body.compliance.receiverIdentifier);
  if (lnurlpMode === 'other-receiver') await resign(body, body.compliance.signatureTimestamp, `$someone@${vasp.domain}`);
  if (lnurlpMode === 'not-uma') delete body.compliance;
  // The fake stands for a sandbox counterparty, as the sending platform is a sandbox.
  if (lnurlpMode !== 'production') body.corridorSandbox = true;
  lastLnurlp = body;
  return { body };
}

async function payAnswer(request: VaspRequest) {
  if (payMode === 'stall') return { stall: true };
  if (payMode === 'refuse') return { status: 403, body: { status: 'ERROR', reason: 'no thanks', code: 'SENDER_NOT_ACCEPTED' } };
  const payRequest = PayRequest.parse(request.body);
  let issued: ReturnType<typeof createInvoice> | undefined;
  const response = await getPayReqResponse({
    request: payRequest,
    conversionRate: 1_000,
    receivingCurrencyCode: 'EUR',
    receivingCurrencyDecimals: 2,
    invoiceCreator: { createUmaInvoice: async (msats: number) => (issued = createInvoice(msats, Date.now())).invoice },
    metadata: '[]',
    receiverChannelUtxos: [],
    receiverFeesMillisats: 0,
    receivingVaspPrivateKey: vasp.privateKey,
    payeeIdentifier: RECEIVER(),
  });
  preimages.set(issued!.paymentHash, issued!.preimage);
  const body: any = response.toJsonSchemaObject();
  if (payMode === 'wrong-amount') body.converted.amount -= 1;
  return { body };
}

async function settleAnswer(request: VaspRequest) {
  const step = settleScript.length > 1 ? settleScript.shift()! : settleScript[0];
  if (step.stall) return { stall: true };
  const hash = parseInvoice(request.body.invoice)!.paymentHash;
  const detail = step.status === 'SETTLED' ? preimages.get(hash)! : step.status === 'FAILED' ? (step.reason ?? 'FAILED') : '';
  const nonce = `s${Math.random()}`;
  const ts = Math.floor(Date.now() / 1000);
  const key = step.forged ? umaKeyPair().privateKey : vasp.privateKey;
  const signature = await signPayload(settleStatusPayload(hash, step.status, detail, nonce, ts), key);
  const extra = step.status === 'SETTLED' ? { preimage: detail } : step.status === 'FAILED' ? { reason: detail } : {};
  return { body: { status: step.status, ...extra, signatureNonce: nonce, signatureTimestamp: ts, signature } };
}

const lookup = (query: Record<string, string> = { customerId: alice.id }) => p.api.get(`/receiver/uma/${encodeURIComponent(RECEIVER())}`, query);

async function executeQuote(extra: Record<string, unknown> = {}) {
  const found = await lookup();
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  const q = await p.api.post('/quotes', {
    lookupId: found.body.lookupId,
    source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: RECEIVER() },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000,
    ...extra,
  });
  expect(q.status, JSON.stringify(q.body)).toBe(201);
  const executed = await p.api.post(`/quotes/${q.body.id}/execute`);
  expect(executed.status, JSON.stringify(executed.body)).toBe(200);
  return { quote: q.body, executed: executed.body };
}

const transactionOf = (id: string) => p.api.get(`/transactions/${id}`).then((r) => r.body);

beforeAll(async () => {
  t = await startTestApp({ umaCounterpartyTimeoutMs: 2_000 }, { clock: time.clock });
  t.corridor.startWorkers();
  vasp = await startFakeVasp();
  vasp.handle((request) => {
    if (request.url.startsWith('/.well-known/lnurlp/')) return lnurlpAnswer(request);
    if (request.url === '/pay') return payAnswer(request);
    if (request.url === '/uma/settle') return settleAnswer(request);
    return undefined;
  });
  p = await t.createPlatform();
  expect((await p.api.patch('/config', { umaDomain: 'sender.example' })).status).toBe(200);
  alice = await newCustomer(p, 'Alice Ng');
  await fund(p, alice.accounts.USD, 1_000_000);
});
beforeEach(() => {
  // A domain whose keys could not be fetched is not asked again for a while: move past that.
  if (vasp.pubkeyStatus !== undefined) time.skip(FAILED_DOMAIN_MEMORY_MS);
  lnurlpMode = 'genuine';
  payMode = 'genuine';
  settleScript = [{ status: 'SETTLED' }];
  vasp.pubkeyStatus = undefined;
});
afterAll(async () => {
  await t.close();
  await vasp.close();
});

describe('lookups of another VASP\'s address', () => {
  it('reads a genuine lnurlp response: known currencies, the payer fields Corridor can name', async () => {
    const res = await lookup({ customerId: alice.id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.supportedCurrencies).toEqual([{ currency: expect.objectContaining({ code: 'EUR' }), estimatedExchangeRate: expect.any(Number), min: 100, max: 1_000_000 }]);
    expect(res.body.requiredPayerDataFields).toEqual([
      { name: 'FULL_NAME', mandatory: true },
      { name: 'COUNTRY_OF_RESIDENCE', mandatory: false },
    ]);
    const sent = vasp.requests.find((r) => r.url.startsWith('/.well-known/lnurlp/'))!;
    expect(new URL(`http://x${sent.url}`).searchParams.get('vaspDomain')).toBe('sender.example');
  });

  it.each<[LnurlpMode, number, string, string | undefined]>([
    ['bad-signature', 424, 'LNURLP_REQUEST_FAILED', 'INVALID_SIGNATURE'],
    ['stale', 424, 'LNURLP_REQUEST_FAILED', 'INVALID_TIMESTAMP'],
    ['other-receiver', 424, 'LNURLP_REQUEST_FAILED', undefined],
    ['not-uma', 424, 'LNURLP_REQUEST_FAILED', undefined],
    ['v0-only', 412, 'UNSUPPORTED_UMA_VERSION', undefined],
  ])('refuses a %s response: %i %s', async (mode, status, code, reason) => {
    lnurlpMode = mode;
    const res = await lookup();
    expectError(res, status, code);
    if (reason) expect(res.body.details.reason).toBe(reason);
  });

  it('pays only a receiver of its own mode: a sandbox never a production receiver, production never a sandbox', async () => {
    lnurlpMode = 'production';
    const fromSandbox = await lookup();
    expectError(fromSandbox, 424, 'LNURLP_REQUEST_FAILED');
    expect(fromSandbox.body.details.reason).toBe('SANDBOX_MISMATCH');
    lnurlpMode = 'genuine';
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    expect((await production.api.patch('/config', { umaDomain: 'production-sender.example' })).status).toBe(200);
    const paul = await newCustomer(production, 'Paul Prod');
    const fromProduction = await production.api.get(`/receiver/uma/${encodeURIComponent(RECEIVER())}`, { customerId: paul.id });
    expectError(fromProduction, 424, 'LNURLP_REQUEST_FAILED');
    expect(fromProduction.body.details.reason).toBe('SANDBOX_MISMATCH');
  });

  it('refuses a replayed response (its nonce was already used)', async () => {
    lastLnurlp = undefined;
    lnurlpMode = 'replay';
    expect((await lookup()).status).toBe(200);
    const again = await lookup();
    expectError(again, 424, 'LNURLP_REQUEST_FAILED');
    expect(again.body.details.reason).toBe('INVALID_NONCE');
  });

  it('424 COUNTERPARTY_PUBKEY_FETCH_ERROR when the receiver\'s keys cannot be fetched', async () => {
    vasp.pubkeyStatus = 500;
    expectError(await lookup(), 424, 'COUNTERPARTY_PUBKEY_FETCH_ERROR');
  });
});

describe('paying another VASP\'s address', () => {
  it('completes when the receiver settles: the pay request carried the sender\'s data and the quote\'s amount', async () => {
    const before = await balances(t, alice.accounts.USD);
    const { quote, executed } = await executeQuote({ senderCustomerInfo: { COUNTRY_OF_RESIDENCE: 'US' } });
    expect(executed.status).toBe('COMPLETED');
    const pay = vasp.requests.filter((r) => r.url === '/pay').at(-1)!.body;
    expect(pay).toMatchObject({ convert: 'EUR', amount: `${quote.totalReceivingAmount}.EUR`, payerData: { name: 'Alice Ng', countryOfResidence: 'US', identifier: expect.stringMatching(/@sender\.example$/) } });
    // Only what the receiver asked for: Corridor also knows Alice's birth date and nationality.
    expect(Object.keys(pay.payerData).filter((key) => !['identifier', 'compliance'].includes(key)).sort()).toEqual(['countryOfResidence', 'name']);
    expect((await balances(t, alice.accounts.USD)).available).toBe(before.available - 10_000);
  });

  it('fails (QUOTE_EXECUTION_FAILED) when the invoice is for another amount, and returns the funds', async () => {
    payMode = 'wrong-amount';
    const before = await balances(t, alice.accounts.USD);
    const { quote, executed } = await executeQuote();
    expect(executed.status).toBe('FAILED');
    expect(await transactionOf(quote.transactionId)).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'COUNTERPARTY_DELIVERY_FAILED' });
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
  });

  it('a receiver refusing the sender is a compliance failure', async () => {
    payMode = 'refuse';
    const { quote } = await executeQuote();
    expect(await transactionOf(quote.transactionId)).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'COMPLIANCE_FAILED' });
  });

  it('fails (QUOTE_EXECUTION_FAILED) when the receiver stalls in the middle of its pay request answer, and returns the funds', async () => {
    payMode = 'stall';
    const before = await balances(t, alice.accounts.USD);
    const { quote, executed } = await executeQuote();
    expect(executed.status).toBe('FAILED');
    expect(await transactionOf(quote.transactionId)).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'COUNTERPARTY_DELIVERY_FAILED' });
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
  });

  it('keeps the payment PROCESSING while the receiver stalls its settlement answer (a warning, no error), then completes', async () => {
    settleScript = [{ status: 'SETTLED', stall: true }, { status: 'SETTLED' }];
    const { quote, executed } = await executeQuote();
    expect(executed.status).toBe('PROCESSING');
    const done = await until(() => p.api.get(`/quotes/${quote.id}`), (r) => r.body.status !== 'PROCESSING');
    expect(done.body.status).toBe('COMPLETED');
    const lines = t.logs.map((line) => JSON.parse(line));
    expect(lines.filter((l) => l.level === 40 && l.quoteId === quote.id).map((l) => l.msg)).toContain('UMA receiver unreachable for settlement; asking again later');
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('fails (QUOTE_EXECUTION_FAILED) when the receiver\'s keys are gone by execution time', async () => {
    const found = await lookup();
    vasp.pubkeyStatus = 503;
    const q = await p.api.post('/quotes', {
      lookupId: found.body.lookupId,
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: RECEIVER() },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    await p.api.post(`/quotes/${q.body.id}/execute`);
    expect(await transactionOf(q.body.transactionId)).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED' });
  });

  it('a signed FAILED settlement fails the payment (LIGHTNING_PAYMENT_FAILED) with the funds back', async () => {
    settleScript = [{ status: 'FAILED', reason: 'REJECTED' }];
    const before = await balances(t, alice.accounts.USD);
    const { quote, executed } = await executeQuote();
    expect(executed.status).toBe('FAILED');
    expect(await transactionOf(quote.transactionId)).toMatchObject({ failureReason: 'LIGHTNING_PAYMENT_FAILED', failureDetail: 'PLATFORM_REJECTED', refund: { status: 'COMPLETED' } });
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
  });

  it('keeps the payment PROCESSING through PENDING and forged answers, then completes when a genuine SETTLED arrives', async () => {
    settleScript = [{ status: 'PENDING' }, { status: 'SETTLED', forged: true }, { status: 'SETTLED' }];
    const { quote, executed } = await executeQuote();
    expect(executed.status).toBe('PROCESSING');
    const done = await until(() => p.api.get(`/quotes/${quote.id}`), (r) => r.body.status !== 'PROCESSING');
    expect(done.body.status).toBe('COMPLETED');
    expect(vasp.requests.filter((r) => r.url === '/uma/settle').length).toBeGreaterThanOrEqual(3);
    await expectLedgerClean(t, p.platform.id);
  });

  it('a crash as the payment starts waiting cannot leave it unpolled: the recovery job starts the polling', async () => {
    settleScript = [{ status: 'PENDING' }, { status: 'PENDING' }, { status: 'SETTLED' }];
    // The database refuses the first poll job, as a kill right after the payment became SETTLING would.
    const { db } = t.corridor.database;
    const drop = await failOnce(db, 'jobs', 'insert', `new.kind = 'uma.settle-poll'`);
    let quoteId: string;
    try {
      const { quote, executed } = await executeQuote();
      expect(executed.status).toBe('PROCESSING');
      quoteId = quote.id;
    } finally {
      await drop();
    }
    await advance(p, 3 * 60); // the quote's recovery job asks again: still PENDING
    for (let i = 0; i < 3; i++) await advance(p, 60);
    expect((await p.api.get(`/quotes/${quoteId}`)).body.status).toBe('COMPLETED');
    await expectLedgerClean(t, p.platform.id);
  });
});
