import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { outboxRow, startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

let t: TestApp;
let p: TestPlatform;
let receiver: WebhookReceiver;

beforeAll(async () => {
  // A production platform below posts to the loopback receiver, which only this switch allows.
  t = await startTestApp({ webhookAllowPrivateEndpoints: true });
  p = await t.createPlatform();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('GET /webhooks/signing-key', () => {
  it('publishes a P-256 public key, the same on every call', async () => {
    const { status, body } = await p.api.get('/webhooks/signing-key');
    expect(status).toBe(200);
    expect(body).toMatchObject({ algorithm: 'ECDSA_P256_SHA256', signatureEncoding: 'BASE64_DER', signatureHeader: 'X-Service-Signature' });
    const key = createPublicKey(body.publicKey);
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect((await p.api.get('/webhooks/signing-key')).body).toEqual(body);
  });

  it('gives each platform its own key', async () => {
    const other = await t.createPlatform({ mode: 'PRODUCTION' });
    const mine = (await p.api.get('/webhooks/signing-key')).body.publicKey;
    const theirs = (await other.api.get('/webhooks/signing-key')).body.publicKey;
    expect(theirs).not.toBe(mine);
  });

  it('needs authentication', async () => {
    expect((await t.anonymous.get('/webhooks/signing-key')).status).toBe(401);
  });
});

describe('POST /sandbox/webhooks/test', () => {
  it('is a 400 WEBHOOK_ENDPOINT_NOT_SET without an endpoint', async () => {
    const { status, body } = await p.api.post('/sandbox/webhooks/test');
    expect(status).toBe(400);
    expect(body.code).toBe('WEBHOOK_ENDPOINT_NOT_SET');
    expect(receiver.requests).toHaveLength(0);
  });

  it('sends a signed TEST webhook at once and reports the answer', async () => {
    await p.api.patch('/config', { webhookEndpoint: receiver.url });
    receiver.respondWith({ status: 200, body: 'thanks' });
    const { status, body } = await p.api.post('/sandbox/webhooks/test');
    expect(status).toBe(200);
    expect(body).toEqual({ url: receiver.url, response_status: 200, response_body: 'thanks' });

    const [request] = receiver.requests;
    expect(request.json).toMatchObject({ type: 'TEST', data: {} });
    expect(request.json.id).toMatch(/^Webhook:/);
    const publicKey = createPublicKey((await p.api.get('/webhooks/signing-key')).body.publicKey);
    expect(verify('sha256', request.rawBody, publicKey, Buffer.from(String(request.headers['x-service-signature']), 'base64'))).toBe(true);
    expect(await outboxRow(t.corridor.database, request.json.id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 1 });
    // Sent outside the queue: the worker has nothing left to send.
    await t.corridor.services.webhooks.deliverDue();
    expect(receiver.requests).toHaveLength(1);
  });

  it('works on production platforms too', async () => {
    const production = await t.createPlatform({ mode: 'PRODUCTION' });
    await production.api.patch('/config', { webhookEndpoint: receiver.url });
    expect((await production.api.post('/sandbox/webhooks/test')).status).toBe(200);
  });

  it('is a 400 WEBHOOK_DELIVERY_ERROR with the status when the endpoint refuses', async () => {
    receiver.respondWith({ status: 401, body: { code: 'BAD_SIGNATURE' } });
    const { status, body } = await p.api.post('/sandbox/webhooks/test');
    expect(status).toBe(400);
    expect(body.code).toBe('WEBHOOK_DELIVERY_ERROR');
    expect(body.details).toMatchObject({ url: receiver.url, response_status: 401, response_body: '{"code":"BAD_SIGNATURE"}' });
    const eventId = receiver.requests.at(-1)!.json.id;
    expect(await outboxRow(t.corridor.database, eventId)).toMatchObject({ delivery_state: 'FAILED', last_error: 'HTTP 401' });
  });

  it('is a 400 WEBHOOK_DELIVERY_ERROR with the error when the endpoint is unreachable', async () => {
    const closed = await startWebhookReceiver();
    await closed.close();
    await p.api.patch('/config', { webhookEndpoint: closed.url });
    const { status, body } = await p.api.post('/sandbox/webhooks/test');
    expect(status).toBe(400);
    expect(body.code).toBe('WEBHOOK_DELIVERY_ERROR');
    expect(body.details.url).toBe(closed.url);
    expect(body.details.error).toMatch(/ECONNREFUSED/);
  });

  it('needs authentication', async () => {
    expect((await t.anonymous.post('/sandbox/webhooks/test')).status).toBe(401);
  });
});
