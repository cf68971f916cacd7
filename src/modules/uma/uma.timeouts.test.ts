import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdableClock, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';
import { lnurlpRequestPath, startFakeVasp, type FakeVasp } from '../../../test/support/uma-vasp.js';
import { callCounterparty, CounterpartyError, FAILED_DOMAIN_MEMORY_MS } from './counterparty.js';

/**
 * Counterparties that answer the headers and then stall, or break off their answer: every call
 * to another VASP fails as the protocol's counterparty error, not as a 500, and a flood of
 * requests naming one failing domain costs one outbound call.
 */
const TIMEOUT_MS = 300;
const time = holdableClock();
let t: TestApp;
let p: TestPlatform;
let alice: TestCustomer;
let domain: string;
let staller: FakeVasp;

const http = (path: string) => fetch(`http://${domain}${path}`).then(async (r) => ({ status: r.status, body: await r.json() }));
const keyFetches = (vasp: FakeVasp) => vasp.requests.filter((r) => r.url.startsWith('/.well-known/lnurlpubkey')).length;
const errorLines = () => t.logs.filter((line) => JSON.parse(line).level >= 50);

beforeAll(async () => {
  t = await startTestApp({ umaCounterpartyTimeoutMs: TIMEOUT_MS }, { clock: time.clock });
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  domain = `127.0.0.1:${(t.corridor.app.server.address() as AddressInfo).port}`;
  p = await t.createPlatform();
  expect((await p.api.patch('/config', { umaDomain: domain })).status).toBe(200);
  const bob = await newCustomer(p, 'Bob Ode');
  expect((await p.api.patch(`/customers/${bob.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$bob@${domain}` })).status).toBe(200);
  alice = await newCustomer(p, 'Alice Ng');
  staller = await startFakeVasp();
  staller.handle(() => ({ stall: true }));
});
afterAll(async () => {
  await t.close();
  await staller.close();
});

describe('a counterparty call', () => {
  it('that stalls after the headers times out as a CounterpartyError', async () => {
    const url = `http://${staller.domain}/.well-known/lnurlpubkey`;
    const call = callCounterparty(url, { method: 'GET' }, { allowPrivate: true, timeoutMs: TIMEOUT_MS });
    await expect(call).rejects.toThrow(CounterpartyError);
    await expect(call).rejects.toThrow(`${staller.domain} timed out`);
  });

  it('whose answer is larger than 256 KiB is a CounterpartyError with its status', async () => {
    const talker = await startFakeVasp();
    try {
      talker.handle(() => ({ status: 200, body: { padding: 'x'.repeat(300 * 1024) } }));
      const call = callCounterparty(`http://${talker.domain}/anything`, { method: 'GET' }, { allowPrivate: true, timeoutMs: 10_000 });
      await expect(call).rejects.toThrow(CounterpartyError);
      await expect(call).rejects.toMatchObject({ message: 'the answer is larger than 262144 bytes', status: 200 });
    } finally {
      await talker.close();
    }
  });

  it('whose answer is cut off is a CounterpartyError', async () => {
    const breaker = await startFakeVasp();
    try {
      breaker.handle(() => ({ stall: true }));
      const call = callCounterparty(`http://${breaker.domain}/anything`, { method: 'GET' }, { allowPrivate: true, timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await breaker.close(); // drops the connection mid-answer
      await expect(call).rejects.toThrow(`${breaker.domain} broke off its answer`);
    } finally {
      await breaker.close().catch(() => undefined);
    }
  });
});

describe('an lnurlp request whose sender\'s keys stall mid-answer', () => {
  it('is 424 COUNTERPARTY_PUBKEY_FETCH_ERROR; concurrent ones share one key fetch, and the failure is remembered', async () => {
    const sender = await startFakeVasp();
    try {
      let stalling = true;
      sender.handle((request) => (stalling && request.url.startsWith('/.well-known/lnurlpubkey') ? { stall: true } : undefined));
      const answers = await Promise.all(Array.from({ length: 20 }, async () => http(await lnurlpRequestPath(sender, `$bob@${domain}`))));
      for (const answer of answers) {
        expect(answer).toEqual({ status: 424, body: { status: 'ERROR', code: 'COUNTERPARTY_PUBKEY_FETCH_ERROR', reason: `the public keys of ${sender.domain} could not be fetched` } });
      }
      expect(keyFetches(sender)).toBe(1);
      // Within the memory period the domain is not asked again, even once it would answer.
      stalling = false;
      expect((await http(await lnurlpRequestPath(sender, `$bob@${domain}`))).status).toBe(424);
      expect(keyFetches(sender)).toBe(1);
      // After it, a counterparty that recovered is asked again and its request answered.
      time.skip(FAILED_DOMAIN_MEMORY_MS);
      const recovered = await http(await lnurlpRequestPath(sender, `$bob@${domain}`));
      expect(recovered.status, JSON.stringify(recovered.body)).toBe(200);
      expect(keyFetches(sender)).toBe(2);
      expect(errorLines()).toEqual([]);
    } finally {
      await sender.close();
    }
  });
});

describe('a lookup of a receiver whose lnurlp answer stalls mid-answer', () => {
  it('is 424 LNURLP_REQUEST_FAILED', async () => {
    const found = await p.api.get(`/receiver/uma/${encodeURIComponent(`$rita@${staller.domain}`)}`, { customerId: alice.id });
    expectError(found, 424, 'LNURLP_REQUEST_FAILED');
    expect(found.body.message).toContain(`${staller.domain} timed out`);
    expect(errorLines()).toEqual([]);
  });
});
