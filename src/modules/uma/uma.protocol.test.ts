import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PubKeyResponse } from '@uma-sdk/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { balances, expectError, expectLedgerClean, fund, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

/**
 * The UMA protocol end to end between two Corridor instances on loopback: instance A's platform
 * pays customers of platforms on instance B (each with its own UMA domain: B serves two).
 */
let a: TestApp;
let b: TestApp;
let sender: TestPlatform;
let receiver: TestPlatform;
let direct: TestPlatform;
let hooksA: WebhookReceiver;
let hooksB: WebhookReceiver;
let alice: TestCustomer;
let bob: TestCustomer;
let carol: TestCustomer;
let domainA: string;
let domainB: string;
let directDomain: string;

async function listen(t: TestApp): Promise<number> {
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  t.corridor.startWorkers();
  return (t.corridor.app.server.address() as AddressInfo).port;
}

/** A GET with a Host header of our choosing (fetch always sends the URL's host). */
function getWithHost(address: string, path: string, host: string): Promise<{ status: number; body: any }> {
  const [hostname, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port: Number(port), path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const lookup = (address: string, query: Record<string, string> = { customerId: alice.id }) =>
  sender.api.get(`/receiver/uma/${encodeURIComponent(address)}`, query);

async function quoteTo(address: string, body: Record<string, unknown>) {
  const found = await lookup(address);
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  const res = await sender.api.post('/quotes', {
    lookupId: found.body.lookupId,
    source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: address },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000,
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function settlementPosted(t: TestApp, platformId: string, currency: string): Promise<number> {
  const id = await t.corridor.services.ledger.systemAccount(platformId, currency, 'UMA_SETTLEMENT');
  const rows = await t.corridor.database.db.selectFrom('ledger_transfers').selectAll().where('state', '=', 'POSTED').execute();
  return rows.reduce((sum, r) => sum + (r.credit_account_id === id ? r.amount : 0) - (r.debit_account_id === id ? r.amount : 0), 0);
}

/** The incoming transaction on B that a quote of A produced (found by the sender's address and amount). */
async function incomingFor(platform: TestPlatform, customerId: string) {
  return (await platform.api.get('/transactions', { customerId, type: 'INCOMING' })).body.data;
}

const eventsOf = (hooks: WebhookReceiver, transactionId: string) => hooks.requests.filter((r) => r.json?.data?.id === transactionId).map((r) => r.json);

beforeAll(async () => {
  [a, b] = await Promise.all([startTestApp(), startTestApp()]);
  const [portA, portB] = [await listen(a), await listen(b)];
  domainA = `127.0.0.1:${portA}`;
  domainB = `127.0.0.1:${portB}`;
  directDomain = `localhost:${portB}`;
  [hooksA, hooksB] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  sender = await a.createPlatform({ name: 'Sending VASP' });
  receiver = await b.createPlatform({ name: 'Receiving VASP' });
  direct = await b.createPlatform({ name: 'Second platform on B' });
  expect((await sender.api.patch('/config', { umaDomain: domainA, webhookEndpoint: hooksA.url })).status).toBe(200);
  expect((await receiver.api.patch('/config', { umaDomain: domainB, webhookEndpoint: hooksB.url })).status).toBe(200);
  expect((await direct.api.patch('/config', { umaDomain: directDomain })).status).toBe(200);
  hooksB.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? { status: 200, body: {} } : { status: 200 }));
  alice = await newCustomer(sender, 'Alice Ng');
  await fund(sender, alice.accounts.USD, 10_000_000);
  const created = await Promise.all([
    receiver.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Bob Ode', umaAddress: `$bob@${domainB}` }),
    direct.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Carol Tan', umaAddress: `$carol@${directDomain}` }),
  ]);
  for (const c of created) expect(c.status, JSON.stringify(c.body)).toBe(201);
  const accountsOf = async (p: TestPlatform, id: string) => {
    const list = (await p.api.get('/customers/internal-accounts', { customerId: id })).body.data;
    return Object.fromEntries(list.filter((x: any) => x.type !== 'EMBEDDED_WALLET').map((x: any) => [x.balance.currency.code, x.id]));
  };
  bob = { id: created[0].body.id, platformCustomerId: created[0].body.platformCustomerId, accounts: await accountsOf(receiver, created[0].body.id) };
  carol = { id: created[1].body.id, platformCustomerId: created[1].body.platformCustomerId, accounts: await accountsOf(direct, created[1].body.id) };
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await Promise.all([hooksA?.close(), hooksB?.close()]);
});

describe('UMA between two Corridor instances', () => {
  it('serves each platform\'s keys on its own domain as a certificate chain the UMA SDK reads', async () => {
    const [forB, forDirect] = await Promise.all([
      fetch(`http://${domainB}/.well-known/lnurlpubkey`).then((r) => r.text()),
      fetch(`http://${directDomain}/.well-known/lnurlpubkey`).then((r) => r.text()),
    ]);
    const keys = PubKeyResponse.fromJson(forB);
    expect(Buffer.from(keys.getSigningPubKey()).toString('hex')).toBe(JSON.parse(forB).signingPubKey);
    expect(JSON.parse(forB).signingPubKey).not.toBe(JSON.parse(forDirect).signingPubKey);
    const unknown = await getWithHost(domainB, '/.well-known/lnurlpubkey', 'nobody.example');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: 'ERROR', code: 'USER_NOT_FOUND' });
  });

  it('looks the receiver up over the protocol: its currencies, limits and the payer data it requires', async () => {
    const res = await lookup(`$carol@${directDomain}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.receiverUmaAddress).toBe(`$carol@${directDomain}`);
    expect(res.body.supportedCurrencies.map((c: any) => c.currency.code)).toEqual(['USD', 'EUR', 'MXN']);
    expect(res.body.supportedCurrencies[1]).toMatchObject({ min: 100, max: 100_000_000, estimatedExchangeRate: expect.any(Number) });
    expect(res.body.requiredPayerDataFields).toEqual([]);
    const providers = (await sender.api.get('/uma-providers')).body.data.map((p: any) => p.domain);
    expect(providers).toContain(directDomain);
  });

  it('pays at once when the receiving platform has no approval webhook: both ledgers record it', async () => {
    const q = await quoteTo(`$carol@${directDomain}`, { destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$carol@${directDomain}`, currency: 'EUR' } });
    const executed = await sender.api.post(`/quotes/${q.id}/execute`);
    expect(executed.body.status, JSON.stringify(executed.body)).toBe('COMPLETED');
    const [incoming] = await incomingFor(direct, carol.id);
    expect(incoming).toMatchObject({
      status: 'COMPLETED',
      source: { sourceType: 'UMA_ADDRESS', umaAddress: expect.stringMatching(new RegExp(`@${domainA.replace(/\./g, '\\.')}$`)) },
      receivedAmount: { amount: q.totalReceivingAmount, currency: { code: 'EUR' } },
    });
    // The receiving platform asks for no payer data, so none of Alice's is sent.
    expect(incoming.counterpartyInformation ?? {}).toEqual({});
    expect((await balances(b, carol.accounts.EUR)).available).toBe(q.totalReceivingAmount);
    expect(await settlementPosted(a, sender.platform.id, 'EUR')).toBe(q.totalReceivingAmount);
    expect(await settlementPosted(b, direct.platform.id, 'EUR')).toBe(-q.totalReceivingAmount);
    expect((await direct.api.get('/uma-providers')).body.data.map((p: any) => p.domain)).toContain(domainA);
  });

  it('waits for the receiving platform\'s approval, then completes on both sides with matching webhooks', async () => {
    const q = await quoteTo(`$bob@${domainB}`, {
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$bob@${domainB}`, currency: 'MXN' },
      lockedCurrencySide: 'RECEIVING',
      lockedCurrencyAmount: 50_000,
    });
    expect(q.totalReceivingAmount).toBe(50_000);
    const executed = await sender.api.post(`/quotes/${q.id}/execute`);
    expect(executed.body.status).toBe('PROCESSING');
    const done = await until(() => sender.api.get(`/quotes/${q.id}`), (r) => r.body.status !== 'PROCESSING');
    expect(done.body.status).toBe('COMPLETED');
    const [incoming] = await incomingFor(receiver, bob.id);
    expect(incoming).toMatchObject({ status: 'COMPLETED', receivedAmount: { amount: 50_000, currency: { code: 'MXN' } } });
    expect((await balances(b, bob.accounts.MXN)).available).toBe(50_000);
    expect(await settlementPosted(a, sender.platform.id, 'MXN')).toBe(50_000);
    expect(await settlementPosted(b, receiver.platform.id, 'MXN')).toBe(-50_000);

    const outgoingEvents = await until(async () => eventsOf(hooksA, q.transactionId), (e) => e.some((x) => x.type === 'OUTGOING_PAYMENT.COMPLETED'));
    const incomingEvents = await until(async () => eventsOf(hooksB, incoming.id), (e) => e.some((x) => x.type === 'INCOMING_PAYMENT.COMPLETED'));
    expect(incomingEvents.map((e) => e.type)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
    const sent = outgoingEvents.find((e) => e.type === 'OUTGOING_PAYMENT.COMPLETED')!.data;
    const received = incomingEvents.find((e) => e.type === 'INCOMING_PAYMENT.COMPLETED')!.data;
    expect(sent.receivedAmount).toEqual(received.receivedAmount);
    expect(sent.destination.umaAddress).toBe(`$bob@${domainB}`);
  });

  it('a rejection by the receiving platform fails the payment and returns the funds; neither ledger keeps anything', async () => {
    hooksB.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? { status: 403, body: { reason: 'RESTRICTED' } } : { status: 200 }));
    const before = await balances(a, alice.accounts.USD);
    const settledBefore = await settlementPosted(b, receiver.platform.id, 'USD');
    const q = await quoteTo(`$bob@${domainB}`, { destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$bob@${domainB}`, currency: 'USD' } });
    await sender.api.post(`/quotes/${q.id}/execute`);
    const done = await until(() => sender.api.get(`/transactions/${q.transactionId}`), (r) => r.body.status !== 'PROCESSING');
    expect(done.body).toMatchObject({ status: 'FAILED', failureReason: 'LIGHTNING_PAYMENT_FAILED', failureDetail: 'PLATFORM_REJECTED' });
    expect(await balances(a, alice.accounts.USD)).toEqual(before);
    expect(await settlementPosted(b, receiver.platform.id, 'USD')).toBe(settledBefore);
    expect((await balances(b, bob.accounts.USD)).available).toBe(0);
    hooksB.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? { status: 200, body: {} } : { status: 200 }));
  });

  it('carries the payer data the receiver requires; a quote without the mandatory fields is a 400', async () => {
    const config = (await receiver.api.get('/config')).body;
    const supportedCurrencies = config.supportedCurrencies.map((c: any) => ({
      currencyCode: c.currencyCode,
      minAmount: c.minAmount,
      maxAmount: c.maxAmount,
      enabledTransactionTypes: c.enabledTransactionTypes,
      requiredCounterpartyFields: c.currencyCode === 'EUR' ? [{ name: 'COUNTRY_OF_RESIDENCE', mandatory: true }] : [],
    }));
    expect((await receiver.api.patch('/config', { supportedCurrencies })).status).toBe(200);
    const found = await lookup(`$bob@${domainB}`);
    expect(found.body.requiredPayerDataFields).toEqual([{ name: 'COUNTRY_OF_RESIDENCE', mandatory: true }]);
    const body = {
      lookupId: found.body.lookupId,
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$bob@${domainB}`, currency: 'EUR' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 5_000,
    };
    const missing = await sender.api.post('/quotes', body);
    expectError(missing, 400, 'MISSING_MANDATORY_USER_INFO');
    expect(missing.body.details.missingFields).toEqual(['COUNTRY_OF_RESIDENCE']);
    const q = await sender.api.post('/quotes', { ...body, senderCustomerInfo: { COUNTRY_OF_RESIDENCE: 'US' } });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    await sender.api.post(`/quotes/${q.body.id}/execute`);
    expect((await until(() => sender.api.get(`/quotes/${q.body.id}`), (r) => r.body.status !== 'PROCESSING')).body.status).toBe('COMPLETED');
    const eur = (await incomingFor(receiver, bob.id)).find((x: any) => x.receivedAmount.currency.code === 'EUR');
    // Exactly what the receiver asked for, though Corridor knows Alice's name, birth date and nationality.
    expect(eur.counterpartyInformation).toEqual({ COUNTRY_OF_RESIDENCE: 'US' });
  });

  it('refuses unknown receivers, unreachable domains and senders off the platform\'s domain', async () => {
    expectError(await lookup(`$nobody@${domainB}`), 404, 'USER_NOT_FOUND');
    const unreachable = await lookup('$bob@127.0.0.1:1');
    expectError(unreachable, 424, 'LNURLP_REQUEST_FAILED');
    const offDomain = await lookup(`$bob@${domainB}`, { senderUmaAddress: '$alice@elsewhere.example' });
    expectError(offDomain, 400, 'INVALID_UMA_ADDRESS');
    expect(offDomain.body.details.errors[0].field).toBe('querystring.senderUmaAddress');
  });

  it('keeps both ledgers balanced', async () => {
    await expectLedgerClean(a, sender.platform.id);
    await expectLedgerClean(b, receiver.platform.id);
    await expectLedgerClean(b, direct.platform.id);
  });
});
