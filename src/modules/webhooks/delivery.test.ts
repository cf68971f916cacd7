import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { clockAhead, outboxRow, startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { systemClock } from '../../core/clock.js';
import { emitEvents, type EventType } from '../../core/events.js';
import type { Platform } from '../platform/service.js';

let t: TestApp;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestApp({}, { madeUpEvents: true });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => t.close());

const MINUTE = 60_000;
const DAY = 24 * 3600_000;

async function platformWithReceiver(): Promise<TestPlatform & { receiver: WebhookReceiver }> {
  const platform = await t.createPlatform();
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  expect((await platform.api.patch('/config', { webhookEndpoint: receiver.url })).status).toBe(200);
  return { ...platform, receiver };
}

async function emit(platform: Platform, type: EventType = 'OUTGOING_PAYMENT.COMPLETED', data: unknown = { id: 'Transaction:1' }) {
  const fresh = (await t.corridor.services.platforms.get(platform.id))!;
  const [id] = await emitEvents(t.corridor.database.db, fresh, [{ type, data }], systemClock);
  return id;
}

const row = (id: string) => outboxRow(t.corridor.database, id);
const webhooks = () => t.corridor.services.webhooks;

/** The verification the docs show platforms (docs/webhooks.md). */
function isAuthentic(rawBody: Buffer, signatureHeader: unknown, publicKey: KeyObject): boolean {
  if (typeof signatureHeader !== 'string') return false;
  return verify('sha256', rawBody, publicKey, Buffer.from(signatureHeader, 'base64'));
}

async function publishedKey(platform: TestPlatform): Promise<KeyObject> {
  const { status, body } = await platform.api.get('/webhooks/signing-key');
  expect(status).toBe(200);
  return createPublicKey(body.publicKey);
}

describe('delivery', () => {
  it('posts the signed envelope, verifiable with the published public key', async () => {
    const p = await platformWithReceiver();
    const data = { zeta: 1, alpha: { b: 2, a: 1 }, status: 'COMPLETED' };
    const id = await emit(p.platform, 'OUTGOING_PAYMENT.COMPLETED', data);
    expect(await webhooks().deliverDue()).toBeGreaterThanOrEqual(1);

    const [request] = p.receiver.requests;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^Corridor-Webhooks/);
    const created = (await row(id)).created_at.toISOString();
    // Exact bytes: envelope keys in order, and the payload's keys as the emitter wrote them.
    expect(request.rawBody.toString()).toBe(JSON.stringify({ id, type: 'OUTGOING_PAYMENT.COMPLETED', timestamp: created, data }));
    expect(isAuthentic(request.rawBody, request.headers['x-service-signature'], await publishedKey(p))).toBe(true);
    expect(await row(id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 1, last_error: null });
    expect((await row(id)).delivered_at).toBeInstanceOf(Date);
  });

  it('a tampered body or another platform\'s key fails verification', async () => {
    const p = await platformWithReceiver();
    const other = await t.createPlatform();
    await emit(p.platform);
    await webhooks().deliverDue();
    const [request] = p.receiver.requests;
    const signature = request.headers['x-service-signature'];
    const tampered = Buffer.from(request.rawBody.toString().replace('Transaction:1', 'Transaction:2'));
    expect(isAuthentic(tampered, signature, await publishedKey(p))).toBe(false);
    expect(isAuthentic(request.rawBody, signature, await publishedKey(other))).toBe(false);
    expect(isAuthentic(request.rawBody, undefined, await publishedKey(p))).toBe(false);
  });

  it('uses the platform clock for the envelope timestamp', async () => {
    const p = await platformWithReceiver();
    await p.api.post('/sandbox/clock/advance', { seconds: 86_400 });
    await emit(p.platform);
    await webhooks().deliverDue();
    const sent = Date.parse(p.receiver.requests[0].json.timestamp);
    expect(sent - Date.now()).toBeGreaterThan(DAY - MINUTE);
  });

  it('sends each platform only its own events', async () => {
    const a = await platformWithReceiver();
    const b = await platformWithReceiver();
    const fromA = [await emit(a.platform), await emit(a.platform)];
    const fromB = [await emit(b.platform)];
    await webhooks().deliverDue();
    expect(a.receiver.requests.map((r) => r.json.id).sort()).toEqual(fromA.sort());
    expect(b.receiver.requests.map((r) => r.json.id)).toEqual(fromB);
    const keyA = await publishedKey(a);
    const keyB = await publishedKey(b);
    for (const r of a.receiver.requests) expect(isAuthentic(r.rawBody, r.headers['x-service-signature'], keyA)).toBe(true);
    expect(isAuthentic(b.receiver.requests[0].rawBody, b.receiver.requests[0].headers['x-service-signature'], keyB)).toBe(true);
  });

  it('skips events of a platform without an endpoint, for good', async () => {
    const p = await t.createPlatform();
    const id = await emit(p.platform);
    // Born SKIPPED: the outbox marks it when it is written, so the worker never picks it up.
    expect(await row(id)).toMatchObject({ delivery_state: 'SKIPPED', attempts: 0 });
    await webhooks().deliverDue();
    expect(await row(id)).toMatchObject({ delivery_state: 'SKIPPED', attempts: 0 });

    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    await p.api.patch('/config', { webhookEndpoint: receiver.url });
    await webhooks().deliverDue();
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries a failed try with exponential backoff until it succeeds', async () => {
    const p = await platformWithReceiver();
    p.receiver.respondWith({ status: 500 }, { status: 503 }, { status: 200 });
    const id = await emit(p.platform);

    const before = Date.now();
    await webhooks().deliverDue();
    let state = await row(id);
    expect(state).toMatchObject({ delivery_state: 'PENDING', attempts: 1, last_error: 'HTTP 500' });
    const firstWait = state.next_attempt_at.getTime() - before;
    expect(firstWait).toBeGreaterThan(22_000);
    expect(firstWait).toBeLessThanOrEqual(31_000);
    expect(await webhooks().deliverDue()).toBe(0); // not due yet

    await webhooks().createWorker({}, clockAhead(31_000)).deliverDue();
    state = await row(id);
    expect(state).toMatchObject({ delivery_state: 'PENDING', attempts: 2, last_error: 'HTTP 503' });
    const secondWait = state.next_attempt_at.getTime() - (before + 31_000);
    expect(secondWait).toBeGreaterThan(44_000);
    expect(secondWait).toBeLessThanOrEqual(61_000);

    await webhooks().createWorker({}, clockAhead(31_000 + 61_000)).deliverDue();
    expect(await row(id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 3 });
    expect(p.receiver.requests).toHaveLength(3);
    expect(new Set(p.receiver.requests.map((r) => r.rawBody.toString())).size).toBe(1);
  });

  it('does not retry when the receiver answers 409', async () => {
    const p = await platformWithReceiver();
    p.receiver.respondWith({ status: 409, body: { code: 'CONFLICT' } });
    const id = await emit(p.platform);
    await webhooks().deliverDue();
    await webhooks().createWorker({}, clockAhead(DAY)).deliverDue();
    expect(p.receiver.requests).toHaveLength(1);
    expect(await row(id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 1 });
    expect((await row(id)).last_error).toMatch(/409/);
  });

  it('treats a timeout and a refused connection as failures to retry', async () => {
    const p = await platformWithReceiver();
    p.receiver.respondWith({ status: 200, delayMs: 1_000 });
    const slow = await emit(p.platform);
    await webhooks().createWorker({ timeoutMs: 150 }).deliverDue();
    expect(await row(slow)).toMatchObject({ delivery_state: 'PENDING', attempts: 1, last_error: 'no response within 150 ms' });

    const closed = await startWebhookReceiver();
    await closed.close();
    await p.api.patch('/config', { webhookEndpoint: closed.url });
    const refused = await emit(p.platform);
    await webhooks().deliverDue();
    expect(await row(refused)).toMatchObject({ delivery_state: 'PENDING', attempts: 1 });
    expect((await row(refused)).last_error).toMatch(/ECONNREFUSED/);
  });

  it('caps the wait at 30 minutes and gives up 7 days after the event', async () => {
    const p = await platformWithReceiver();
    p.receiver.setDefault({ status: 500 });
    const id = await emit(p.platform);
    await t.corridor.database.db.updateTable('events').set({ attempts: 12 }).where('id', '=', id).execute();
    const now = Date.now();
    await webhooks().deliverDue();
    const wait = (await row(id)).next_attempt_at.getTime() - now;
    expect(wait).toBeGreaterThan(22 * MINUTE);
    expect(wait).toBeLessThanOrEqual(30 * MINUTE + 1_000);

    // Close to the end of the window, the last try is scheduled at the window's end, not later.
    const created = (await row(id)).created_at.getTime();
    await webhooks().createWorker({}, clockAhead(7 * DAY - 10_000)).deliverDue();
    expect((await row(id)).next_attempt_at.getTime()).toBe(created + 7 * DAY);

    await webhooks().createWorker({}, clockAhead(7 * DAY + 1_000)).deliverDue();
    const final = await row(id);
    expect(final.delivery_state).toBe('FAILED');
    expect(final.last_error).toMatch(/HTTP 500; gave up after 15 tries/);
    await webhooks().createWorker({}, clockAhead(8 * DAY)).deliverDue();
    expect(p.receiver.requests).toHaveLength(3);
  });

  it('measures the 7 days on the platform clock', async () => {
    const p = await platformWithReceiver();
    p.receiver.setDefault({ status: 500 });
    const id = await emit(p.platform);
    await p.api.post('/sandbox/clock/advance', { seconds: 8 * 86_400 });
    await webhooks().deliverDue();
    expect(await row(id)).toMatchObject({ delivery_state: 'FAILED', attempts: 1 });
  });
});
