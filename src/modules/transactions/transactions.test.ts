import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { transact } from '../../db/transact.js';

let t: TestApp;
let p: TestPlatform;
let alice: { id: string; platformCustomerId: string; usd: string };
/** A platform whose webhook endpoint answers approval requests (set per test). */
let approving: TestPlatform;
let receiver: WebhookReceiver;
let erin: { id: string; platformCustomerId: string; usd: string };

async function customer(platform: TestPlatform, name: string) {
  const created = await platform.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: name });
  const usd = (await platform.api.get('/customers/internal-accounts', { customerId: created.body.id, currency: 'USD' })).body.data[0].id;
  return { id: created.body.id as string, platformCustomerId: created.body.platformCustomerId as string, usd: usd as string };
}

async function receive(who: typeof alice, amount: number, platform = p) {
  const current = (await t.corridor.services.platforms.get(platform.platform.id))!;
  return t.corridor.services.incomingPayments.receive(current, {
    customer: { id: who.id, platformCustomerId: who.platformCustomerId },
    account: { id: who.usd, currency: 'USD' },
    amount,
    source: { sourceType: 'UMA_ADDRESS', umaAddress: '$sender@other.example', currency: 'USD' },
    counterpartyInformation: { FULL_NAME: 'Sam Sender' },
  });
}

/** An incoming payment to Erin whose approval webhook gets `answer`; returns it after delivery. */
async function receiveAnswered(amount: number, answer: { status: number; body?: unknown; delayMs?: number }) {
  receiver.setDefault((request) => (request.json?.type === 'INCOMING_PAYMENT.PENDING' ? answer : { status: 200 }));
  const record = await receive(erin, amount, approving);
  await t.corridor.services.webhooks.deliverDue();
  return record;
}

const balanceOf = async (account: string) => (await t.corridor.services.ledger.balances(t.corridor.database.db, [account])).get(account)!.available;
const statusOf = async (id: string, platform = approving) => (await platform.api.get(`/transactions/${id}`)).body;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  alice = await customer(p, 'Alice Ng');
  receiver = await startWebhookReceiver();
  approving = await t.createPlatform();
  await approving.api.patch('/config', { webhookEndpoint: receiver.url });
  erin = await customer(approving, 'Erin Vale');
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

describe('incoming payments', () => {
  it('credit at once when no approval is needed, with every field filled', async () => {
    const before = await balanceOf(alice.usd);
    const record = await receive(alice, 2_500);
    const { status, body } = await p.api.get(`/transactions/${record.id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: record.id,
      status: 'COMPLETED',
      type: 'INCOMING',
      customerId: alice.id,
      platformCustomerId: alice.platformCustomerId,
      source: { sourceType: 'UMA_ADDRESS', umaAddress: '$sender@other.example' },
      destination: { destinationType: 'ACCOUNT', accountId: alice.usd, currency: 'USD' },
      receivedAmount: { amount: 2_500, currency: { code: 'USD', decimals: 2 } },
      counterpartyInformation: { FULL_NAME: 'Sam Sender' },
      reconciliationInstructions: { reference: expect.stringMatching(/^CR[0-9A-Z]{12}$/) },
    });
    expect(body.settledAt).toBeDefined();
    expect(body.failureReason).toBeUndefined();
    const account = (await p.api.get('/customers/internal-accounts', { customerId: alice.id, currency: 'USD' })).body.data[0];
    expect(account.balance.amount).toBe(before + 2_500);
    const legs = await t.corridor.database.db.selectFrom('ledger_transfers').select(['credit_account_id', 'amount', 'state']).where('transaction_id', '=', record.id).execute();
    expect(legs).toEqual([{ credit_account_id: alice.usd, amount: 2_500, state: 'POSTED' }]);
    const types = (await t.corridor.database.db.selectFrom('events').select('type').where('platform_id', '=', p.platform.id).execute()).map((e) => e.type);
    expect(types).toContain('INCOMING_PAYMENT.COMPLETED');
  });

  it('with a webhook endpoint, the platform is asked first: 200 credits at once', async () => {
    const before = await balanceOf(erin.usd);
    const record = await receiveAnswered(900, { status: 200, body: { receiverCustomerInfo: { FULL_NAME: 'Erin Vale' } } });
    const asked = receiver.requests.find((r) => r.json?.data?.id === record.id)!.json;
    expect(asked).toMatchObject({ type: 'INCOMING_PAYMENT.PENDING', data: { id: record.id, status: 'PENDING' } });
    expect(await statusOf(record.id)).toMatchObject({ status: 'COMPLETED', counterpartyInformation: { receiverCustomerInfo: { FULL_NAME: 'Erin Vale' } } });
    expect(await balanceOf(erin.usd)).toBe(before + 900);
  });

  it('403 rejects without crediting', async () => {
    const before = await balanceOf(erin.usd);
    const record = await receiveAnswered(400, { status: 403, body: { reason: 'RESTRICTED_JURISDICTION' } });
    expect(await statusOf(record.id)).toMatchObject({ status: 'REJECTED', failureDetail: 'PLATFORM_REJECTED', rejectionReason: 'RESTRICTED_JURISDICTION' });
    expect(await balanceOf(erin.usd)).toBe(before);
  });

  it('202 waits for approve; approve credits, a second decision is 409', async () => {
    const before = await balanceOf(erin.usd);
    const record = await receiveAnswered(700, { status: 202 });
    expect((await statusOf(record.id)).status).toBe('PENDING');
    expect(await balanceOf(erin.usd)).toBe(before);
    const approved = await approving.api.post(`/transactions/${record.id}/approve`, { receiverCustomerInfo: { FULL_NAME: 'Erin Vale' } });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('COMPLETED');
    expect(await balanceOf(erin.usd)).toBe(before + 700);
    const again = await approving.api.post(`/transactions/${record.id}/approve`, {});
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    expect((await approving.api.post(`/transactions/${record.id}/reject`, {})).status).toBe(409);
  });

  it('approve and reject take a bare POST (their body is optional)', async () => {
    const before = await balanceOf(erin.usd);
    const approvedLater = await receiveAnswered(200, { status: 202 });
    const approved = await approving.api.request({ method: 'POST', path: `/transactions/${approvedLater.id}/approve` });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('COMPLETED');
    expect(await balanceOf(erin.usd)).toBe(before + 200);
    const rejectedLater = await receiveAnswered(100, { status: 202 });
    const rejected = await approving.api.request({ method: 'POST', path: `/transactions/${rejectedLater.id}/reject` });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'REJECTED', failureDetail: 'PLATFORM_REJECTED' });
    expect(rejected.body).not.toHaveProperty('rejectionReason');
    expect(await balanceOf(erin.usd)).toBe(before + 200);
  });

  it('/openapi.json says so: their requestBody is not required (that of every other operation is)', async () => {
    const doc = (await t.anonymous.get('/openapi.json')).body;
    const required = (path: string) => doc.paths[`/2025-10-13${path}`].post.requestBody.required;
    expect(required('/transactions/{transactionId}/approve')).toBe(false);
    expect(required('/transactions/{transactionId}/reject')).toBe(false);
    expect(required('/agents/{agentId}/actions/{actionId}/reject')).toBe(false);
    expect(required('/auth/credentials/{id}/challenge')).toBe(false);
    expect(required('/transfer-out')).toBe(true);
    expect(JSON.stringify(doc)).not.toContain('x-corridor-optional-body');
  });

  it('approve and reject replay their first answer under the same Idempotency-Key', async () => {
    for (const decision of ['approve', 'reject']) {
      const waiting = await receiveAnswered(150, { status: 202 });
      const request = { method: 'POST', path: `/transactions/${waiting.id}/${decision}`, body: {}, headers: { 'idempotency-key': `decide-${waiting.id}` } };
      const first = await approving.api.request(request);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      const replay = await approving.api.request(request);
      expect(replay.status, JSON.stringify(replay.body)).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
    }
  });

  it('202 then reject leaves the balance untouched', async () => {
    const before = await balanceOf(erin.usd);
    const record = await receiveAnswered(300, { status: 202 });
    const rejected = await approving.api.post(`/transactions/${record.id}/reject`, { reason: 'unknown sender' });
    expect(rejected.body).toMatchObject({ status: 'REJECTED', failureDetail: 'PLATFORM_REJECTED', rejectionReason: 'unknown sender' });
    expect((await statusOf(record.id)).rejectionReason).toBe('unknown sender');
    expect(await balanceOf(erin.usd)).toBe(before);
  });

  it('202 and no decision within 5 seconds: FAILED with PAYMENT_APPROVAL_TIMED_OUT', async () => {
    const record = await receiveAnswered(300, { status: 202 });
    await approving.api.post('/sandbox/clock/advance', { seconds: 6 });
    expect(await statusOf(record.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
    expect((await approving.api.post(`/transactions/${record.id}/approve`, {})).status).toBe(409);
  });

  it('an error answer fails the payment with PAYMENT_APPROVAL_WEBHOOK_ERROR', async () => {
    const record = await receiveAnswered(300, { status: 500 });
    expect(await statusOf(record.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
    const events = await t.corridor.database.db.selectFrom('events').select(['type', 'data']).where('platform_id', '=', approving.platform.id).execute();
    const failed = events.filter((e) => e.type === 'INCOMING_PAYMENT.FAILED' && (e.data as { id: string }).id === record.id);
    expect(failed).toHaveLength(1);
  });

  it('approve/reject: unknown id 404, bad body 400, other platform 404, not waiting 409', async () => {
    const record = await receive(alice, 100);
    expect((await p.api.post(`/transactions/${record.id}/approve`, {})).status).toBe(409);
    expect((await p.api.post('/transactions/Transaction:nope/approve', {})).status).toBe(404);
    const bad = await p.api.post(`/transactions/${record.id}/reject`, { reason: 7 });
    expect(bad.status).toBe(400);
    const other = await t.createPlatform();
    expect((await other.api.post(`/transactions/${record.id}/approve`, {})).status).toBe(404);
    expect((await other.api.get(`/transactions/${record.id}`)).status).toBe(404);
  });
});

describe('failureReason', () => {
  it('a reason outside the direction\'s enum is refused and changes nothing', async () => {
    const record = await receive(alice, 300);
    const platform = (await t.corridor.services.platforms.get(p.platform.id))!;
    const fail = (failureReason: 'COUNTERPARTY_POST_TX_FAILED' | 'OFFRAMP_FAILED') =>
      transact(t.corridor.database.db, (trx) => t.corridor.services.transactions.transition(trx, platform, record.id, 'FAILED', { failureReason }));
    await expect(fail('COUNTERPARTY_POST_TX_FAILED')).rejects.toThrow(/not one of the reference's values for INCOMING/);
    expect((await p.api.get(`/transactions/${record.id}`)).body).toMatchObject({ status: 'COMPLETED' });
    expect(await fail('OFFRAMP_FAILED')).toMatchObject({ status: 'FAILED', failureReason: 'OFFRAMP_FAILED' });
  });
});

describe('GET /transactions', () => {
  it('filters by every field and paginates in a stable order', async () => {
    const q = await t.createPlatform();
    const carol = await customer(q, 'Carol');
    const dan = await customer(q, 'Dan');
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await receive(i % 2 ? dan : carol, 100 + i, q));
    await t.corridor.database.db.updateTable('transactions').set({ status: 'PENDING' }).where('id', '=', made[4].id).execute();

    const all = await q.api.get('/transactions', { limit: 2 });
    expect(all.body.totalCount).toBe(5);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await q.api.get('/transactions', { limit: 2, cursor });
      seen.push(...page.body.data.map((x: { id: string }) => x.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse().map((m) => m.id));
    const ascending = await q.api.get('/transactions', { sortOrder: 'asc', limit: 100 });
    expect(ascending.body.data.map((x: { id: string }) => x.id)).toEqual(made.map((m) => m.id));

    const count = async (query: Record<string, string>) => (await q.api.get('/transactions', query)).body.totalCount;
    expect(await count({ customerId: carol.id })).toBe(3);
    expect(await count({ platformCustomerId: dan.platformCustomerId })).toBe(2);
    expect(await count({ accountIdentifier: dan.usd })).toBe(2);
    expect(await count({ receiverAccountIdentifier: carol.usd })).toBe(3);
    expect(await count({ senderAccountIdentifier: '$sender@other.example' })).toBe(5);
    expect(await count({ status: 'PENDING' })).toBe(1);
    expect(await count({ type: 'INCOMING' })).toBe(5);
    expect(await count({ type: 'OUTGOING' })).toBe(0);
    expect(await count({ reference: made[2].reference })).toBe(1);
    expect(await count({ customerId: q.platform.id })).toBe(0);
    const from = made[1].createdAt.toISOString();
    const to = made[3].createdAt.toISOString();
    expect(await count({ startDate: from, endDate: to })).toBe(3);
    expect(await count({ startDate: to })).toBe(2);
  });

  it('rejects bad filters with field details', async () => {
    for (const [query, field] of [
      [{ status: 'DONE' }, 'querystring.status'],
      [{ type: 'SIDEWAYS' }, 'querystring.type'],
      [{ startDate: 'yesterday' }, 'querystring.startDate'],
      [{ sortOrder: 'up' }, 'querystring.sortOrder'],
      [{ limit: 0 }, 'querystring.limit'],
    ] as const) {
      const response = await p.api.get('/transactions', query);
      expect(response.status).toBe(400);
      expect(response.body.details.errors[0].field).toBe(field);
    }
  });

  it('needs authentication', async () => {
    expect((await t.anonymous.get('/transactions')).status).toBe(401);
  });
});
