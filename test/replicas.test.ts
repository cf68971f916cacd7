import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/core/clock.js';
import { emitEvents } from '../src/core/events.js';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from './support/app.js';
import { newCustomer, type TestCustomer } from './support/quotes.js';
import { outboxRow, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Two Corridor processes on one database, as an operator's replicas run: `a` takes the PATCH
// /config, `b` holds the platform in its cache (at most a second old) from just before.
let a: TestApp;
let b: TestApp;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  // Events emitted here are made up to test delivery.
  a = await startTestApp({}, { madeUpEvents: true });
  b = await startTestApp({}, { madeUpEvents: true });
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
