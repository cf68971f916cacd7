import type { AddressInfo } from 'node:net';
import {
  getPayRequest,
  getSignedLnurlpRequestUrl,
  InMemoryNonceValidator,
  InMemoryPublicKeyCache,
  fetchPublicKeyForVasp,
  KycStatus,
  LnurlpResponse,
  PayReqResponse,
  verifyPayReqResponseSignature,
  verifyUmaLnurlpResponseSignature,
  type LnurlpRequest,
} from '@uma-sdk/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnce } from '../../../test/support/faults.js';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { balances, expectLedgerClean, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';
import { lnurlpRequestPath, startFakeVasp, umaKeyPair, type FakeVasp } from '../../../test/support/uma-vasp.js';
import { parseInvoice, preimageMatches } from './invoice.js';
import { verifyUmaSignature } from './keys.js';
import { settleRequestPayload, settleStatusPayload } from './settlement.js';

/**
 * Corridor as the receiving VASP, driven by a fake sending VASP that signs with its own key:
 * genuine messages (made with the UMA SDK, as any other VASP would) are answered and verifiable,
 * tampered, replayed and stale ones are refused with the protocol's error codes.
 */
let t: TestApp;
let p: TestPlatform;
let vasp: FakeVasp;
let bob: TestCustomer;
let domain: string;
let receiverAddress: string;

const http = (path: string, init?: RequestInit) => fetch(`http://${domain}${path}`, init).then(async (r) => ({ status: r.status, body: await r.json() }));
const post = (path: string, body: unknown) => http(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const signedLnurlp = (overrides: Partial<LnurlpRequest> = {}, key = vasp.privateKey) => lnurlpRequestPath(vasp, receiverAddress, overrides, key);

async function payRequest(overrides: { amount?: number; currency?: string; key?: Uint8Array; payerData?: Record<string, unknown> } = {}) {
  const request = await getPayRequest({
    receiverEncryptionPubKey: Buffer.from((await http('/.well-known/lnurlpubkey')).body.encryptionPubKey, 'hex'),
    sendingVaspPrivateKey: overrides.key ?? vasp.privateKey,
    receivingCurrencyCode: overrides.currency ?? 'USD',
    amount: overrides.amount ?? 1_500,
    isAmountInReceivingCurrency: true,
    payerIdentifier: `$mallory@${vasp.domain}`,
    payerKycStatus: KycStatus.Verified,
    umaMajorVersion: 1,
    payerData: { name: 'Mallory Sender', ...overrides.payerData },
    requestedPayeeData: { identifier: { mandatory: true }, name: { mandatory: false } },
  });
  return request.toJsonString();
}

async function settleBody(invoice: string, options: { key?: Uint8Array; vaspDomain?: string; timestampSec?: number } = {}) {
  const nonce = `n${Math.random()}`;
  const timestampSec = options.timestampSec ?? Math.floor(Date.now() / 1000);
  const signature = await (await import('@uma-sdk/core')).signPayload(settleRequestPayload(invoice, nonce, timestampSec), options.key ?? vasp.privateKey);
  return { invoice, vaspDomain: options.vaspDomain ?? vasp.domain, signatureNonce: nonce, signatureTimestamp: timestampSec, signature };
}

beforeAll(async () => {
  t = await startTestApp();
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  domain = `127.0.0.1:${(t.corridor.app.server.address() as AddressInfo).port}`;
  vasp = await startFakeVasp();
  p = await t.createPlatform();
  expect((await p.api.patch('/config', { umaDomain: domain })).status).toBe(200);
  bob = await newCustomer(p, 'Bob Ode');
  receiverAddress = `$bob@${domain}`;
  expect((await p.api.patch(`/customers/${bob.id}`, { customerType: 'INDIVIDUAL', umaAddress: receiverAddress })).status).toBe(200);
});
afterAll(async () => {
  await t.close();
  await vasp.close();
});

describe('lnurlp requests from another VASP', () => {
  it('answers a genuine request with a response the UMA SDK verifies against our published key', async () => {
    const url = await getSignedLnurlpRequestUrl({ isSubjectToTravelRule: true, receiverAddress, senderVaspDomain: vasp.domain, signingPrivateKey: vasp.privateKey });
    const res = await http(`${url.pathname}${url.search}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const response = LnurlpResponse.parse(res.body);
    expect(response.isUma()).toBe(true);
    expect(response.callback).toBe(`http://${domain}/uma/payreq/%24bob`);
    expect(response.currencies!.map((c) => c.code)).toEqual(['USD', 'EUR', 'MXN']);
    expect(response.payerData).toMatchObject({ identifier: { mandatory: true }, compliance: { mandatory: true } });
    const keys = await fetchPublicKeyForVasp({ cache: new InMemoryPublicKeyCache(), vaspDomain: domain });
    expect(await verifyUmaLnurlpResponseSignature(response, keys, new InMemoryNonceValidator(0))).toBe(true);
    // The same signed request again is a replay.
    const replay = await http(`${url.pathname}${url.search}`);
    expect(replay).toEqual({ status: 400, body: { status: 'ERROR', reason: expect.any(String), code: 'INVALID_NONCE' } });
  });

  it('refuses tampered, foreign-signed, stale and future-dated requests', async () => {
    const genuine = await signedLnurlp();
    const tampered = genuine.replace(/signature=([0-9a-f]{10})/, (_, hex: string) => `signature=${hex.slice(0, 9)}${hex[9] === '0' ? '1' : '0'}`);
    expect(await http(tampered)).toMatchObject({ status: 401, body: { code: 'INVALID_SIGNATURE' } });
    expect(await http(await signedLnurlp({}, umaKeyPair().privateKey))).toMatchObject({ status: 401, body: { code: 'INVALID_SIGNATURE' } });
    expect(await http(await signedLnurlp({ timestamp: new Date(Date.now() - 10 * 60_000) }))).toMatchObject({ status: 400, body: { code: 'INVALID_TIMESTAMP' } });
    expect(await http(await signedLnurlp({ timestamp: new Date(Date.now() + 10 * 60_000) }))).toMatchObject({ status: 400, body: { code: 'INVALID_TIMESTAMP' } });
  });

  it('answers the protocol\'s errors: unsupported version, plain LNURL, unknown user, unreachable sender keys', async () => {
    const v9 = await http(await signedLnurlp({ umaVersion: '9.0' }));
    expect(v9).toMatchObject({ status: 412, body: { code: 'UNSUPPORTED_UMA_VERSION', supportedMajorVersions: expect.arrayContaining([1]) } });
    expect(await http('/.well-known/lnurlp/$bob')).toMatchObject({ status: 403, body: { code: 'NON_UMA_LNURL_NOT_SUPPORTED' } });
    const nobody = (await signedLnurlp({ receiverAddress: `$nobody@${domain}` })).replace('$bob', '$nobody');
    expect(await http(nobody)).toMatchObject({ status: 404, body: { code: 'USER_NOT_FOUND' } });
    // Why the keys could not be fetched (refused, unresolvable, a private address) is not told to an unauthenticated caller.
    const unreachable = await http(await signedLnurlp({ vaspDomain: '127.0.0.1:1' }));
    expect(unreachable).toMatchObject({ status: 424, body: { code: 'COUNTERPARTY_PUBKEY_FETCH_ERROR', reason: 'the public keys of 127.0.0.1:1 could not be fetched' } });
    // A port no URL can hold is no domain at all, answered as such rather than as a server error.
    expect(await http(await signedLnurlp({ vaspDomain: 'c.com:99999' }))).toMatchObject({ status: 424, body: { code: 'COUNTERPARTY_PUBKEY_FETCH_ERROR' } });
  });
});

describe('pay requests and settlement from another VASP', () => {
  let invoice: string;

  it('issues a signed invoice for exactly the requested amount', async () => {
    const res = await post('/uma/payreq/$bob', await payRequest());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const response = PayReqResponse.parse(res.body);
    expect(response.converted).toMatchObject({ amount: 1_500, currencyCode: 'USD', decimals: 2, fee: 0 });
    expect(response.payeeData).toMatchObject({ identifier: receiverAddress, name: 'Bob Ode' });
    const keys = await fetchPublicKeyForVasp({ cache: new InMemoryPublicKeyCache(), vaspDomain: domain });
    expect(await verifyPayReqResponseSignature(response, `$mallory@${vasp.domain}`, receiverAddress, keys, new InMemoryNonceValidator(0))).toBe(true);
    expect(parseInvoice(response.pr)).toEqual({ paymentHash: expect.stringMatching(/^[0-9a-f]{64}$/), amountMsats: expect.any(Number) });
    invoice = response.pr;
  });

  it('refuses replayed, forged and unacceptable pay requests', async () => {
    const body = await payRequest();
    expect((await post('/uma/payreq/$bob', body)).status).toBe(200);
    expect(await post('/uma/payreq/$bob', body)).toMatchObject({ status: 400, body: { code: 'INVALID_NONCE' } });
    expect(await post('/uma/payreq/$bob', await payRequest({ key: umaKeyPair().privateKey }))).toMatchObject({ status: 401, body: { code: 'INVALID_SIGNATURE' } });
    expect(await post('/uma/payreq/$bob', await payRequest({ amount: 5 }))).toMatchObject({ status: 400, body: { code: 'AMOUNT_OUT_OF_RANGE' } });
    expect(await post('/uma/payreq/$bob', await payRequest({ currency: 'GBP' }))).toMatchObject({ status: 400, body: { code: 'INVALID_CURRENCY' } });
    // A body that is not JSON at all is refused in the protocol's error shape too.
    expect(await post('/uma/payreq/$bob', '{not json')).toMatchObject({ status: 400, body: { status: 'ERROR', code: 'PARSE_PAYREQ_REQUEST_ERROR', reason: expect.any(String) } });
    expect(await post('/uma/settle', '{not json')).toMatchObject({ status: 400, body: { status: 'ERROR', code: 'INVALID_REQUEST_FORMAT' } });
    expect(await post('/uma/payreq/$bob', { amount: 'lots' })).toMatchObject({ status: 400, body: { code: 'PARSE_PAYREQ_REQUEST_ERROR' } });
    expect(await post('/uma/payreq/$nobody', await payRequest())).toMatchObject({ status: 404, body: { code: 'USER_NOT_FOUND' } });
  });

  it('refuses a pay request without the payer data the receiver requires', async () => {
    const config = (await p.api.get('/config')).body;
    const supportedCurrencies = config.supportedCurrencies.map((c: any) => ({
      currencyCode: c.currencyCode,
      minAmount: c.minAmount,
      maxAmount: c.maxAmount,
      enabledTransactionTypes: c.enabledTransactionTypes,
      requiredCounterpartyFields: c.currencyCode === 'MXN' ? [{ name: 'BIRTH_DATE', mandatory: true }] : [],
    }));
    expect((await p.api.patch('/config', { supportedCurrencies })).status).toBe(200);
    const refused = await post('/uma/payreq/$bob', await payRequest({ currency: 'MXN', amount: 20_000 }));
    expect(refused).toMatchObject({ status: 400, body: { code: 'MISSING_MANDATORY_PAYER_DATA', missingFields: ['BIRTH_DATE'] } });
    const given = await post('/uma/payreq/$bob', await payRequest({ currency: 'MXN', amount: 20_000, payerData: { birthDate: '1980-02-03' } }));
    expect(given.status).toBe(200);
  });

  it('offers and accepts no more than an invoice holds exactly in millisatoshis', async () => {
    const original = (await p.api.get('/config')).body.supportedCurrencies;
    const raised = original.map((c: any) => ({ ...c, ...(c.currencyCode === 'USD' && { maxAmount: 9_000_000_000_000_000 }) }));
    expect((await p.api.patch('/config', { supportedCurrencies: raised })).status).toBe(200);
    try {
      expect(await post('/uma/payreq/$bob', await payRequest({ amount: 9_000_000_000_000_000 }))).toMatchObject({ status: 400, body: { code: 'AMOUNT_OUT_OF_RANGE' } });
      const lnurlp = await http(await signedLnurlp());
      expect(lnurlp.status, JSON.stringify(lnurlp.body)).toBe(200);
      const usd = lnurlp.body.currencies.find((c: any) => c.code === 'USD');
      expect(usd.convertible.max).toBeLessThan(9_000_000_000_000_000);
      expect(usd.convertible.max * usd.multiplier).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
      const largest = await post('/uma/payreq/$bob', await payRequest({ amount: Math.floor(Number.MAX_SAFE_INTEGER / 20_000) }));
      expect(largest.status, JSON.stringify(largest.body)).toBe(200);
      expect(parseInvoice(largest.body.pr)!.amountMsats).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    } finally {
      expect((await p.api.patch('/config', { supportedCurrencies: original })).status).toBe(200);
    }
  });

  it('settles the invoice once: a signed SETTLED with the preimage, the customer credited once', async () => {
    const first = await post('/uma/settle', await settleBody(invoice));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ status: 'SETTLED', preimage: expect.any(String) });
    const { paymentHash } = parseInvoice(invoice)!;
    expect(preimageMatches(first.body.preimage, paymentHash)).toBe(true);
    const keys = (await http('/.well-known/lnurlpubkey')).body;
    const payload = settleStatusPayload(paymentHash, 'SETTLED', first.body.preimage, first.body.signatureNonce, first.body.signatureTimestamp);
    expect(verifyUmaSignature(payload, first.body.signature, Buffer.from(keys.signingPubKey, 'hex'))).toBe(true);
    const again = await post('/uma/settle', await settleBody(invoice));
    expect(again.body.status).toBe('SETTLED');
    expect((await balances(t, bob.accounts.USD)).available).toBe(1_500);
    const incoming = (await p.api.get('/transactions', { customerId: bob.id, type: 'INCOMING' })).body.data;
    expect(incoming).toHaveLength(1);
    expect(incoming[0]).toMatchObject({ status: 'COMPLETED', source: { umaAddress: `$mallory@${vasp.domain}` }, counterpartyInformation: { FULL_NAME: 'Mallory Sender' } });
    await expectLedgerClean(t, p.platform.id);
  });

  it('forwards a settled payment to the defaultUmaDepositAccount even when the first settle call fails as the forward is scheduled', async () => {
    const dana = await newCustomer(p, 'Dana Deposit');
    expect((await p.api.patch(`/customers/${dana.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$dana@${domain}` })).status).toBe(200);
    const bank = await p.api.post('/customers/external-accounts', {
      customerId: dana.id,
      currency: 'USD',
      defaultUmaDepositAccount: true,
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '555000031', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Dana Deposit' } },
    });
    expect(bank.status, JSON.stringify(bank.body)).toBe(201);
    const pr = PayReqResponse.parse((await post('/uma/payreq/$dana', await payRequest())).body).pr;
    // The database refuses the first forward job, as a kill right after the credit would.
    const { db } = t.corridor.database;
    const drop = await failOnce(db, 'jobs', 'insert', `new.kind = 'uma.forward-deposit'`);
    try {
      await post('/uma/settle', await settleBody(pr));
    } finally {
      await drop();
    }
    expect((await post('/uma/settle', await settleBody(pr))).body.status).toBe('SETTLED');
    await t.corridor.services.jobs.runDue(p.platform.id);
    const forwards = (await p.api.get('/transactions', { customerId: dana.id, type: 'OUTGOING' })).body.data;
    expect(forwards).toHaveLength(1);
    expect(forwards[0]).toMatchObject({ destination: { accountId: bank.body.id }, receivedAmount: { amount: 1_500 } });
  });

  it('refuses replayed, forged, misdirected and unknown settlements', async () => {
    const body = await settleBody(invoice);
    expect((await post('/uma/settle', body)).status).toBe(200);
    expect(await post('/uma/settle', body)).toMatchObject({ status: 400, body: { code: 'INVALID_NONCE' } });
    expect(await post('/uma/settle', await settleBody(invoice, { key: umaKeyPair().privateKey }))).toMatchObject({ status: 401, body: { code: 'INVALID_SIGNATURE' } });
    expect(await post('/uma/settle', await settleBody(invoice, { timestampSec: Math.floor(Date.now() / 1000) - 3600 }))).toMatchObject({ status: 400, body: { code: 'INVALID_TIMESTAMP' } });
    expect(await post('/uma/settle', await settleBody(invoice, { vaspDomain: 'other.example' }))).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    const stranger = invoice.replace(/pp5(.)/, (_, c: string) => `pp5${c === 'q' ? 'p' : 'q'}`);
    expect(await post('/uma/settle', await settleBody(stranger))).toMatchObject({ status: expect.any(Number), body: { code: expect.stringMatching(/REQUEST_NOT_FOUND|INVALID_INVOICE/) } });
    expect(await post('/uma/settle', await settleBody('lnbc1garbage'))).toMatchObject({ status: 400, body: { code: 'INVALID_INVOICE' } });
    expect(await post('/uma/settle', { invoice })).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST_FORMAT' } });
  });

  it('fails an invoice paid after it expired, and credits nothing', async () => {
    const res = await post('/uma/payreq/$bob', await payRequest({ amount: 700 }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { paymentHash } = parseInvoice(res.body.pr)!;
    await t.corridor.database.db.updateTable('uma_invoices').set({ expires_at: new Date(Date.now() - 1000) }).where('payment_hash', '=', paymentHash).execute();
    const settled = await post('/uma/settle', await settleBody(res.body.pr));
    expect(settled.body).toMatchObject({ status: 'FAILED', reason: 'INVOICE_EXPIRED' });
    expect((await balances(t, bob.accounts.USD)).available).toBe(1_500);
  });

  it('credits an invoice and marks it accepted in one commit: never cancelled at expiry with the customer credited', async () => {
    const { db } = t.corridor.database;
    const before = (await balances(t, bob.accounts.USD)).available;
    const pr = PayReqResponse.parse((await post('/uma/payreq/$bob', await payRequest({ amount: 900 }))).body).pr;
    const { paymentHash } = parseInvoice(pr)!;
    const drop = await failOnce(db, 'uma_invoices', 'update', `new.status = 'ACCEPTED'`);
    try {
      expect((await post('/uma/settle', await settleBody(pr))).status).toBe(500);
    } finally {
      await drop();
    }
    const row = () => db.selectFrom('uma_invoices').select(['status', 'transaction_id']).where('payment_hash', '=', paymentHash).executeTakeFirstOrThrow();
    expect((await row()).status).toBe('OPEN');
    expect((await p.api.get(`/transactions/${(await row()).transaction_id}`)).status).toBe(404);
    expect((await balances(t, bob.accounts.USD)).available).toBe(before);

    expect((await post('/uma/settle', await settleBody(pr))).body.status).toBe('SETTLED');
    expect((await balances(t, bob.accounts.USD)).available).toBe(before + 900);
    // An invoice an earlier version left OPEN beside its completed payment is accepted, even past its expiry.
    await db.updateTable('uma_invoices').set({ status: 'OPEN', expires_at: new Date(Date.now() - 1000) }).where('payment_hash', '=', paymentHash).execute();
    expect((await post('/uma/settle', await settleBody(pr))).body).toMatchObject({ status: 'SETTLED' });
    expect((await row()).status).toBe('ACCEPTED');
    expect((await balances(t, bob.accounts.USD)).available).toBe(before + 900);
    await expectLedgerClean(t, p.platform.id);
  });
});
