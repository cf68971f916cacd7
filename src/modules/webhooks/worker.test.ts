import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { clockAhead, outboxRow, startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { systemClock } from '../../core/clock.js';
import { emitEvents } from '../../core/events.js';
import type { Platform } from '../platform/service.js';
import { capturingLogger, expectBackoffWhileDown, outage } from '../../../test/support/faults.js';
import * as repo from './repository.js';
import { WebhookWorker } from './worker.js';

let t: TestApp;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestApp({}, { madeUpEvents: true });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => t.close());

async function platformWithReceiver(): Promise<TestPlatform & { receiver: WebhookReceiver }> {
  const platform = await t.createPlatform();
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  await platform.api.patch('/config', { webhookEndpoint: receiver.url });
  return { ...platform, receiver };
}

async function emitMany(platform: Platform, count: number): Promise<string[]> {
  const events = Array.from({ length: count }, (_, i) => ({ type: 'CUSTOMER.KYC_APPROVED' as const, data: { n: i } }));
  return emitEvents(t.corridor.database.db, platform, events, systemClock);
}

const row = (id: string) => outboxRow(t.corridor.database, id);
const webhooks = () => t.corridor.services.webhooks;

describe('concurrency', () => {
  it('keeps at most `concurrency` tries in flight', async () => {
    const p = await platformWithReceiver();
    p.receiver.setDefault({ status: 200, delayMs: 100 });
    const ids = await emitMany(p.platform, 9);
    const tries = await webhooks().createWorker({ concurrency: 3, perPlatformConcurrency: 3 }).deliverDue();
    expect(tries).toBe(9);
    expect(p.receiver.requests).toHaveLength(9);
    expect(p.receiver.maxInFlight).toBe(3);
    for (const id of ids) expect((await row(id)).delivery_state).toBe('DELIVERED');
  });

  it('leaves room for other platforms when one platform is slow', async () => {
    const slow = await platformWithReceiver();
    const fast = await platformWithReceiver();
    slow.receiver.setDefault({ status: 200, delayMs: 300 });
    await emitMany(slow.platform, 6);
    await emitMany(fast.platform, 4);
    await webhooks().createWorker({ concurrency: 4, perPlatformConcurrency: 2 }).deliverDue();
    expect(slow.receiver.maxInFlight).toBe(2);
    expect(slow.receiver.requests).toHaveLength(6);
    // The fast platform was served while the slow one held only its two slots.
    const lastFast = Math.max(...fast.receiver.requests.map((r) => r.receivedAtMs));
    expect(lastFast).toBeLessThan(slow.receiver.requests[2].receivedAtMs);
  });
});

describe('limits', () => {
  it('come from the configuration (WEBHOOK_CONCURRENCY, WEBHOOK_PLATFORM_CONCURRENCY)', async () => {
    const configured = await startTestApp({ webhookConcurrency: 6, webhookPlatformConcurrency: 3 }, { madeUpEvents: true });
    try {
      expect(configured.corridor.services.webhooks.createWorker().settings).toMatchObject({ concurrency: 6, perPlatformConcurrency: 3 });
    } finally {
      await configured.close();
    }
  });
});

describe('claiming', () => {
  it('claims several due events in one statement, each platform up to the room it has left', async () => {
    const [busy, idle, full] = [await platformWithReceiver(), await platformWithReceiver(), await platformWithReceiver()];
    await emitMany(busy.platform, 5);
    await emitMany(idle.platform, 5);
    await emitMany(full.platform, 5);
    const now = new Date(Date.now() + 1_000);
    const claimed = await repo.claimDueEvents(t.corridor.database.db, {
      now,
      leaseUntil: new Date(now.getTime() + 60_000),
      limit: 1_000,
      perPlatform: 3,
      room: new Map([
        [busy.platform.id, 1],
        [full.platform.id, 0],
      ]),
    });
    const count = (id: string) => claimed.filter((e) => e.platformId === id).length;
    expect([count(busy.platform.id), count(idle.platform.id), count(full.platform.id)]).toEqual([1, 3, 0]);
    for (const event of claimed) expect(await row(event.id)).toMatchObject({ attempts: 1, next_attempt_at: new Date(now.getTime() + 60_000) });
  });

  it('deliverDue delivers every due event even when its fills find their platform full', async () => {
    // The race this covers: a fill skips the only platform as full, and its try ends meanwhile.
    // It is timing-dependent: with the bug, this failed in two runs out of three on PostgreSQL.
    const p = await platformWithReceiver();
    const ids = await emitMany(p.platform, 300);
    await webhooks().createWorker({ concurrency: 2, perPlatformConcurrency: 1 }).deliverDue();
    expect(p.receiver.requests).toHaveLength(300);
    expect(new Set(p.receiver.requests.map((r) => r.json.id))).toEqual(new Set(ids));
  });
});

describe('at-least-once', () => {
  it('re-delivers an event whose claim was left by a crashed process once the lease ends', async () => {
    const p = await platformWithReceiver();
    const [id] = await emitMany(p.platform, 1);
    // What a process that claimed the event and died leaves behind.
    await t.corridor.database.db
      .updateTable('events')
      .set({ attempts: 1, next_attempt_at: new Date(Date.now() + 60_000) })
      .where('id', '=', id)
      .execute();
    expect(await webhooks().deliverDue()).toBe(0);
    await webhooks().createWorker({}, clockAhead(61_000)).deliverDue();
    expect(p.receiver.requests).toHaveLength(1);
    expect(await row(id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 2 });
  });

  it('a process that outlived its lease cannot overwrite the newer try', async () => {
    const p = await platformWithReceiver();
    p.receiver.respondWith({ status: 500, delayMs: 400 });
    const [id] = await emitMany(p.platform, 1);
    const stale = webhooks().createWorker({ leaseMs: 100 }).deliverDue();
    await p.receiver.waitForRequests(1);
    await webhooks().createWorker({}, clockAhead(1_000)).deliverDue();
    await stale;
    expect(p.receiver.requests.map((r) => r.json.id)).toEqual([id, id]);
    expect(await row(id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 2, last_error: null });
  });
});

describe('background worker', () => {
  it('delivers on its own once started, and hands interrupted tries back on stop', async () => {
    const p = await platformWithReceiver();
    const worker = webhooks().createWorker({ pollIntervalMs: 20 });
    worker.start();
    try {
      const [first] = await emitMany(p.platform, 1);
      await p.receiver.waitForRequests(1);
      await expect.poll(async () => (await row(first)).delivery_state, { timeout: 30_000 }).toBe('DELIVERED');

      p.receiver.setDefault({ hang: true });
      const [second] = await emitMany(p.platform, 1);
      await p.receiver.waitForRequests(2);
      const stopping = Date.now();
      await worker.stop();
      expect(Date.now() - stopping).toBeLessThan(1_000);
      const released = await row(second);
      expect(released).toMatchObject({ delivery_state: 'PENDING', attempts: 0 });
      expect(released.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());
    } finally {
      await worker.stop();
    }
    p.receiver.setDefault({ status: 200 });
    await webhooks().deliverDue();
    expect(p.receiver.requests).toHaveLength(3);
  });

  it('a graceful stop claims nothing more and lets the tries in flight finish', async () => {
    const p = await platformWithReceiver();
    p.receiver.setDefault({ status: 200, delayMs: 600 });
    const worker = webhooks().createWorker({ pollIntervalMs: 20 });
    worker.start();
    const [answered] = await emitMany(p.platform, 1);
    await p.receiver.waitForRequests(1);
    const stopping = Date.now();
    const stopped = worker.stop(5_000);
    // Due while the stop waits for the try in flight (600 ms): a worker still polling every 20 ms
    // would send it. Emitted before stop(), a poll could send it first on a slow machine.
    const [due] = await emitMany(p.platform, 1);
    expect(await stopped).toBe(true); // nothing interrupted
    expect(Date.now() - stopping).toBeLessThan(4_000);
    // The receiver's answer was awaited and recorded: one request, delivered, no second send later.
    expect(p.receiver.requests.map((r) => r.json.id)).toEqual([answered]);
    expect(await row(answered)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 1 });
    // The event that became due while stopping was left for the next process.
    expect(await row(due)).toMatchObject({ delivery_state: 'PENDING', attempts: 0 });
  });

  it('a graceful stop interrupts the tries still in flight at its limit and hands them back', async () => {
    const p = await platformWithReceiver();
    p.receiver.setDefault({ hang: true });
    const worker = webhooks().createWorker({ pollIntervalMs: 20 });
    worker.start();
    const [id] = await emitMany(p.platform, 1);
    await p.receiver.waitForRequests(1);
    const stopping = Date.now();
    expect(await worker.stop(300)).toBe(false); // a try was interrupted: the shutdown reports it cut off (its exit code)
    expect(Date.now() - stopping).toBeGreaterThanOrEqual(290);
    expect(Date.now() - stopping).toBeLessThan(1_500);
    expect(await row(id)).toMatchObject({ delivery_state: 'PENDING', attempts: 0 });
  });

  it('closing the Corridor instance waits for an approval request the platform is answering', async () => {
    const app = await startTestApp({ shutdownTimeoutMs: 5_000 }, { madeUpEvents: true });
    let closed = false;
    try {
      const p = await app.createPlatform();
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      await p.api.patch('/config', { webhookEndpoint: receiver.url });
      const decisions: unknown[] = [];
      app.corridor.services.webhooks.onApproval('INCOMING_PAYMENT.PENDING', (info) => void decisions.push(info.decision));
      receiver.setDefault({ status: 200, delayMs: 800 });
      app.corridor.startWorkers();
      const [id] = await emitEvents(app.corridor.database.db, p.platform, [{ type: 'INCOMING_PAYMENT.PENDING', data: { id: 'Transaction:42', status: 'PENDING' } }], systemClock);
      app.corridor.services.webhooks.wake();
      await receiver.waitForRequests(1);
      await app.close();
      closed = true;
      expect(decisions).toEqual([{ kind: 'approve', automatic: false }]);
      expect(await outboxRow(app.corridor.database, id)).toMatchObject({ delivery_state: 'DELIVERED', attempts: 1 });
      expect(receiver.requests).toHaveLength(1);
    } finally {
      if (!closed) await app.close();
    }
  });

  it('with the database down, logs the first failed poll, backs off instead of polling every 500 ms, and logs the recovery', async () => {
    const { database, state } = outage(t.corridor.database);
    const { log, lines } = capturingLogger();
    // Claims fail before any try, so signing keys and response hooks are never used.
    const worker = new WebhookWorker({ database, clock: systemClock, log, keys: {} as never, hooks: {} as never }, { ...webhooks().createWorker().settings, pollIntervalMs: 20 });
    worker.start();
    try {
      await expectBackoffWhileDown(state, lines, { failed: 'webhook poll failed; while it keeps failing, one line a minute', recovered: 'webhook poll recovered' });
    } finally {
      await worker.stop();
    }
  });

  it('starts and stops with the Corridor instance', async () => {
    const p = await platformWithReceiver();
    t.corridor.startWorkers();
    const [id] = await emitMany(p.platform, 1);
    webhooks().wake();
    await p.receiver.waitForRequests(1);
    await expect.poll(async () => (await row(id)).delivery_state, { timeout: 30_000 }).toBe('DELIVERED');
  });
});
