import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy, connectedAgent } from '../../../test/support/agents.js';
import { advance, expectError, newCustomer, type TestCustomer } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let other: TestPlatform;
let alice: TestCustomer;
let bob: TestCustomer;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  other = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Agentowner');
  bob = await newCustomer(p, 'Bob Agentowner');
});
afterAll(() => t.close());

async function createAgent(customerId = alice.id, policy: Record<string, unknown> = agentPolicy(), name = 'Payroll bot') {
  const res = await p.api.post('/agents', { name, customerId, policy });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { agent: any; deviceCode: any };
}

describe('POST /agents', () => {
  it('creates the agent with a one-time device code valid for 24 hours', async () => {
    const before = Date.now();
    const { agent, deviceCode } = await createAgent();
    expect(agent).toMatchObject({
      id: expect.stringMatching(/^Agent:/),
      name: 'Payroll bot',
      customerId: alice.id,
      isPaused: false,
      isConnected: false,
      policy: {
        permissions: agentPolicy().permissions,
        defaultExecutionMode: 'AUTO',
        spendingLimits: { currency: 'USD', perTransactionLimit: 100_000, dailyLimit: 500_000, dailyTransactionLimit: 100, monthlyLimit: 5_000_000 },
      },
      usage: { dailyTransactionCount: 0, dailySpend: 0, monthlySpend: 0, dailyResetDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), monthlyResetMonth: expect.stringMatching(/^\d{4}-\d{2}$/) },
    });
    expect(deviceCode).toMatchObject({ code: expect.stringMatching(/^AGT(-[0-9A-Z]{4}){4}$/), agentId: agent.id, redeemed: false });
    const lifetime = new Date(deviceCode.expiresAt).getTime() - before;
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
  });

  it('shows the next reset: tomorrow and next month (UTC)', async () => {
    const { agent } = await createAgent();
    const today = new Date(agent.createdAt);
    const tomorrow = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1));
    const nextMonth = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1));
    expect(agent.usage.dailyResetDate).toBe(tomorrow.toISOString().slice(0, 10));
    expect(agent.usage.monthlyResetMonth).toBe(nextMonth.toISOString().slice(0, 7));
  });

  it.each([
    ['name missing', { customerId: 'x', policy: agentPolicy() }, 'name'],
    ['unknown field', { name: 'x', customerId: 'x', policy: agentPolicy(), colour: 'red' }, 'colour'],
    ['permission not in the enum', { name: 'x', customerId: 'x', policy: agentPolicy({ permissions: ['FLY'] }) }, 'policy.permissions.0'],
    ['negative limit', { name: 'x', customerId: 'x', policy: agentPolicy({}, { perTransactionLimit: -1 }) }, 'policy.spendingLimits.perTransactionLimit'],
    ['execution mode', { name: 'x', customerId: 'x', policy: agentPolicy({ defaultExecutionMode: 'SOMETIMES' }) }, 'policy.defaultExecutionMode'],
  ])('400 INVALID_INPUT: %s', async (_label, body, field) => {
    const res = await p.api.post('/agents', body);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => e.field)).toContain(field);
  });

  it('400 for what the schema cannot check: currency, threshold currency, accounts of another customer', async () => {
    const res = await p.api.post('/agents', {
      name: 'x',
      customerId: alice.id,
      policy: agentPolicy({ approvalThresholds: { amount: 100 }, accountRestrictions: { allowedAccountIds: [bob.accounts.USD, alice.accounts.USD] } }, { currency: 'ZZZ' }),
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => `${e.field}:${e.constraint}`)).toEqual([
      'policy.spendingLimits.currency:currency',
      'policy.approvalThresholds.currency:required',
      'policy.accountRestrictions.allowedAccountIds.0:owner',
    ]);
  });

  it('404 for a customer that does not exist here', async () => {
    expectError(await p.api.post('/agents', { name: 'x', customerId: 'Customer:nope', policy: agentPolicy() }), 404, 'USER_NOT_FOUND');
    const foreign = await newCustomer(other);
    expectError(await p.api.post('/agents', { name: 'x', customerId: foreign.id, policy: agentPolicy() }), 404, 'USER_NOT_FOUND');
  });

  it('401 without credentials, 403 with a VIEW token', async () => {
    expectError(await t.anonymous.post('/agents', { name: 'x', customerId: alice.id, policy: agentPolicy() }), 401, 'UNAUTHORIZED');
    const token = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    expectError(await viewer.post('/agents', { name: 'x', customerId: alice.id, policy: agentPolicy() }), 403, 'PERMISSION_DENIED');
    expect((await viewer.get('/agents')).status).toBe(200);
  });

  it('a token without TRANSACT can give or leave an agent no permission that moves money', async () => {
    const token = await p.api.post('/tokens', { name: 'manager', permissions: ['MANAGE'] });
    const manager = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    for (const moving of ['CREATE_TRANSFERS', 'EXECUTE_QUOTES']) {
      const refused = await manager.post('/agents', { name: 'mover', customerId: alice.id, policy: agentPolicy({ permissions: ['VIEW_TRANSACTIONS', moving] }) });
      expectError(refused, 403, 'PERMISSION_DENIED');
      expect(refused.body.details).toEqual({ requiredPermissions: ['TRANSACT'] });
    }
    const reader = await manager.post('/agents', { name: 'reader', customerId: alice.id, policy: agentPolicy({ permissions: ['VIEW_TRANSACTIONS', 'CREATE_QUOTES'] }) });
    expect(reader.status).toBe(201);
    expectError(await manager.patch(`/agents/${reader.body.agent.id}/policy`, { permissions: ['EXECUTE_QUOTES'] }), 403, 'PERMISSION_DENIED');
    const mover = await p.api.post('/agents', { name: 'mover', customerId: alice.id, policy: agentPolicy() });
    expectError(await manager.patch(`/agents/${mover.body.agent.id}/policy`, { spendingLimits: { perTransactionLimit: 90_000 } }), 403, 'PERMISSION_DENIED');
    const narrowed = await manager.patch(`/agents/${mover.body.agent.id}/policy`, { permissions: ['VIEW_TRANSACTIONS'] });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.policy.permissions).toEqual(['VIEW_TRANSACTIONS']);
  });

  it('a token without TRANSACT can neither issue a money-moving agent its code nor resume it', async () => {
    const token = await p.api.post('/tokens', { name: 'manager', permissions: ['MANAGE'] });
    const manager = apiClient(t.corridor, { clientId: token.body.clientId, clientSecret: token.body.clientSecret });
    const key = { 'idempotency-key': `mover-${Date.now()}` };
    const mover = await p.api.post('/agents', { name: 'mover', customerId: alice.id, policy: agentPolicy() }, key);
    const id = mover.body.agent.id;
    expectError(await manager.post(`/agents/${id}/device-codes`), 403, 'PERMISSION_DENIED');
    expectError(await manager.post('/agents', { name: 'mover', customerId: alice.id, policy: agentPolicy() }, key), 403, 'PERMISSION_DENIED');
    expect((await manager.patch(`/agents/${id}`, { isPaused: true })).body.isPaused).toBe(true);
    expectError(await manager.patch(`/agents/${id}`, { isPaused: false }), 403, 'PERMISSION_DENIED');
    expect((await manager.patch(`/agents/${id}`, { name: 'renamed' })).body).toMatchObject({ name: 'renamed', isPaused: true });
    expect((await p.api.patch(`/agents/${id}`, { isPaused: false })).body.isPaused).toBe(false);
    expect((await p.api.post(`/agents/${id}/device-codes`)).status).toBe(201);
    const reader = await manager.post('/agents', { name: 'reader', customerId: alice.id, policy: agentPolicy({ permissions: ['VIEW_TRANSACTIONS'] }) });
    expect((await manager.post(`/agents/${reader.body.agent.id}/device-codes`)).status).toBe(201);
  });
});

describe('GET /agents and /agents/{agentId}', () => {
  it('lists with filters and keyset pagination', async () => {
    const platform = await t.createPlatform();
    const carol = await newCustomer(platform, 'Carol');
    const dave = await newCustomer(platform, 'Dave');
    const made = [];
    for (const [customer, name] of [[carol, 'one'], [carol, 'two'], [dave, 'three']] as const) {
      made.push((await platform.api.post('/agents', { name, customerId: customer.id, policy: agentPolicy() })).body.agent);
    }
    await platform.api.patch(`/agents/${made[1].id}`, { isPaused: true });

    const all = await platform.api.get('/agents', { limit: 2 });
    expect(all.body).toMatchObject({ hasMore: true, totalCount: 3, nextCursor: expect.any(String) });
    expect(all.body.data.map((a: any) => a.name)).toEqual(['three', 'two']);
    const rest = await platform.api.get('/agents', { limit: 2, cursor: all.body.nextCursor });
    expect(rest.body.data.map((a: any) => a.name)).toEqual(['one']);
    expect(rest.body.hasMore).toBe(false);

    expect((await platform.api.get('/agents', { customerId: carol.id })).body.totalCount).toBe(2);
    expect((await platform.api.get('/agents', { isPaused: true })).body.data.map((a: any) => a.name)).toEqual(['two']);
    expect((await platform.api.get('/agents', { isConnected: false })).body.totalCount).toBe(3);
    expect((await platform.api.get('/agents', { createdAfter: made[2].createdAt })).body.data.map((a: any) => a.name)).toEqual(['three']);
    expect((await platform.api.get('/agents', { updatedBefore: made[0].updatedAt })).body.data.map((a: any) => a.name)).toEqual(['one']);
  });

  it('gets one; unknown and other platforms\' agents are 404', async () => {
    const { agent } = await createAgent();
    expect((await p.api.get(`/agents/${agent.id}`)).body).toMatchObject({ id: agent.id, name: 'Payroll bot' });
    expectError(await p.api.get('/agents/Agent:unknown'), 404, 'NOT_FOUND');
    expectError(await other.api.get(`/agents/${agent.id}`), 404, 'NOT_FOUND');
    expectError(await other.api.patch(`/agents/${agent.id}`, { name: 'mine' }), 404, 'NOT_FOUND');
    expectError(await other.api.delete(`/agents/${agent.id}`), 404, 'NOT_FOUND');
  });
});

describe('PATCH /agents/{agentId}', () => {
  it('renames; an empty body is a 400', async () => {
    const { agent } = await createAgent();
    expect((await p.api.patch(`/agents/${agent.id}`, { name: 'Renamed' })).body).toMatchObject({ name: 'Renamed', isPaused: false });
    expectError(await p.api.patch(`/agents/${agent.id}`, {}), 400, 'INVALID_INPUT');
    expectError(await p.api.patch(`/agents/${agent.id}`, { isPaused: 'yes' }), 400, 'INVALID_INPUT');
  });

  it('pause refuses every request that would initiate something with 403 AGENT_PAUSED at once; reads go on; unpause restores it', async () => {
    const agent = await connectedAgent(t, p, alice.id);
    expect((await agent.api.get('/agents/me')).status).toBe(200);
    expect((await p.api.patch(`/agents/${agent.id}`, { isPaused: true })).body.isPaused).toBe(true);
    expect((await agent.api.get('/agents/me')).body).toMatchObject({ id: agent.id, isPaused: true });
    expect((await agent.api.get('/agents/me/actions')).status).toBe(200);
    const quote = { source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD }, destination: { destinationType: 'ACCOUNT', accountId: alice.accounts.EUR }, lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 100 };
    expectError(await agent.api.post('/agents/me/quotes', quote), 403, 'AGENT_PAUSED');
    expectError(await agent.api.post('/agents/me/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: alice.accounts.EUR }, amount: 1 }), 403, 'AGENT_PAUSED');
    expect((await p.api.patch(`/agents/${agent.id}`, { isPaused: false })).body.isPaused).toBe(false);
    expect((await agent.api.get('/agents/me')).body).toMatchObject({ id: agent.id, isPaused: false, isConnected: true });
  });
});

describe('DELETE /agents/{agentId}', () => {
  it('the token of a deleted agent is refused (401) at once; the agent is gone', async () => {
    const agent = await connectedAgent(t, p, alice.id);
    expect((await agent.api.get('/agents/me')).status).toBe(200);
    expect((await p.api.delete(`/agents/${agent.id}`)).status).toBe(204);
    expectError(await agent.api.get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await p.api.get(`/agents/${agent.id}`), 404, 'NOT_FOUND');
    expectError(await p.api.delete(`/agents/${agent.id}`), 404, 'NOT_FOUND');
  });

  it('deleting the customer deletes its agents', async () => {
    const customer = await newCustomer(p, 'Short Lived');
    const agent = await connectedAgent(t, p, customer.id);
    expect((await p.api.delete(`/customers/${customer.id}`)).status).toBe(200);
    expectError(await agent.api.get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await p.api.get(`/agents/${agent.id}`), 404, 'NOT_FOUND');
  });
});

describe('PATCH /agents/{agentId}/policy', () => {
  it('permissions replace, spendingLimits merge, the rest stays', async () => {
    const { agent } = await createAgent(alice.id, agentPolicy({ approvalThresholds: { currency: 'USD', amount: 50_000 } }));
    const res = await p.api.patch(`/agents/${agent.id}/policy`, { permissions: ['VIEW_TRANSACTIONS'], spendingLimits: { dailyLimit: null, perTransactionLimit: 7_000 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.policy).toEqual({
      permissions: ['VIEW_TRANSACTIONS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 7_000, dailyLimit: null, dailyTransactionLimit: 100, monthlyLimit: 5_000_000 },
      approvalThresholds: { currency: 'USD', amount: 50_000 },
    });
    const again = await p.api.patch(`/agents/${agent.id}/policy`, { defaultExecutionMode: 'APPROVAL_REQUIRED', accountRestrictions: { allowedAccountIds: [alice.accounts.USD] } });
    expect(again.body.policy).toMatchObject({
      permissions: ['VIEW_TRANSACTIONS'],
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      accountRestrictions: { allowedAccountIds: [alice.accounts.USD], accountRules: [] },
    });
    expect((await p.api.get(`/agents/${agent.id}`)).body.policy).toEqual(again.body.policy);
  });

  it('refuses a limit currency in which the converted limits pass the largest amount, and keeps the policy', async () => {
    const { agent } = await createAgent(alice.id, agentPolicy());
    // 50,000.00 USD is about 1.6e19 wei: in ETH, the limits would pass 9,000,000,000,000,000.
    const res = await p.api.patch(`/agents/${agent.id}/policy`, { spendingLimits: { currency: 'ETH' } });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors).toContainEqual(expect.objectContaining({ field: 'spendingLimits.monthlyLimit', constraint: 'maximum' }));
    expect((await p.api.get(`/agents/${agent.id}`)).body.policy).toEqual(agent.policy);
    expect((await p.api.get('/agents')).status).toBe(200);
    const explicit = await p.api.patch(`/agents/${agent.id}/policy`, {
      spendingLimits: { currency: 'ETH', perTransactionLimit: 10 ** 15, dailyLimit: 2 * 10 ** 15, monthlyLimit: 9 * 10 ** 15 },
    });
    expect(explicit.status, JSON.stringify(explicit.body)).toBe(200);
    expect(explicit.body.policy.spendingLimits).toMatchObject({ currency: 'ETH', monthlyLimit: 9 * 10 ** 15 });
  });

  it('takes effect at once for the connected agent', async () => {
    const agent = await connectedAgent(t, p, alice.id);
    expect((await agent.api.get('/agents/me/transactions')).status).toBe(200);
    await p.api.patch(`/agents/${agent.id}/policy`, { permissions: ['CREATE_QUOTES'] });
    expectError(await agent.api.get('/agents/me/transactions'), 403, 'PERMISSION_DENIED');
  });

  it.each([
    [{ permissions: ['NOPE'] }, 'permissions.0'],
    [{ spendingLimits: { limit: 4 } }, 'spendingLimits.limit'],
    [{ accountRestrictions: { accountRules: [{ accountId: 'InternalAccount:not-hers' }] } }, 'accountRestrictions.accountRules.0.accountId'],
    [{ spendingLimits: { currency: 'QQQ' } }, 'spendingLimits.currency'],
  ])('400 for %j', async (patch, field) => {
    const { agent } = await createAgent();
    const res = await p.api.patch(`/agents/${agent.id}/policy`, patch);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => e.field)).toContain(field);
  });
});

describe('device codes', () => {
  it('status, then redeem once: the token works, a second redeem is refused', async () => {
    const { agent, deviceCode } = await createAgent();
    const status = await p.api.get(`/agents/device-codes/${deviceCode.code}/status`);
    expect(status.body).toEqual({ code: deviceCode.code, redeemed: false, expiresAt: deviceCode.expiresAt });
    // The platform polls it with its credentials; to another platform the code is unknown.
    expectError(await t.anonymous.get(`/agents/device-codes/${deviceCode.code}/status`), 401, 'UNAUTHORIZED');
    expectError(await other.api.get(`/agents/device-codes/${deviceCode.code}/status`), 404, 'NOT_FOUND');

    const redeemed = await t.anonymous.post(`/agents/device-codes/${deviceCode.code.toLowerCase()}/redeem`);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toEqual({ agentId: agent.id, agentName: 'Payroll bot', accessToken: expect.stringMatching(/^agt_[0-9a-f]{16}_[0-9a-f]{48}$/), policy: agent.policy });
    expect((await p.api.get(`/agents/device-codes/${deviceCode.code}/status`)).body.redeemed).toBe(true);
    expect((await p.api.get(`/agents/${agent.id}`)).body.isConnected).toBe(true);

    const me = await apiClient(t.corridor, { bearer: redeemed.body.accessToken }).get('/agents/me');
    expect(me.body.id).toBe(agent.id);
    expectError(await t.anonymous.post(`/agents/device-codes/${deviceCode.code}/redeem`), 400, 'DEVICE_CODE_ALREADY_REDEEMED');
    // Only the hash of the token is stored.
    const row = await t.corridor.database.db.selectFrom('agents').selectAll().where('id', '=', agent.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(redeemed.body.accessToken.slice(21));
  });

  it('an unknown code is 404, an expired one 400 DEVICE_CODE_EXPIRED', async () => {
    expectError(await t.anonymous.post('/agents/device-codes/AGT-0000-0000-0000-0000/redeem'), 404, 'NOT_FOUND');
    expectError(await p.api.get('/agents/device-codes/AGT-0000-0000-0000-0000/status'), 404, 'NOT_FOUND');
    const platform = await t.createPlatform();
    const customer = await newCustomer(platform);
    const created = await platform.api.post('/agents', { name: 'late', customerId: customer.id, policy: agentPolicy() });
    await advance(platform, 24 * 3600 + 1);
    expectError(await t.anonymous.post(`/agents/device-codes/${created.body.deviceCode.code}/redeem`), 400, 'DEVICE_CODE_EXPIRED');
    expect((await platform.api.get(`/agents/device-codes/${created.body.deviceCode.code}/status`)).body.redeemed).toBe(false);
  });

  it('regenerating replaces the unredeemed code; once connected it is 409', async () => {
    const { agent, deviceCode } = await createAgent();
    const fresh = await p.api.post(`/agents/${agent.id}/device-codes`);
    expect(fresh.status).toBe(201);
    expect(fresh.body).toMatchObject({ agentId: agent.id, redeemed: false, code: expect.not.stringMatching(deviceCode.code) });
    expectError(await t.anonymous.post(`/agents/device-codes/${deviceCode.code}/redeem`), 404, 'NOT_FOUND');
    expect((await t.anonymous.post(`/agents/device-codes/${fresh.body.code}/redeem`)).status).toBe(200);
    expectError(await p.api.post(`/agents/${agent.id}/device-codes`), 409, 'AGENT_ALREADY_CONNECTED');
    expectError(await other.api.post(`/agents/${agent.id}/device-codes`), 404, 'NOT_FOUND');
  });

  it('an idempotent replay issues a new code: the idempotency record never holds one', async () => {
    const headers = { 'idempotency-key': 'agent-with-code-1' };
    const body = { name: 'Replayed bot', customerId: alice.id, policy: agentPolicy() };
    const first = await p.api.request({ method: 'POST', path: '/agents', body, headers });
    expect(first.status).toBe(201);
    const replay = await p.api.request({ method: 'POST', path: '/agents', body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.agent).toEqual(first.body.agent);
    expect(replay.body.deviceCode).toMatchObject({ agentId: first.body.agent.id, redeemed: false, code: expect.not.stringMatching(first.body.deviceCode.code) });
    expectError(await t.anonymous.post(`/agents/device-codes/${first.body.deviceCode.code}/redeem`), 404, 'NOT_FOUND');

    const codeHeaders = { 'idempotency-key': 'agent-code-again-1' };
    const issued = await p.api.request({ method: 'POST', path: `/agents/${first.body.agent.id}/device-codes`, headers: codeHeaders });
    const reissued = await p.api.request({ method: 'POST', path: `/agents/${first.body.agent.id}/device-codes`, headers: codeHeaders });
    expect([issued.status, reissued.status]).toEqual([201, 201]);
    expect(reissued.body.code).not.toBe(issued.body.code);
    const records = await t.corridor.database.db.selectFrom('idempotency_keys').select('response').where('key', 'in', [headers['idempotency-key'], codeHeaders['idempotency-key']]).execute();
    expect(records).toHaveLength(2);
    for (const code of [first.body.deviceCode.code, replay.body.deviceCode.code, issued.body.code, reissued.body.code]) {
      expect(JSON.stringify(records)).not.toContain(code);
    }
    expect((await t.anonymous.post(`/agents/device-codes/${reissued.body.code}/redeem`)).status).toBe(200);
  });

  it('a deleted agent\'s code is unknown', async () => {
    const { agent, deviceCode } = await createAgent();
    await p.api.delete(`/agents/${agent.id}`);
    expectError(await t.anonymous.post(`/agents/device-codes/${deviceCode.code}/redeem`), 404, 'NOT_FOUND');
  });
});

describe('access tokens', () => {
  it.each([
    ['no header', undefined],
    ['Basic credentials', 'Basic Zm9vOmJhcg=='],
    ['malformed token', 'Bearer hello'],
    ['well-formed but unknown', `Bearer agt_${'0'.repeat(16)}_${'0'.repeat(48)}`],
  ])('401 on /agents/me: %s', async (_label, authorization) => {
    const res = await t.anonymous.request({ method: 'GET', path: '/agents/me', headers: authorization ? { authorization } : {} });
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it('a right token id with a wrong secret is 401', async () => {
    const agent = await connectedAgent(t, p, alice.id);
    const forged = `${agent.accessToken.slice(0, 21)}${'f'.repeat(48)}`;
    expectError(await apiClient(t.corridor, { bearer: forged }).get('/agents/me'), 401, 'UNAUTHORIZED');
  });

  it('20 wrong secrets for one agent token lock that token out from this address, not other agents', async () => {
    const [target, other] = [await connectedAgent(t, p, alice.id), await connectedAgent(t, p, alice.id)];
    const forged = apiClient(t.corridor, { bearer: `${target.accessToken.slice(0, 21)}${'e'.repeat(48)}` });
    for (let i = 0; i < 20; i++) expectError(await forged.get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await forged.get('/agents/me'), 429, 'RATE_LIMITED');
    expectError(await target.api.get('/agents/me'), 429, 'RATE_LIMITED');
    expect((await other.api.get('/agents/me')).status).toBe(200);
  });

  it('platform credentials do not work on /agents/me, agent tokens not on platform routes; neither counts as a failed guess', async () => {
    const agent = await connectedAgent(t, p, alice.id);
    for (let i = 0; i < 25; i++) {
      expectError(await p.api.get('/agents/me'), 401, 'UNAUTHORIZED');
      expectError(await agent.api.get('/customers'), 401, 'UNAUTHORIZED');
    }
    expect((await p.api.get('/config')).status).toBe(200);
    expect((await agent.api.get('/agents/me')).status).toBe(200);
  });
});

// Last: it exhausts this address's failure allowance for device codes.
describe('device code failures are rate limited per address', () => {
  it('429 RATE_LIMITED with Retry-After after 20 failures in a minute', async () => {
    let last;
    for (let i = 0; i < 25; i++) last = await t.anonymous.post(`/agents/device-codes/AGT-NOPE-${String(i).padStart(4, '0')}-0000-0000/redeem`);
    expectError(last!, 429, 'RATE_LIMITED');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
  });
});
