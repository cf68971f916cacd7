import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { outboxRow, startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { systemClock } from '../../core/clock.js';
import { emitEvents } from '../../core/events.js';

let t: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestApp();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

/** Stores the endpoint without PATCH /config's checks, as if its host's DNS answer had changed since. */
async function pointAt(app: TestApp, tp: TestPlatform, url: string): Promise<void> {
  await app.corridor.database.db.updateTable('platforms').set({ webhook_endpoint: url }).where('id', '=', tp.platform.id).execute();
  app.corridor.services.platforms.evict(tp.platform.id);
}

describe('PATCH /config webhookEndpoint on production platforms', () => {
  it.each([
    'http://127.0.0.1:4000/hooks',
    'http://localhost:4000/hooks',
    'http://169.254.169.254/latest/meta-data/',
    'https://10.1.2.3/hooks',
    'https://192.168.1.20/hooks',
    'https://[::1]/hooks',
    'https://[::ffff:127.0.0.1]/hooks',
  ])('refuses the private address %s', async (url) => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const { status, body } = await production.api.patch('/config', { webhookEndpoint: url });
    expect(status).toBe(400);
    expect(body.code).toBe('INVALID_INPUT');
    expect(body.details.errors[0]).toMatchObject({ field: 'webhookEndpoint', constraint: 'publicAddress' });
    expect((await production.api.get('/config')).body.webhookEndpoint).toBeUndefined();
  });

  it('accepts a public address', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const { status, body } = await production.api.patch('/config', { webhookEndpoint: 'https://93.184.215.14/hooks' });
    expect(status).toBe(200);
    expect(body.webhookEndpoint).toBe('https://93.184.215.14/hooks');
  });

  it('lets sandbox platforms use loopback receivers', async () => {
    const sandbox = await t.createPlatform();
    expect((await sandbox.api.patch('/config', { webhookEndpoint: receiver.url })).status).toBe(200);
    expect((await sandbox.api.post('/sandbox/webhooks/test')).status).toBe(200);
  });
});

describe('delivery to an endpoint that became private', () => {
  it('sends no test webhook and answers the usual delivery error', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    await pointAt(t, production, receiver.url);
    const before = receiver.requests.length;
    const { status, body } = await production.api.post('/sandbox/webhooks/test');
    expect(status).toBe(400);
    expect(body.code).toBe('WEBHOOK_DELIVERY_ERROR');
    expect(body.details).toMatchObject({ url: receiver.url, error: expect.stringMatching(/loopback or private address/) });
    expect(receiver.requests).toHaveLength(before);
  });

  it('does not send queued events; they fail like an unreachable endpoint and are retried', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    await pointAt(t, production, receiver.url);
    const before = receiver.requests.length;
    const [id] = await emitEvents(t.corridor.database.db, production.platform, [{ type: 'TEST', data: {} }], systemClock);
    await t.corridor.services.webhooks.deliverDue();
    expect(receiver.requests).toHaveLength(before);
    expect(await outboxRow(t.corridor.database, id)).toMatchObject({ delivery_state: 'PENDING', attempts: 1, last_error: expect.stringMatching(/loopback or private address/) });
  });
});

describe('an endpoint whose host does not resolve', () => {
  it('is accepted by PATCH /config (it may resolve later) and each try fails naming the host', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    const url = 'https://hooks.no-such-host.invalid/corridor';
    expect((await production.api.patch('/config', { webhookEndpoint: url })).status).toBe(200);
    const { status, body } = await production.api.post('/sandbox/webhooks/test');
    expect(status).toBe(400);
    expect(body.code).toBe('WEBHOOK_DELIVERY_ERROR');
    expect(body.details).toMatchObject({ url, error: expect.stringMatching(/^request failed: ENOTFOUND: .*hooks\.no-such-host\.invalid/) });
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_ENDPOINTS', () => {
  it('lets production platforms use private endpoints and delivers to them', async () => {
    const allowing = await startTestApp({ webhookAllowPrivateEndpoints: true });
    try {
      const production = await allowing.createPlatform({ mode: 'PRODUCTION' });
      expect((await production.api.patch('/config', { webhookEndpoint: receiver.url })).status).toBe(200);
      receiver.respondWith({ status: 200, body: 'internal' });
      const { status, body } = await production.api.post('/sandbox/webhooks/test');
      expect(status).toBe(200);
      expect(body).toEqual({ url: receiver.url, response_status: 200, response_body: 'internal' });
    } finally {
      await allowing.close();
    }
  });
});
