import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, balances, expectError, fund, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';
import { lnurlpRequestPath, startFakeVasp, type FakeVasp } from '../../../test/support/uma-vasp.js';
import { closingClientsOpen } from '../../core/outbound.js';
import { callCounterparty, createCallSlots } from './counterparty.js';

/**
 * UMA_COUNTERPARTY_CONCURRENCY: counterparty calls in flight in one process are bounded, across
 * all domains (the per-domain single flight and failure memory do nothing against a flood naming
 * many domains). Unsolicited messages (anyone may send them to the protocol endpoints) get at
 * most half of the slots; a call over the cap fails at once as an unreachable counterparty
 * would, without a connection.
 *
 * A stalled call holds its slot until the test ends the stall (`endStalls`): the counterparty
 * timeout is far longer than any test waits, so no slot frees up while a test is not looking,
 * however slow the machine.
 */
const CONCURRENCY = 4; // two slots for unsolicited messages
const TIMEOUT_MS = 60_000;
let t: TestApp;
let p: TestPlatform;
let alice: TestCustomer;
let receiving: TestPlatform;
let receivingDomain: string;
let carolId: string;
let port: number;
let domain: string;
const vasps: FakeVasp[] = [];

const http = (path: string) => fetch(`http://${domain}${path}`).then(async (r) => ({ status: r.status, body: await r.json() }));

/** A loopback counterparty on a domain of its own that answers every call with headers, then stalls. */
async function staller(): Promise<FakeVasp> {
  const vasp = await startFakeVasp();
  vasp.handle(() => ({ stall: true }));
  vasps.push(vasp);
  return vasp;
}

/** Waits for something the test is waiting on to happen; the deadline only catches hangs. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The promise, and whether it has settled yet. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const done = promise.finally(() => void (settled = true));
  return { promise: done, settled: () => settled };
}

const lookup = (address: string) => p.api.get(`/receiver/uma/${encodeURIComponent(address)}`, { customerId: alice.id });

beforeAll(async () => {
  t = await startTestApp({ umaCounterpartyConcurrency: CONCURRENCY, umaCounterpartyTimeoutMs: TIMEOUT_MS });
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.corridor.app.server.address() as AddressInfo).port;
  domain = `127.0.0.1:${port}`;
  p = await t.createPlatform();
  expect((await p.api.patch('/config', { umaDomain: domain })).status).toBe(200);
  const bob = await newCustomer(p, 'Bob Ode');
  expect((await p.api.patch(`/customers/${bob.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$bob@${domain}` })).status).toBe(200);
  alice = await newCustomer(p, 'Alice Ng');
  // A receiver for payments: another platform of this server, on another domain, paying at once
  // (no webhook). Made before any protocol request, so that the first one finds its domain.
  receiving = await t.createPlatform({ name: 'Receiving platform' });
  receivingDomain = `localhost:${port}`;
  expect((await receiving.api.patch('/config', { umaDomain: receivingDomain })).status).toBe(200);
  const carol = await receiving.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Carol Tan', umaAddress: `$carol@${receivingDomain}` });
  expect(carol.status, JSON.stringify(carol.body)).toBe(201);
  carolId = carol.body.id;
});
afterAll(async () => {
  await t.close();
  for (const vasp of vasps) await vasp.close();
});

describe('counterparty calls in flight', () => {
  it('are capped across domains: unsolicited ones at half, the platform keeps the rest, and a call over the cap opens no connection', async () => {
    const senders = await Promise.all(Array.from({ length: 5 }, staller));
    const receivers = await Promise.all(Array.from({ length: 3 }, staller));
    const connections = (group: FakeVasp[]) => group.reduce((n, v) => n + v.connections, 0);
    let stallsEnded = false;
    const endStalls = () => {
      stallsEnded = true;
      for (const vasp of [...senders, ...receivers]) vasp.endStalls();
    };

    // Five lnurlp requests, each naming another stalling domain: two key fetches go out and hold
    // their slots; the other three are refused at once, as a domain whose keys are unreachable.
    const answered: Array<{ sender: FakeVasp; answer: { status: number; body: any }; whileStalled: boolean }> = [];
    const flood = senders.map(async (sender) => {
      const entry = { sender, answer: await http(await lnurlpRequestPath(sender, `$bob@${domain}`)), whileStalled: !stallsEnded };
      answered.push(entry);
      return entry;
    });
    for (const f of flood) f.catch(() => {}); // awaited below; a failed test must not leave them unhandled
    // Each request connects (its key fetch holds a slot until the stalls end) or is answered.
    await until(() => connections(senders) + answered.length === senders.length, 'each lnurlp request to connect or be answered');
    expect(connections(senders)).toBe(2);
    const refused = [...answered];
    expect(refused).toHaveLength(3);
    for (const { answer, whileStalled } of refused) {
      expect(answer).toEqual({ status: 424, body: { status: 'ERROR', code: 'COUNTERPARTY_PUBKEY_FETCH_ERROR', reason: expect.stringContaining('could not be fetched') } });
      // Answered while the two stalled fetches still held their slots: refused, not queued.
      expect(whileStalled).toBe(true);
    }
    expect(connections(senders)).toBe(2);
    for (const { sender } of refused) expect(sender.connections).toBe(0);

    // The platform's own lookups still go out on the other half of the slots...
    const lookups = [tracked(lookup(`$rita@${receivers[0].domain}`)), tracked(lookup(`$rita@${receivers[1].domain}`))];
    await until(() => receivers[0].connections === 1 && receivers[1].connections === 1, 'two lookups to connect');
    // ...until the process has CONCURRENCY calls in flight: the next one fails at once, unsent.
    const refusedLookup = await lookup(`$rita@${receivers[2].domain}`);
    expectError(refusedLookup, 424, 'LNURLP_REQUEST_FAILED');
    expect(refusedLookup.body.message).toContain('too many calls to other UMA providers in flight (UMA_COUNTERPARTY_CONCURRENCY)');
    // At once: the four calls in flight still hold their slots (nothing ends them but the test).
    expect(lookups.map((l) => l.settled())).toEqual([false, false]);
    expect(receivers[2].connections).toBe(0);

    // The stalled calls end (here because the counterparties close them) and give their slots back.
    endStalls();
    for (const f of await Promise.all(flood)) expect(f.answer.status).toBe(424);
    for (const r of await Promise.all(lookups.map((l) => l.promise))) expectError(r, 424, 'LNURLP_REQUEST_FAILED');
    expect(t.logs.some((line) => line.includes('UMA counterparty calls refused'))).toBe(true);

    // A refusal for want of a slot is not remembered as the domain's failure: a refused sender
    // that answers is asked at once, and its request goes through.
    const { sender } = refused[0];
    sender.handle(() => undefined); // publishes its keys
    const retried = await http(await lnurlpRequestPath(sender, `$bob@${domain}`));
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(sender.connections).toBe(1);
  });
});

describe('a payment whose pay request finds no slot', () => {
  it('is not failed: it stays PROCESSING with its funds held, and is sent, once, when a slot is free', async () => {
    const address = `$carol@${receivingDomain}`;
    const incoming = async () => (await receiving.api.get('/transactions', { customerId: carolId, type: 'INCOMING' })).body.data;
    await fund(p, alice.accounts.USD, 1_000_000);
    const found = await lookup(address);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const quote = await p.api.post('/quotes', {
      lookupId: found.body.lookupId,
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: address, currency: 'EUR' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    expect(quote.status, JSON.stringify(quote.body)).toBe(201);
    const status = async () => (await p.api.get(`/quotes/${quote.body.id}`)).body.status;

    // Every slot is held by a stalled lookup.
    const stalled = await Promise.all(Array.from({ length: CONCURRENCY }, staller));
    const lookups = stalled.map((vasp) => lookup(`$rita@${vasp.domain}`));
    await until(() => stalled.every((vasp) => vasp.connections === 1), 'every slot to be held');

    const before = await balances(t, alice.accounts.USD);
    const executed = await p.api.post(`/quotes/${quote.body.id}/execute`);
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body.status).toBe('PROCESSING');
    expect((await p.api.get(`/transactions/${quote.body.transactionId}`)).body.status).toBe('PROCESSING');
    expect((await balances(t, alice.accounts.USD)).available).toBe(before.available - 10_000); // held
    expect(await incoming()).toEqual([]);
    expect(t.logs.some((line) => line.includes('UMA pay request not sent'))).toBe(true);

    // Still no slot when the quote's recovery job runs: the job fails, to be retried; the payment waits.
    await advance(p, 3 * 60);
    expect(await status()).toBe('PROCESSING');
    expect(await incoming()).toEqual([]);

    // The slots free up: the job's retry sends the pay request and the payment completes, once.
    for (const vasp of stalled) vasp.endStalls();
    for (const r of await Promise.all(lookups)) expectError(r, 424, 'LNURLP_REQUEST_FAILED');
    await advance(p, 60);
    expect(await status()).toBe('COMPLETED');
    const received = await incoming();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ status: 'COMPLETED', receivedAmount: { amount: quote.body.totalReceivingAmount, currency: { code: 'EUR' } } });
    expect(await balances(t, alice.accounts.USD)).toEqual({ available: before.available - 10_000, posted: before.posted - 10_000 });
    await advance(p, 60 * 60); // nothing left to send it again
    expect(await incoming()).toHaveLength(1);
  });
});

describe('a counterparty call', () => {
  it('closes its connection with the answer, so that the slots bound the sockets too', async () => {
    // A counterparty that asks for its connections to be kept for ten minutes.
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'keep-alive': 'timeout=600' });
      response.end('{}');
    });
    server.keepAliveTimeout = 600_000;
    let open = 0;
    server.on('connection', (socket) => {
      open++;
      socket.on('close', () => open--);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const slots = createCallSlots(CONCURRENCY);
      for (const path of ['/a', '/b', '/c']) {
        expect((await callCounterparty(`${origin}${path}`, { method: 'GET' }, { allowPrivate: true, slots })).status).toBe(200);
      }
      expect(slots.stats().inFlight).toBe(0);
      await until(() => open === 0, 'the connections to close');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('counterparty calls to many origins', () => {
  it('keep nothing per origin once they end: answered, refused, or cut off for size', async () => {
    const server = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(request.url === '/large' ? `"${'x'.repeat(300 * 1024)}"` : '{}');
    });
    // Every 127.x.y.z address reaches a server listening on all of them: one origin per address.
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const refused = createServer();
    await new Promise<void>((resolve) => refused.listen(0, '127.0.0.1', resolve));
    const refusedPort = (refused.address() as AddressInfo).port;
    await new Promise<void>((resolve) => refused.close(() => resolve()));
    try {
      const live = (server.address() as AddressInfo).port;
      const slots = createCallSlots(CONCURRENCY);
      const call = (url: string) => callCounterparty(url, { method: 'GET' }, { allowPrivate: true, slots });
      for (let i = 1; i <= 5; i++) expect((await call(`http://127.0.0.${i}:${live}/`)).status).toBe(200);
      await expect(call(`http://127.0.0.9:${live}/large`)).rejects.toThrow();
      await expect(call(`http://127.0.0.1:${refusedPort}/`)).rejects.toThrow();
      await until(() => closingClientsOpen() === 0, "every call's client to close");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('createCallSlots', () => {
  it('gives unsolicited calls half the slots (rounded up) and own calls all of them; a release counts once', () => {
    const slots = createCallSlots(5);
    const unsolicited = [slots.take('unsolicited'), slots.take('unsolicited'), slots.take('unsolicited')];
    expect(unsolicited.every(Boolean)).toBe(true);
    expect(slots.take('unsolicited')).toBeUndefined();
    const own = [slots.take('own'), slots.take('own')];
    expect(own.every(Boolean)).toBe(true);
    expect(slots.take('own')).toBeUndefined();
    unsolicited[0]!();
    unsolicited[0]!(); // twice: still one slot
    expect(slots.stats()).toEqual({ inFlight: 4, unsolicited: 2, refused: 2 });
    expect(slots.take('own')).toBeDefined();
    expect(slots.take('own')).toBeUndefined();
  });
});
