import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy, connectedAgent, setPolicy, type TestAgent } from '../../../test/support/agents.js';
import { advance, balances, expectError, fund, newCustomer, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

interface Setup {
  customer: TestCustomer;
  external: string;
  agent: TestAgent;
}

/** A funded customer, one of its external accounts, and a connected agent with the given policy. */
async function setup(policy: Record<string, unknown>, platform: TestPlatform = p): Promise<Setup> {
  const customer = await newCustomer(platform);
  await fund(platform, customer.accounts.USD, 10_000_000);
  const external = await usdAccount(platform, customer.id);
  return { customer, external, agent: await connectedAgent(t, platform, customer.id, policy) };
}

function send(s: Setup, amount: number, extra: { from?: string; to?: string } = {}) {
  return s.agent.api.post('/agents/me/transfer-out', { source: { accountId: extra.from ?? s.customer.accounts.USD }, destination: { accountId: extra.to ?? s.external }, amount });
}

async function usage(s: Setup) {
  return (await s.agent.api.get('/agents/me')).body.usage;
}

/** Expects the answer of an allowed action, or the 403 of the limit named. */
function expectOutcome(res: ApiResponse, expected: string) {
  if (expected === 'APPROVED' || expected === 'PENDING_APPROVAL') {
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe(expected);
    return;
  }
  expectError(res, 403, 'SPENDING_LIMIT_EXCEEDED');
  expect(res.body.details.limit).toBe(expected);
}

describe('limits at their boundaries (limit −1, =, +1)', () => {
  const limits = { perTransactionLimit: 1_000, dailyLimit: 5_000, dailyTransactionLimit: 3, monthlyLimit: 20_000 };

  it.each([
    ['perTransactionLimit −1', { perTransactionLimit: 1_000 }, [], 999, 'APPROVED'],
    ['perTransactionLimit =', { perTransactionLimit: 1_000 }, [], 1_000, 'APPROVED'],
    ['perTransactionLimit +1', { perTransactionLimit: 1_000 }, [], 1_001, 'perTransactionLimit'],
    ['dailyLimit −1', { dailyLimit: 1_500 }, [1_000], 499, 'APPROVED'],
    ['dailyLimit =', { dailyLimit: 1_500 }, [1_000], 500, 'APPROVED'],
    ['dailyLimit +1', { dailyLimit: 1_500 }, [1_000], 501, 'dailyLimit'],
    ['dailyTransactionLimit: the last one allowed', { dailyTransactionLimit: 3 }, [100, 100], 100, 'APPROVED'],
    ['dailyTransactionLimit: one more refused', { dailyTransactionLimit: 3 }, [100, 100, 100], 100, 'dailyTransactionLimit'],
    ['monthlyLimit −1', { monthlyLimit: 1_500, dailyLimit: null }, [1_000], 499, 'APPROVED'],
    ['monthlyLimit =', { monthlyLimit: 1_500, dailyLimit: null }, [1_000], 500, 'APPROVED'],
    ['monthlyLimit +1', { monthlyLimit: 1_500, dailyLimit: null }, [1_000], 501, 'monthlyLimit'],
  ])('%s', async (_label, override, earlier, amount, expected) => {
    const s = await setup(agentPolicy({}, { ...limits, ...override }));
    for (const before of earlier) expectOutcome(await send(s, before), 'APPROVED');
    const before = await balances(t, s.customer.accounts.USD);
    const res = await send(s, amount);
    expectOutcome(res, expected);
    if (expected !== 'APPROVED') {
      // A refusal moved nothing and counts nothing.
      expect(await balances(t, s.customer.accounts.USD)).toEqual(before);
      const spent = earlier.reduce((a, b) => a + b, 0);
      expect(await usage(s)).toMatchObject({ dailySpend: spent, dailyTransactionCount: earlier.length, monthlySpend: spent });
    }
  });

  it('the refusal is the error envelope, naming the limit, its amount and the usage', async () => {
    const s = await setup(agentPolicy({}, { perTransactionLimit: 1_000, dailyLimit: 1_500 }));
    const perTransaction = await send(s, 1_001);
    expect(perTransaction.status).toBe(403);
    expect(perTransaction.body).toEqual({
      status: 403,
      code: 'SPENDING_LIMIT_EXCEEDED',
      message: "the amount exceeds the agent's per-transaction limit",
      details: { limit: 'perTransactionLimit', limitAmount: 1_000, amount: 1_001, currency: 'USD' },
    });
    expectOutcome(await send(s, 1_000), 'APPROVED');
    expect((await send(s, 501)).body).toEqual({
      status: 403,
      code: 'SPENDING_LIMIT_EXCEEDED',
      message: 'the amount would take the agent past its daily limit',
      details: { limit: 'dailyLimit', limitAmount: 1_500, dailySpend: 1_000, amount: 501, currency: 'USD' },
    });
  });

  it('transfers in count like transfers out', async () => {
    const s = await setup(agentPolicy({}, { dailyLimit: 1_000 }));
    const pull = (amount: number) => s.agent.api.post('/agents/me/transfer-in', { source: { accountId: s.external }, destination: { accountId: s.customer.accounts.USD }, amount });
    expectOutcome(await pull(600), 'APPROVED');
    expectOutcome(await pull(401), 'dailyLimit');
    expectOutcome(await send(s, 400), 'APPROVED');
  });

  it('quote executions count their total sending amount, fees included', async () => {
    const s = await setup(agentPolicy({}, { dailyLimit: 10_000 }));
    const quote = await s.agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: s.customer.accounts.USD },
      destination: { destinationType: 'ACCOUNT', accountId: s.customer.accounts.EUR },
      lockedCurrencySide: 'RECEIVING',
      lockedCurrencyAmount: 5_000,
    });
    expect(quote.body.feesIncluded).toBeGreaterThan(0);
    expect((await s.agent.api.post(`/agents/me/quotes/${quote.body.id}/execute`)).body.status).toBe('APPROVED');
    expect((await usage(s)).dailySpend).toBe(quote.body.totalSendingAmount);
    expectOutcome(await send(s, 10_000 - quote.body.totalSendingAmount + 1), 'dailyLimit');
    expectOutcome(await send(s, 10_000 - quote.body.totalSendingAmount), 'APPROVED');
  });

  it('a policy change applies to the very next action', async () => {
    const s = await setup(agentPolicy({}, { perTransactionLimit: 1_000 }));
    expectOutcome(await send(s, 900), 'APPROVED');
    await setPolicy(p, s.agent.id, { spendingLimits: { perTransactionLimit: 800 } });
    expectOutcome(await send(s, 900), 'perTransactionLimit');
  });
});

describe('other currencies are converted at the rate of evaluation', () => {
  // The built-in table: 0.862 EUR per USD, so 10000 USD cents are exactly 8620 EUR cents.
  it.each([
    [9_999, 'APPROVED'], // 8619.138 → 8620 EUR cents
    [10_000, 'APPROVED'], // 8620
    [10_001, 'perTransactionLimit'], // 8620.862 → 8621
  ])('a USD transfer of %i cents against an 8620 EUR cent limit: %s', async (amount, expected) => {
    const s = await setup(agentPolicy({}, { currency: 'EUR', perTransactionLimit: 8_620, dailyLimit: null, monthlyLimit: null }));
    expectOutcome(await send(s, amount), expected);
    if (expected === 'APPROVED') expect(await usage(s)).toMatchObject({ dailySpend: Math.ceil(amount * 0.862), monthlySpend: Math.ceil(amount * 0.862) });
  });

  it.each([
    [9_998, 'APPROVED'], // 8619
    [9_999, 'PENDING_APPROVAL'], // 8620: at the threshold
  ])('a USD transfer of %i cents against an 8620 EUR cent approval threshold: %s', async (amount, expected) => {
    const s = await setup(agentPolicy({ approvalThresholds: { currency: 'EUR', amount: 8_620 } }));
    expectOutcome(await send(s, amount), expected);
  });
});

describe('accounts', () => {
  it('allowedAccountIds: other accounts of the customer are refused (403 FORBIDDEN)', async () => {
    const customer = await newCustomer(p);
    await fund(p, customer.accounts.USD, 100_000);
    const external = await usdAccount(p, customer.id);
    const agent = await connectedAgent(t, p, customer.id, agentPolicy({ accountRestrictions: { allowedAccountIds: [customer.accounts.EUR] } }));
    const s = { customer, external, agent };
    const res = await send(s, 100);
    expectError(res, 403, 'FORBIDDEN');
    expect(res.body.details.accountId).toBe(customer.accounts.USD);
    const quote = await agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: customer.accounts.USD },
      destination: { destinationType: 'ACCOUNT', accountId: customer.accounts.EUR },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expectError(quote, 403, 'FORBIDDEN');
    await setPolicy(p, agent.id, { accountRestrictions: { allowedAccountIds: [customer.accounts.USD] } });
    expectOutcome(await send(s, 100), 'APPROVED');
  });

  it('accountRules: their own execution mode and per-transaction limit', async () => {
    const s = await setup(agentPolicy());
    await setPolicy(p, s.agent.id, {
      accountRestrictions: { accountRules: [{ accountId: s.customer.accounts.USD, executionMode: 'APPROVAL_REQUIRED', perTransactionLimit: 2_000 }] },
    });
    expectOutcome(await send(s, 2_000), 'PENDING_APPROVAL');
    expectOutcome(await send(s, 2_001), 'accountRules.perTransactionLimit');
  });

  it('defaultExecutionMode APPROVAL_REQUIRED holds every action', async () => {
    const s = await setup(agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const before = await balances(t, s.customer.accounts.USD);
    const res = await send(s, 100);
    expectOutcome(res, 'PENDING_APPROVAL');
    expect(res.body.transaction).toBeUndefined();
    expect(await balances(t, s.customer.accounts.USD)).toEqual(before);
    expect(await usage(s)).toMatchObject({ dailySpend: 100, dailyTransactionCount: 1 });
  });
});

describe('usage resets on UTC day and month boundaries of the platform clock', () => {
  /** Moves the platform clock to just before `target` (never backwards). */
  async function advanceTo(platform: TestPlatform, target: Date): Promise<Date> {
    const now = new Date((await advance(platform, 1)).body.now);
    const seconds = Math.floor((target.getTime() - now.getTime()) / 1000);
    if (seconds < 1) return now;
    return new Date((await advance(platform, seconds)).body.now);
  }

  /** Noon on the 15th of the month after the platform's current one. */
  async function midMonth(platform: TestPlatform): Promise<Date> {
    const now = new Date((await advance(platform, 1)).body.now);
    return advanceTo(platform, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 15, 12)));
  }

  it('the daily counters start again at 00:00 UTC', async () => {
    const platform = await t.createPlatform();
    const s = await setup(agentPolicy({}, { dailyLimit: 1_000, dailyTransactionLimit: 5, monthlyLimit: null }), platform);
    const noon = await midMonth(platform);
    expectOutcome(await send(s, 1_000), 'APPROVED');
    expect(await usage(s)).toMatchObject({ dailySpend: 1_000, dailyTransactionCount: 1, dailyResetDate: '' + noon.toISOString().slice(0, 8) + '16' });

    await advanceTo(platform, new Date(Date.UTC(noon.getUTCFullYear(), noon.getUTCMonth(), 15, 23, 59, 50)));
    expectOutcome(await send(s, 100), 'dailyLimit');
    await advance(platform, 15);
    expectOutcome(await send(s, 1_000), 'APPROVED');
    expect(await usage(s)).toMatchObject({ dailySpend: 1_000, dailyTransactionCount: 1, monthlySpend: 2_000, dailyResetDate: noon.toISOString().slice(0, 8) + '17' });
  });

  it('the monthly counter starts again on the first of the month', async () => {
    const platform = await t.createPlatform();
    const s = await setup(agentPolicy({}, { dailyLimit: null, monthlyLimit: 2_000 }), platform);
    const noon = await midMonth(platform);
    const nextMonth = new Date(Date.UTC(noon.getUTCFullYear(), noon.getUTCMonth() + 1, 1));
    expectOutcome(await send(s, 1_500), 'APPROVED');
    await advance(platform, 86_400);
    expectOutcome(await send(s, 500), 'APPROVED');
    expect((await usage(s)).monthlyResetMonth).toBe(nextMonth.toISOString().slice(0, 7));

    await advanceTo(platform, new Date(nextMonth.getTime() - 10_000));
    expectOutcome(await send(s, 100), 'monthlyLimit');
    await advance(platform, 15);
    expectOutcome(await send(s, 2_000), 'APPROVED');
    const after = await usage(s);
    expect(after).toMatchObject({ monthlySpend: 2_000, dailySpend: 2_000, dailyTransactionCount: 1 });
    expect(after.monthlyResetMonth).toBe(new Date(Date.UTC(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1)).toISOString().slice(0, 7));
  });

  const approve = (platform: TestPlatform, s: Setup, actionId: string) => platform.api.post(`/agents/${s.agent.id}/actions/${actionId}/approve`);

  it('an action held into a new month counts in the month it is approved in, within its limit', async () => {
    const platform = await t.createPlatform();
    const s = await setup(agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }, { dailyLimit: null, monthlyLimit: 1_000 }), platform);
    const noon = await midMonth(platform);
    const held = await send(s, 1_000);
    expectOutcome(held, 'PENDING_APPROVAL');
    await advanceTo(platform, new Date(Date.UTC(noon.getUTCFullYear(), noon.getUTCMonth() + 1, 2, 12)));
    const fresh = await send(s, 1_000);
    expectOutcome(fresh, 'PENDING_APPROVAL');

    const late = await approve(platform, s, held.body.id);
    expect(late.status, JSON.stringify(late.body)).toBe(200);
    expect(late.body).toMatchObject({ status: 'FAILED', failureReason: 'SPENDING_LIMIT_EXCEEDED' });
    expect((await approve(platform, s, fresh.body.id)).body.status).toBe('APPROVED');
    expect(await usage(s)).toMatchObject({ monthlySpend: 1_000, dailySpend: 1_000, dailyTransactionCount: 1 });
    expect((await balances(t, s.customer.accounts.USD)).available).toBe(10_000_000 - 1_000);
  });

  it('an action held into the next day of the same month counts once in the month', async () => {
    const platform = await t.createPlatform();
    const s = await setup(agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }, { dailyLimit: 1_000, monthlyLimit: 1_500 }), platform);
    const noon = await midMonth(platform);
    const held = await send(s, 1_000);
    expectOutcome(held, 'PENDING_APPROVAL');
    await advanceTo(platform, new Date(noon.getTime() + 86_400_000));
    const approved = await approve(platform, s, held.body.id);
    expect(approved.body.status, JSON.stringify(approved.body)).toBe('APPROVED');
    expect(await usage(s)).toMatchObject({ monthlySpend: 1_000, dailySpend: 1_000, dailyTransactionCount: 1 });
  });
});

describe('failed payments give their spend back', () => {
  it('a transfer the rail fails at once (suffix 002): the action is FAILED and stops counting', async () => {
    const s = await setup(agentPolicy({}, { dailyLimit: 1_000 }));
    const failing = await usdAccount(p, s.customer.id, '002');
    const res = await send(s, 1_000, { to: failing });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'FAILED', failureReason: 'COUNTERPARTY_POST_TX_FAILED', transaction: { status: 'FAILED' } });
    expect(await usage(s)).toMatchObject({ dailySpend: 0, dailyTransactionCount: 0 });
    expectOutcome(await send(s, 1_000), 'APPROVED');
  });

  it('a transfer that fails later (suffix 004, after 1 s) gives its spend back then', async () => {
    const s = await setup(agentPolicy({}, { dailyLimit: 1_000 }));
    const failing = await usdAccount(p, s.customer.id, '004');
    const res = await send(s, 1_000, { to: failing });
    expect(res.body).toMatchObject({ status: 'APPROVED', transaction: { status: 'PROCESSING' } });
    expectOutcome(await send(s, 100), 'dailyLimit');
    await advance(p, 2);
    expect((await s.agent.api.get(`/agents/me/actions/${res.body.id}`)).body).toMatchObject({ status: 'FAILED', failureReason: 'COUNTERPARTY_POST_TX_FAILED', transaction: { status: 'FAILED' } });
    expect((await usage(s)).dailySpend).toBe(0);
  });

  it('a refused execution (insufficient funds) records nothing', async () => {
    const customer = await newCustomer(p);
    await fund(p, customer.accounts.USD, 500);
    const external = await usdAccount(p, customer.id);
    const s = { customer, external, agent: await connectedAgent(t, p, customer.id) };
    expectError(await send(s, 501), 400, 'INSUFFICIENT_FUNDS');
    expect(await usage(s)).toMatchObject({ dailySpend: 0, dailyTransactionCount: 0 });
    expect((await s.agent.api.get('/agents/me/actions')).body.totalCount).toBe(0);
  });
});

describe('concurrency', () => {
  it('20 parallel transfers racing a daily limit never pass it', async () => {
    const s = await setup(agentPolicy({}, { perTransactionLimit: 1_000, dailyLimit: 10_000, dailyTransactionLimit: 1_000, monthlyLimit: null }));
    const before = await balances(t, s.customer.accounts.USD);
    const results = await Promise.all(Array.from({ length: 20 }, () => send(s, 1_000)));
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 403);
    expect(accepted.length + refused.length, JSON.stringify(results.filter((r) => r.status !== 201 && r.status !== 403).map((r) => r.body))).toBe(20);
    expect(accepted).toHaveLength(10);
    for (const r of refused) expect(r.body).toMatchObject({ code: 'SPENDING_LIMIT_EXCEEDED', details: { limit: 'dailyLimit' } });
    expect(await usage(s)).toMatchObject({ dailySpend: 10_000, dailyTransactionCount: 10 });
    const after = await balances(t, s.customer.accounts.USD);
    expect(before.available - after.available).toBe(10_000);
  });

  it('parallel requests racing the daily count with pending approvals never pass it either', async () => {
    const s = await setup(agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }, { dailyTransactionLimit: 4 }));
    const results = await Promise.all(Array.from({ length: 12 }, () => send(s, 100)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(4);
    expect((await p.api.get('/agents/approvals', { agentId: s.agent.id })).body.totalCount).toBe(4);
  });
});
