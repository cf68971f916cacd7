import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/core/clock.js';
import { emitEvents } from '../src/core/events.js';
import { enqueueJobs, shiftPlatformJobs } from '../src/core/jobs.js';
import { transact } from '../src/db/transact.js';
import { addClockOffset } from '../src/modules/platform/repository.js';
import { apiClient, holdableClock, startTestApp, type TestApp, type TestPlatform } from './support/app.js';
import { testDatabaseKind } from './support/db.js';
import { advance, fund, newCustomer, payoutScenario, usdAccount, type TestCustomer } from './support/quotes.js';
import { holdTransaction } from './support/wallets.js';
import { outboxRow, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Two Corridor processes on one database, as an operator's replicas run: `a` takes the PATCH
// /config, `b` holds the platform in its cache (at most a second old) from just before.
let a: TestApp;
let b: TestApp;
/** `b`'s real time, which a test may hold still to keep b's cached platform as it was. */
const bTime = holdableClock();
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  // Events emitted here are made up to test delivery.
  a = await startTestApp({}, { madeUpEvents: true });
  b = await startTestApp({}, { madeUpEvents: true, clock: bTime.clock });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await b.close();
  await a.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver();
  receivers.push(started);
  return started;
}

/** The platform as `b` serves it: same credentials, the other process. */
const onB = (p: TestPlatform): TestPlatform => ({ ...p, api: apiClient(b.corridor, p.credentials) });

/** Sets the endpoint through `a` right after `b` cached the platform as it was. */
async function changeEndpointBehindB(p: TestPlatform, webhookEndpoint: string): Promise<void> {
  expect((await onB(p).api.get('/config')).status).toBe(200);
  const patched = await p.api.patch('/config', { webhookEndpoint });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
}

describe('incoming payments on the other process', () => {
  let p: TestPlatform;
  let customer: TestCustomer;
  const receive = () =>
    onB(p).api.post('/sandbox/uma/receive', { senderUmaAddress: '$success.usd@sandbox.uma.money', customerId: customer.id, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 1_500 });

  beforeAll(async () => {
    p = await a.createPlatform();
    customer = await newCustomer(p);
  });

  it('wait for approval as soon as the endpoint is set', async () => {
    const hooks = await receiver();
    await changeEndpointBehindB(p, hooks.url);
    const res = await receive();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('PENDING');
  });

  it('are credited at once as soon as the endpoint is removed', async () => {
    const hooks = await receiver();
    b.corridor.services.platforms.evict(p.platform.id);
    await p.api.patch('/config', { webhookEndpoint: hooks.url });
    await changeEndpointBehindB(p, '');
    const res = await receive();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('COMPLETED');
  });
});

describe('webhooks claimed by the other process', () => {
  async function emitted(p: TestPlatform): Promise<string> {
    const [id] = await emitEvents(a.corridor.database.db, p.platform, [{ type: 'CUSTOMER.KYC_APPROVED', data: { id: 'Customer:1' } }], systemClock);
    return id;
  }

  it('go to an endpoint set a moment before, not skipped', async () => {
    const p = await a.createPlatform();
    const hooks = await receiver();
    await changeEndpointBehindB(p, hooks.url);
    const id = await emitted(p);
    await b.corridor.services.webhooks.deliverDue();
    expect(hooks.requests.map((r) => r.json?.id)).toEqual([id]);
    expect((await outboxRow(a.corridor.database, id)).delivery_state).toBe('DELIVERED');
  });

  it('go to the new endpoint, not the old one', async () => {
    const p = await a.createPlatform();
    const [before, after] = [await receiver(), await receiver()];
    await p.api.patch('/config', { webhookEndpoint: before.url });
    await changeEndpointBehindB(p, after.url);
    const id = await emitted(p);
    await b.corridor.services.webhooks.deliverDue();
    expect(before.requests).toHaveLength(0);
    expect(after.requests.map((r) => r.json?.id)).toEqual([id]);
  });
});

describe('the test webhook on the other process', () => {
  it('goes to the endpoint set a moment before', async () => {
    const p = await a.createPlatform();
    const [before, after] = [await receiver(), await receiver()];
    await p.api.patch('/config', { webhookEndpoint: before.url });
    await changeEndpointBehindB(p, after.url);
    const res = await onB(p).api.post('/sandbox/webhooks/test');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.url).toBe(after.url);
    expect(before.requests).toHaveLength(0);
  });
});

describe('the test clock advanced by the other process', () => {
  /**
   * Advances the clock through `a` by `seconds` while `b` still serves the platform as it was just
   * before, clock offset included (b's time stands still until `done`, so its cached copy cannot
   * expire), as a replica does for up to a second after an advance made elsewhere.
   */
  async function advanceBehindB(p: TestPlatform, seconds: number) {
    bTime.hold();
    expect((await onB(p).api.get('/config')).status).toBe(200);
    const advanced = await advance(p, seconds);
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    return { now: advanced.body.now as string, done: bTime.release };
  }

  it('a quote b executes with the clock from before completes when the advanced clock reaches its delay', async () => {
    const p = await a.createPlatform();
    const payee = await newCustomer(p, 'Rita Receiver');
    // Suffix 003: the payout completes six minutes after the execution.
    const { quote } = await payoutScenario(p, payee.id, '003');
    const behind = await advanceBehindB(p, 60);
    try {
      const executed = await onB(p).api.post(`/quotes/${quote.id}/execute`);
      expect(executed.status, JSON.stringify(executed.body)).toBe(200);
      // b recorded the execution on the clock it had, a minute behind the advanced one.
      const recorded = (await p.api.get(`/transactions/${quote.transactionId}`)).body;
      expect(recorded.status).toBe('PROCESSING');
      expect(Date.parse(recorded.updatedAt)).toBeLessThan(Date.parse(behind.now));
    } finally {
      behind.done();
    }
    // Six minutes after the execution as recorded: the completion is due, and the advance runs it.
    expect((await advance(p, 300)).status).toBe(200);
    expect((await p.api.get(`/transactions/${quote.transactionId}`)).body.status).toBe('COMPLETED');
  });

  it('a transfer b makes with the clock from before fails after its 30 seconds on the advanced clock', async () => {
    const p = await a.createPlatform();
    const sender = await newCustomer(p);
    await fund(p, sender.accounts.USD, 10_000);
    // Suffix 005: the transfer stays pending, then fails with TIMEOUT after 30 s.
    const external = await usdAccount(p, sender.id, '005');
    const behind = await advanceBehindB(p, 10);
    let transferId: string;
    try {
      const sent = await onB(p).api.post('/transfer-out', { source: { accountId: sender.accounts.USD }, destination: { accountId: external }, amount: 1_000 });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.status).toBe('PROCESSING');
      expect(Date.parse(sent.body.createdAt)).toBeLessThan(Date.parse(behind.now));
      transferId = sent.body.id;
    } finally {
      behind.done();
    }
    expect((await advance(p, 25)).status).toBe(200);
    const transfer = (await p.api.get(`/transactions/${transferId}`)).body;
    expect(transfer).toMatchObject({ status: 'FAILED', failureDetail: 'TIMEOUT' });
  });

  it('jobs b runs after an advance made elsewhere run on the advanced clock, though b cached the platform before it', async () => {
    const p = await a.createPlatform();
    const payee = await newCustomer(p, 'Rita Receiver');
    const { quote } = await payoutScenario(p, payee.id, '001');
    bTime.hold();
    try {
      expect((await onB(p).api.get('/config')).status).toBe(200);
      // a's advance past the quote's expiry as it commits, before a runs what became due.
      await transact(a.corridor.database.db, async (trx) => {
        await addClockOffset(trx, p.platform.id, 600_000);
        await shiftPlatformJobs(trx, p.platform.id, 600_000);
      });
      // b's runner takes the expiry sweep: on b's clock from before the advance, the quote would
      // not be due yet, and the sweep would only schedule itself again, round after round.
      expect(await b.corridor.services.jobs.runDue(p.platform.id)).toBe(1);
      expect((await p.api.get(`/quotes/${quote.id}`)).body.status).toBe('EXPIRED');
      expect((await b.corridor.services.platforms.get(p.platform.id))?.clockOffsetMs).toBe(600_000);
    } finally {
      bTime.release();
    }
  });

  // PostgreSQL only: the other process's transaction stays open while the advance runs, and PGlite
  // has one connection.
  it.skipIf(testDatabaseKind() !== 'postgres')('a job whose transaction commits while the advance runs is due by the advanced clock', async () => {
    const p = await a.createPlatform();
    const runAt = new Date(Date.now() + 3_600_000);
    // b has inserted a job (an hour away on the platform clock) in a transaction not yet committed.
    const held = await holdTransaction(b, (trx) => enqueueJobs(trx, p.platform, [{ kind: 'test.clock-race', runAt }], b.corridor.clock));
    const advanced = advance(p, 600);
    // The advance waits for b's transaction to end (or, without that, it has already answered).
    await Promise.race([advanced, held.waiters(1, 20_000)]);
    await held.release();
    expect((await advanced).status).toBe(200);
    const job = await a.corridor.database.db
      .selectFrom('jobs')
      .select('due_at')
      .where('platform_id', '=', p.platform.id)
      .where('kind', '=', 'test.clock-race')
      .executeTakeFirstOrThrow();
    expect(job.due_at.getTime()).toBe(runAt.getTime() - 600_000);
  });
});
