import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy, connectedAgent, type TestAgent } from '../../../test/support/agents.js';
import { advance, balances, expectError, expectLedgerClean, fund, newCustomer, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { leaseTakenOver } from '../../../test/support/faults.js';

let t: TestApp;
let p: TestPlatform;
let receiver: WebhookReceiver;
let alice: TestCustomer;
let external: string;
/** Every action of this agent waits for approval. */
let agent: TestAgent;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  receiver = await startWebhookReceiver();
  await p.api.patch('/config', { webhookEndpoint: receiver.url });
  alice = await newCustomer(p, 'Alice Approver');
  await fund(p, alice.accounts.USD, 1_000_000);
  external = await usdAccount(p, alice.id);
  agent = await connectedAgent(t, p, alice.id, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }, { dailyLimit: 200_000 }));
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const sendOut = (amount: number, by: TestAgent = agent) =>
  by.api.post('/agents/me/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: external }, amount });

async function pendingTransfer(amount: number) {
  const res = await sendOut(amount);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.status).toBe('PENDING_APPROVAL');
  return res.body;
}

async function agentQuote(amount = 5_000) {
  const res = await agent.api.post('/agents/me/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
    destination: { destinationType: 'ACCOUNT', accountId: alice.accounts.EUR },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The AGENT_ACTION.PENDING_APPROVAL webhook of the action, as the receiver got it (signature checked). */
async function pendingWebhook(actionId: string): Promise<ReceivedWebhook> {
  await t.corridor.services.webhooks.deliverDue();
  const find = () => receiver.requests.find((r) => r.json?.type === 'AGENT_ACTION.PENDING_APPROVAL' && r.json.data.id === actionId);
  for (let i = 0; i < 50 && !find(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const hook = find();
  expect(hook, `webhook for ${actionId}`).toBeDefined();
  const publicKey = createPublicKey((await p.api.get('/webhooks/signing-key')).body.publicKey);
  expect(verify('sha256', hook!.rawBody, publicKey, Buffer.from(String(hook!.headers['x-service-signature']), 'base64'))).toBe(true);
  return hook!;
}

const usage = async () => (await agent.api.get('/agents/me')).body.usage;
const approve = (actionId: string, agentId = agent.id) => p.api.post(`/agents/${agentId}/actions/${actionId}/approve`);
const reject = (actionId: string, body?: unknown) => p.api.post(`/agents/${agent.id}/actions/${actionId}/reject`, body);

describe('a transfer that needs approval', () => {
  it('waits, announces itself by webhook, then executes when approved', async () => {
    const before = await balances(t, alice.accounts.USD);
    const usageBefore = await usage();
    const action = await pendingTransfer(5_000);
    expect(action).toMatchObject({
      id: expect.stringMatching(/^AgentAction:/),
      agentId: agent.id,
      customerId: alice.id,
      platformCustomerId: alice.platformCustomerId,
      type: 'TRANSFER_OUT',
      transferDetails: { amount: 5_000, currency: 'USD', sourceAccountId: alice.accounts.USD, destinationAccountId: external },
    });
    expect(action.transaction).toBeUndefined();
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
    // Pending actions count against the limits.
    expect((await usage()).dailySpend).toBe(usageBefore.dailySpend + 5_000);

    const hook = await pendingWebhook(action.id);
    expect(hook.json).toMatchObject({ id: expect.stringMatching(/^Webhook:/), type: 'AGENT_ACTION.PENDING_APPROVAL', timestamp: expect.any(String), data: action });

    const listed = await p.api.get('/agents/approvals', { agentId: agent.id });
    expect(listed.body.data.map((a: any) => a.id)).toContain(action.id);

    const approved = await approve(action.id);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ id: action.id, status: 'APPROVED', transaction: { type: 'OUTGOING', agentId: agent.id, sentAmount: { amount: 5_000 } } });
    expect((await balances(t, alice.accounts.USD)).available).toBe(before.available - 5_000);
    expect((await agent.api.get(`/agents/me/actions/${action.id}`)).body).toMatchObject({ status: 'APPROVED', transaction: { id: approved.body.transaction.id } });
    expect((await agent.api.get(`/agents/me/transactions/${approved.body.transaction.id}`)).body.agentId).toBe(agent.id);
    expect((await usage()).dailySpend).toBe(usageBefore.dailySpend + 5_000);
    expect((await p.api.get('/agents/approvals', { agentId: agent.id })).body.data.map((a: any) => a.id)).not.toContain(action.id);

    expectError(await approve(action.id), 409, 'AGENT_ACTION_NOT_PENDING');
    expectError(await reject(action.id), 409, 'AGENT_ACTION_NOT_PENDING');
  });

  it('rejected: never executed, the reason kept, its spend given back', async () => {
    const usageBefore = await usage();
    const before = await balances(t, alice.accounts.USD);
    const action = await pendingTransfer(7_000);
    expect((await usage()).dailySpend).toBe(usageBefore.dailySpend + 7_000);
    expect((await pendingWebhook(action.id)).json.data).toMatchObject({ status: 'PENDING_APPROVAL', transferDetails: { amount: 7_000 } });
    const rejected = await reject(action.id, { reason: 'Not this week.' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ id: action.id, status: 'REJECTED', rejectionReason: 'Not this week.' });
    expect(rejected.body.transaction).toBeUndefined();
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
    expect(await usage()).toMatchObject({ dailySpend: usageBefore.dailySpend, dailyTransactionCount: usageBefore.dailyTransactionCount });
    expect((await agent.api.get('/agents/me/actions', { status: 'REJECTED' })).body.data.map((a: any) => a.id)).toContain(action.id);
    expectError(await approve(action.id), 409, 'AGENT_ACTION_NOT_PENDING');
  });

  it('a rejected quote execution stands: the agent asking again for that quote is 409', async () => {
    const quote = await agentQuote(1_000);
    const submitted = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`);
    expect(submitted.body.status).toBe('PENDING_APPROVAL');
    expect((await reject(submitted.body.id)).body.status).toBe('REJECTED');
    expectError(await agent.api.post(`/agents/me/quotes/${quote.id}/execute`), 409, 'CONFLICT');
    expect((await agent.api.get('/agents/me/actions', { status: 'PENDING_APPROVAL', limit: 100 })).body.data.filter((a: any) => a.quote?.id === quote.id)).toEqual([]);
  });

  it('rejected without a reason', async () => {
    const action = await pendingTransfer(100);
    const rejected = await p.api.request({ method: 'POST', path: `/agents/${agent.id}/actions/${action.id}/reject` });
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe('REJECTED');
    expect(rejected.body.rejectionReason).toBeUndefined();
  });

  it('approved without the funds: FAILED with INSUFFICIENT_FUNDS, nothing moved, spend given back', async () => {
    const usageBefore = await usage();
    const action = await pendingTransfer(90_000);
    // Meanwhile the platform moves the money elsewhere: 50,000 stay available.
    const drain = await p.api.post('/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: external }, amount: (await balances(t, alice.accounts.USD)).available - 50_000 });
    expect(drain.status).toBe(201);
    const failed = await approve(action.id);
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ id: action.id, status: 'FAILED', failureReason: 'INSUFFICIENT_FUNDS' });
    expect(failed.body.transaction).toBeUndefined();
    expect((await balances(t, alice.accounts.USD)).available).toBe(50_000);
    expect((await usage()).dailySpend).toBe(usageBefore.dailySpend);
    await fund(p, alice.accounts.USD, 1_000_000);
  });
});

describe('a quote execution that needs approval', () => {
  it('waits with its quote, executes on approval', async () => {
    const quote = await agentQuote();
    const submitted = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`);
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'PENDING_APPROVAL', quote: { id: quote.id, status: 'PENDING' } });
    expect(submitted.body.transaction).toBeUndefined();
    expect((await pendingWebhook(submitted.body.id)).json.data.quote).toMatchObject({ id: quote.id, totalSendingAmount: quote.totalSendingAmount });
    expectError(await agent.api.post(`/agents/me/quotes/${quote.id}/execute`), 409, 'CONFLICT');

    const approved = await approve(submitted.body.id);
    expect(approved.body).toMatchObject({ status: 'APPROVED', quote: { id: quote.id, status: 'COMPLETED' }, transaction: { id: quote.transactionId, status: 'COMPLETED', agentId: agent.id } });
  });

  it('the platform cannot execute the quote itself while the execution waits: 409, approve it instead', async () => {
    const quote = await agentQuote(1_500);
    const before = await balances(t, alice.accounts.USD);
    const submitted = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`);
    expect(submitted.body.status).toBe('PENDING_APPROVAL');
    const direct = await p.api.post(`/quotes/${quote.id}/execute`);
    expectError(direct, 409, 'QUOTE_PENDING_APPROVAL');
    expect(direct.body.details).toEqual({ agentId: agent.id, actionId: submitted.body.id });
    expect((await p.api.get(`/quotes/${quote.id}`)).body.status).toBe('PENDING');
    expect(await balances(t, alice.accounts.USD)).toEqual(before);
    expect((await approve(submitted.body.id)).body).toMatchObject({ status: 'APPROVED', quote: { id: quote.id, status: 'COMPLETED' } });
    // An agent's quote with no execution waiting is the platform's to execute.
    const free = await agentQuote(1_000);
    expect((await p.api.post(`/quotes/${free.id}/execute`)).body.status).toBe('COMPLETED');
  });

  it('the quote expires while its execution waits: FAILED with QUOTE_EXPIRED at once, spend given back', async () => {
    const usageBefore = await usage();
    const quote = await agentQuote(3_000);
    const submitted = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`);
    expect(submitted.body.status).toBe('PENDING_APPROVAL');
    await pendingWebhook(submitted.body.id);
    expect((await usage()).dailySpend).toBe(usageBefore.dailySpend + quote.totalSendingAmount);

    await advance(p, 301);
    const failed = await agent.api.get(`/agents/me/actions/${submitted.body.id}`);
    expect(failed.body).toMatchObject({ id: submitted.body.id, status: 'FAILED', failureReason: 'QUOTE_EXPIRED', quote: { id: quote.id, status: 'EXPIRED' } });
    expect(failed.body.transaction).toBeUndefined();
    expect((await usage()).dailySpend).toBe(usageBefore.dailySpend);
    // Approving it now answers the action as the expiry left it (the reference's approve).
    const late = await approve(submitted.body.id);
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ id: submitted.body.id, status: 'FAILED', failureReason: 'QUOTE_EXPIRED' });
  });

  it('an approve whose Idempotency-Key a retry took over leaves the action pending', async () => {
    const quote = await agentQuote(1_000);
    const submitted = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`);
    expect(submitted.body.status).toBe('PENDING_APPROVAL');
    const restore = await leaseTakenOver(t.corridor.database.db, 'k-approve-lost');
    try {
      expectError(await p.api.post(`/agents/${agent.id}/actions/${submitted.body.id}/approve`, undefined, { 'idempotency-key': 'k-approve-lost' }), 409, 'IDEMPOTENCY_KEY_IN_USE');
    } finally {
      await restore();
    }
    expect((await agent.api.get(`/agents/me/actions/${submitted.body.id}`)).body.status).toBe('PENDING_APPROVAL');
    expect((await approve(submitted.body.id)).body).toMatchObject({ status: 'APPROVED', quote: { id: quote.id, status: 'COMPLETED' } });
  });

  it('immediatelyExecute under approval: the quote stays PENDING with an action waiting', async () => {
    const res = await agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
      destination: { destinationType: 'ACCOUNT', accountId: alice.accounts.EUR },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 2_000,
      immediatelyExecute: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ status: 'PENDING', source: { customerId: alice.id } });
    const pending = (await agent.api.get('/agents/me/actions', { status: 'PENDING_APPROVAL', limit: 100 })).body.data.find((a: any) => a.quote?.id === res.body.id);
    expect(pending).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'PENDING_APPROVAL' });
    expect((await approve(pending.id)).body).toMatchObject({ status: 'APPROVED', quote: { id: res.body.id, status: 'COMPLETED' } });
  });

  it('executing an expired quote is refused at once (409), nothing recorded', async () => {
    const quote = await agentQuote(1_000);
    await advance(p, 301);
    expectError(await agent.api.post(`/agents/me/quotes/${quote.id}/execute`), 409, 'QUOTE_EXPIRED');
  });
});

describe('approvals racing the same agent\'s AUTO submissions', () => {
  it('all succeed, on every database (no deadlock between the two paths)', async () => {
    const carol = await newCustomer(p, 'Carol Concurrent');
    await fund(p, carol.accounts.USD, 1_000_000);
    const bank = await usdAccount(p, carol.id);
    // Over $30 waits for approval, under it runs at once: both paths from the same account.
    const mixed = await connectedAgent(t, p, carol.id, agentPolicy({ approvalThresholds: { currency: 'USD', amount: 3_000 } }, { dailyLimit: 1_000_000 }));
    const out = (amount: number) => mixed.api.post('/agents/me/transfer-out', { source: { accountId: carol.accounts.USD }, destination: { accountId: bank }, amount });
    const held: string[] = [];
    for (let i = 0; i < 15; i++) {
      const res = await out(5_000);
      expect(res.body.status).toBe('PENDING_APPROVAL');
      held.push(res.body.id);
    }

    const results = await Promise.all([...held.map((id) => approve(id, mixed.id)), ...Array.from({ length: 15 }, () => out(1_000))]);
    expect(results.filter((r) => r.status >= 300).map((r) => `${r.status} ${r.body.code}`)).toEqual([]);
    expect(results.slice(0, 15).map((r) => r.body.status)).toEqual(Array(15).fill('APPROVED'));
    expect(results.slice(15).map((r) => r.status)).toEqual(Array(15).fill(201));
    expect((await balances(t, carol.accounts.USD)).available).toBe(1_000_000 - 15 * 5_000 - 15 * 1_000);
    await expectLedgerClean(t, p.platform.id);
  });

  it('one action decided three times at once: decided once, its money moved at most once', async () => {
    const before = await balances(t, alice.accounts.USD);
    const action = await pendingTransfer(4_000);
    const results = await Promise.all([approve(action.id), approve(action.id), reject(action.id)]);
    const won = results.filter((r) => r.status === 200);
    expect(won, JSON.stringify(results.map((r) => r.body))).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 409, 'AGENT_ACTION_NOT_PENDING');
    const moved = won[0].body.status === 'APPROVED' ? 4_000 : 0;
    expect((await balances(t, alice.accounts.USD)).available).toBe(before.available - moved);
    await expectLedgerClean(t, p.platform.id);
  });
});

describe('GET /agents/approvals', () => {
  it('filters by agent, customer and dates; pages; sorts', async () => {
    const other = await newCustomer(p, 'Other Customer');
    await fund(p, other.accounts.USD, 100_000);
    const otherExternal = await usdAccount(p, other.id);
    const otherAgent = await connectedAgent(t, p, other.id, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const first = await pendingTransfer(101);
    const second = await pendingTransfer(102);
    const theirs = await otherAgent.api.post('/agents/me/transfer-out', { source: { accountId: other.accounts.USD }, destination: { accountId: otherExternal }, amount: 103 });

    const mine = await p.api.get('/agents/approvals', { customerId: alice.id, limit: 100 });
    const ids = mine.body.data.map((a: any) => a.id);
    expect(ids).toEqual(expect.arrayContaining([first.id, second.id]));
    expect(ids).not.toContain(theirs.body.id);
    expect(mine.body.data.every((a: any) => a.status === 'PENDING_APPROVAL')).toBe(true);
    expect((await p.api.get('/agents/approvals', { agentId: otherAgent.id })).body.data.map((a: any) => a.id)).toEqual([theirs.body.id]);

    const page = await p.api.get('/agents/approvals', { startDate: first.createdAt, limit: 2, sortOrder: 'asc' });
    expect(page.body.data.map((a: any) => a.id)).toEqual([first.id, second.id]);
    expect(page.body).toMatchObject({ hasMore: true, totalCount: 3 });
    const rest = await p.api.get('/agents/approvals', { startDate: first.createdAt, limit: 2, sortOrder: 'asc', cursor: page.body.nextCursor });
    expect(rest.body.data.map((a: any) => a.id)).toEqual([theirs.body.id]);
    expect((await p.api.get('/agents/approvals', { endDate: new Date(Date.parse(first.createdAt) - 1).toISOString(), agentId: otherAgent.id })).body.totalCount).toBe(0);
    for (const id of [first.id, second.id]) await reject(id);
  });

  it('a deleted agent\'s pending actions are rejected', async () => {
    const doomed = await connectedAgent(t, p, alice.id, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const action = (await sendOut(100, doomed)).body;
    await p.api.delete(`/agents/${doomed.id}`);
    const res = await p.api.post(`/agents/${doomed.id}/actions/${action.id}/approve`);
    expectError(res, 409, 'AGENT_ACTION_NOT_PENDING');
    expect((await p.api.get('/agents/approvals', { agentId: doomed.id })).body.totalCount).toBe(0);
  });
});

describe('approve and reject: bad requests', () => {
  it('404 for unknown actions, actions of another agent, and other platforms', async () => {
    const action = await pendingTransfer(104);
    expectError(await approve('AgentAction:unknown'), 404, 'NOT_FOUND');
    const sibling = await connectedAgent(t, p, alice.id);
    expectError(await approve(action.id, sibling.id), 404, 'NOT_FOUND');
    const otherPlatform = await t.createPlatform();
    expectError(await otherPlatform.api.post(`/agents/${agent.id}/actions/${action.id}/approve`), 404, 'NOT_FOUND');
    expectError(await otherPlatform.api.post(`/agents/${agent.id}/actions/${action.id}/reject`), 404, 'NOT_FOUND');
    expect((await otherPlatform.api.get('/agents/approvals', { agentId: agent.id })).body.totalCount).toBe(0);
    await reject(action.id);
  });

  it('a reason that is not a string, or unknown fields, are 400', async () => {
    const action = await pendingTransfer(105);
    const res = await reject(action.id, { reason: 5, why: 'x' });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => e.field).sort()).toEqual(['reason', 'why']);
    await reject(action.id);
  });

  it('deciding needs the TRANSACT permission', async () => {
    const action = await pendingTransfer(106);
    const token = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    expectError(await viewer.post(`/agents/${agent.id}/actions/${action.id}/approve`), 403, 'PERMISSION_DENIED');
    expect((await viewer.get('/agents/approvals')).status).toBe(200);
    await reject(action.id);
  });

  it('the agent cannot approve its own actions', async () => {
    const action = await pendingTransfer(107);
    expectError(await agent.api.post(`/agents/${agent.id}/actions/${action.id}/approve`), 401, 'UNAUTHORIZED');
    await reject(action.id);
  });
});
