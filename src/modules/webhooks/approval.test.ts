import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { clockAhead, outboxRow, startWebhookReceiver, type ScriptedResponse, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { systemClock } from '../../core/clock.js';
import { emitEvents } from '../../core/events.js';
import type { DeliveryOutcome } from './delivery.js';
import { approvalDecision, type ApprovalInfo, type ResponseInfo } from './hooks.js';
import { nextState, retryDelayMs } from './policy.js';

const response = (status: number, body?: unknown): DeliveryOutcome => ({ kind: 'response', status, text: JSON.stringify(body ?? ''), body });

describe('approvalDecision', () => {
  it.each<[string, DeliveryOutcome, unknown]>([
    ['200 approves', response(200), { kind: 'approve', automatic: false }],
    ['200 carries receiverCustomerInfo', response(200, { receiverCustomerInfo: { NATIONALITY: 'US' } }), { kind: 'approve', automatic: false, receiverCustomerInfo: { NATIONALITY: 'US' } }],
    ['204 approves', response(204), { kind: 'approve', automatic: false }],
    ['202 waits for approve/reject', response(202), { kind: 'await' }],
    ['409 (already answered) waits', response(409), { kind: 'await' }],
    ['403 rejects', response(403, { code: 'X', message: 'no' }), { kind: 'reject' }],
    ['403 carries a reason', response(403, { reason: 'RESTRICTED_JURISDICTION' }), { kind: 'reject', reason: 'RESTRICTED_JURISDICTION' }],
    ['422 rejects with the required fields', response(422, { requiredFields: ['TAX_ID', 7] }), { kind: 'reject', reason: 'COUNTERPARTY_INFORMATION_REQUIRED', requiredFields: ['TAX_ID'] }],
    ['500 is a webhook error', response(500), { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR', detail: 'HTTP 500' }],
    ['400 is a webhook error', response(400), { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR', detail: 'HTTP 400' }],
    ['a timeout times out', { kind: 'timeout', timeoutMs: 10_000 }, { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT', detail: 'no response within 10000 ms' }],
    ['a connection error is a webhook error', { kind: 'error', message: 'ECONNREFUSED' }, { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR', detail: 'request failed: ECONNREFUSED' }],
    ['no endpoint approves automatically', { kind: 'no_endpoint' }, { kind: 'approve', automatic: true }],
  ])('%s', (_name, outcome, expected) => {
    expect(approvalDecision(outcome)).toEqual(expected);
  });
});

describe('retry policy', () => {
  const context = { type: 'CUSTOMER.KYC_APPROVED', attempt: 1, nowMs: 0, giveUpAtMs: 7 * 86_400_000 };

  it('doubles from 30 s to a 30 min cap, jitter only shortening it', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => retryDelayMs(n, () => 0))).toEqual([30, 60, 120, 240, 480, 960, 1800, 1800, 1800].map((s) => s * 1000));
    expect(retryDelayMs(1, () => 1)).toBe(22_500);
  });

  it('settles 2xx and 409, retries everything else, and never retries an approval event', () => {
    expect(nextState(response(201), context)).toEqual({ state: 'DELIVERED', note: null });
    expect(nextState(response(409), context).state).toBe('DELIVERED');
    expect(nextState(response(410), context).state).toBe('PENDING');
    expect(nextState({ kind: 'timeout', timeoutMs: 1 }, context).state).toBe('PENDING');
    const approval = { ...context, type: 'INCOMING_PAYMENT.PENDING' };
    expect(nextState(response(403), approval).state).toBe('DELIVERED');
    expect(nextState(response(422), approval).state).toBe('DELIVERED');
    expect(nextState(response(500), approval).state).toBe('FAILED');
    expect(nextState({ kind: 'timeout', timeoutMs: 1 }, approval).state).toBe('FAILED');
  });
});

describe('approval hooks through real deliveries', () => {
  let t: TestApp;
  let p: TestPlatform;
  let receiver: WebhookReceiver;
  const decisions: ApprovalInfo[] = [];
  const responses: ResponseInfo[] = [];

  beforeAll(async () => {
    t = await startTestApp({}, { madeUpEvents: true });
    p = await t.createPlatform();
    receiver = await startWebhookReceiver();
    await p.api.patch('/config', { webhookEndpoint: receiver.url });
    t.corridor.services.webhooks.onApproval('INCOMING_PAYMENT.PENDING', (info) => void decisions.push(info));
    t.corridor.services.webhooks.onResponse('INCOMING_PAYMENT.COMPLETED', (info) => void responses.push(info));
  });
  afterEach(() => {
    decisions.length = 0;
    responses.length = 0;
    receiver.reset();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  async function deliverPending(answer: ScriptedResponse, timeoutMs = 10_000) {
    receiver.respondWith(answer);
    const [id] = await emitEvents(t.corridor.database.db, p.platform, [{ type: 'INCOMING_PAYMENT.PENDING', data: { id: 'Transaction:42', status: 'PENDING' } }], systemClock);
    await t.corridor.services.webhooks.createWorker({ timeoutMs }).deliverDue();
    return id;
  }

  it.each<[string, ScriptedResponse, Record<string, unknown>, string]>([
    ['200', { status: 200, body: { receiverCustomerInfo: { FULL_NAME: 'Ada' } } }, { kind: 'approve', receiverCustomerInfo: { FULL_NAME: 'Ada' } }, 'DELIVERED'],
    ['403', { status: 403, body: { code: 'REJECTED', message: 'no', reason: 'RESTRICTED_JURISDICTION' } }, { kind: 'reject', reason: 'RESTRICTED_JURISDICTION' }, 'DELIVERED'],
    ['202', { status: 202 }, { kind: 'await' }, 'DELIVERED'],
    ['422', { status: 422, body: { requiredFields: ['TAX_ID'] } }, { kind: 'reject', requiredFields: ['TAX_ID'] }, 'DELIVERED'],
    ['500', { status: 500 }, { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' }, 'FAILED'],
  ])('%s: hands the handler its decision, with one try only', async (_name, answer, decision, state) => {
    const id = await deliverPending(answer);
    expect(decisions).toHaveLength(1);
    expect(decisions[0].decision).toMatchObject(decision);
    expect(decisions[0].event).toMatchObject({ id, type: 'INCOMING_PAYMENT.PENDING', platformId: p.platform.id, data: { id: 'Transaction:42' } });
    expect((await outboxRow(t.corridor.database, id)).delivery_state).toBe(state);
    await t.corridor.services.webhooks.createWorker({}, clockAhead(86_400_000)).deliverDue();
    expect(receiver.requests).toHaveLength(1);
  });

  it('a timeout is PAYMENT_APPROVAL_TIMED_OUT, not retried', async () => {
    const id = await deliverPending({ status: 200, delayMs: 1_000 }, 150);
    expect(decisions.map((d) => d.decision)).toEqual([{ kind: 'fail', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT', detail: 'no response within 150 ms' }]);
    expect((await outboxRow(t.corridor.database, id)).delivery_state).toBe('FAILED');
  });

  it('tells a response handler of each try and whether another follows', async () => {
    receiver.respondWith({ status: 500 }, { status: 200, body: { ok: true } });
    await emitEvents(t.corridor.database.db, p.platform, [{ type: 'INCOMING_PAYMENT.COMPLETED', data: {} }], systemClock);
    await t.corridor.services.webhooks.deliverDue();
    await t.corridor.services.webhooks.createWorker({}, clockAhead(60_000)).deliverDue();
    expect(responses.map((r) => [r.attempt, r.willRetry, r.outcome.kind === 'response' && r.outcome.status])).toEqual([
      [1, true, 500],
      [2, false, 200],
    ]);
    expect(responses[1].outcome).toMatchObject({ body: { ok: true } });
  });

  it('a failing handler is logged and does not block delivery', async () => {
    t.corridor.services.webhooks.onResponse('CUSTOMER.KYB_APPROVED', () => {
      throw new Error('handler exploded');
    });
    const [id] = await emitEvents(t.corridor.database.db, p.platform, [{ type: 'CUSTOMER.KYB_APPROVED', data: {} }], systemClock);
    await t.corridor.services.webhooks.deliverDue();
    expect((await outboxRow(t.corridor.database, id)).delivery_state).toBe('DELIVERED');
    expect(t.logs.some((line) => line.includes('webhook response handler failed'))).toBe(true);
  });
});
