import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from './support/app.js';
import { newCustomer, type TestCustomer } from './support/quotes.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Two Corridor processes on one database, as an operator's replicas run: `a` takes the PATCH
// /config, `b` holds the platform in its cache (at most a second old) from just before.
let a: TestApp;
let b: TestApp;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  a = await startTestApp();
  b = await startTestApp();
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
