import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy, ALL_PERMISSIONS, connectedAgent, setPolicy, type TestAgent } from '../../../test/support/agents.js';
import { expectError, fund, newCustomer, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';

let t: TestApp;
let p: TestPlatform;
let alice: TestCustomer;
let bob: TestCustomer;
/** Alice's agent with every permission, and Bob's. */
let aliceAgent: TestAgent;
let bobAgent: TestAgent;
let aliceExternal: string;
let bobExternal: string;

const quoteBody = (accountId: string, destination: string, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId },
  destination: { destinationType: 'ACCOUNT', accountId: destination },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 1_000,
  ...extra,
});

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Agentowner');
  bob = await newCustomer(p, 'Bob Agentowner');
  await fund(p, alice.accounts.USD, 10_000_000);
  await fund(p, bob.accounts.USD, 10_000_000);
  aliceExternal = await usdAccount(p, alice.id);
  bobExternal = await usdAccount(p, bob.id);
  aliceAgent = await connectedAgent(t, p, alice.id, agentPolicy(), 'Alice agent');
  bobAgent = await connectedAgent(t, p, bob.id, agentPolicy(), 'Bob agent');
});
afterAll(() => t.close());

async function aliceQuote(agent: TestAgent = aliceAgent): Promise<string> {
  const res = await agent.api.post('/agents/me/quotes', quoteBody(alice.accounts.USD, alice.accounts.EUR));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

interface Endpoint {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  success: number;
}

/** Every agent endpoint, the permissions that open it, and how to call it successfully. */
const ENDPOINTS: Array<[string, string[], () => Promise<Endpoint>]> = [
  ['GET /agents/me/transactions', ['VIEW_TRANSACTIONS'], async () => ({ method: 'GET', path: '/agents/me/transactions', success: 200 })],
  [
    'GET /agents/me/transactions/{id}',
    ['VIEW_TRANSACTIONS'],
    async () => {
      const out = await aliceAgent.api.post('/agents/me/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 100 });
      return { method: 'GET', path: `/agents/me/transactions/${out.body.transaction.id}`, success: 200 };
    },
  ],
  ['GET /agents/me/internal-accounts', ['VIEW_TRANSACTIONS'], async () => ({ method: 'GET', path: '/agents/me/internal-accounts', success: 200 })],
  ['POST /agents/me/quotes', ['CREATE_QUOTES'], async () => ({ method: 'POST', path: '/agents/me/quotes', body: quoteBody(alice.accounts.USD, alice.accounts.EUR), success: 201 })],
  ['GET /agents/me/quotes/{id}', ['CREATE_QUOTES', 'EXECUTE_QUOTES'], async () => ({ method: 'GET', path: '/agents/me/quotes/QUOTE', success: 200 })],
  ['POST /agents/me/quotes/{id}/execute', ['EXECUTE_QUOTES'], async () => ({ method: 'POST', path: '/agents/me/quotes/QUOTE/execute', success: 200 })],
  [
    'POST /agents/me/transfer-out',
    ['CREATE_TRANSFERS'],
    async () => ({ method: 'POST', path: '/agents/me/transfer-out', body: { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 100 }, success: 201 }),
  ],
  [
    'POST /agents/me/transfer-in',
    ['CREATE_TRANSFERS'],
    async () => ({ method: 'POST', path: '/agents/me/transfer-in', body: { source: { accountId: aliceExternal }, destination: { accountId: alice.accounts.USD }, amount: 100 }, success: 201 }),
  ],
  ['GET /agents/me/external-accounts', ['MANAGE_EXTERNAL_ACCOUNTS'], async () => ({ method: 'GET', path: '/agents/me/external-accounts', success: 200 })],
  [
    'POST /agents/me/external-accounts',
    ['MANAGE_EXTERNAL_ACCOUNTS'],
    async () => ({
      method: 'POST',
      path: '/agents/me/external-accounts',
      body: {
        currency: 'USD',
        accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: String(Math.floor(Math.random() * 1e9)), routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Agentowner' } },
      },
      success: 201,
    }),
  ],
  ['GET /agents/me/external-accounts/{id}', ['MANAGE_EXTERNAL_ACCOUNTS'], async () => ({ method: 'GET', path: `/agents/me/external-accounts/${aliceExternal}`, success: 200 })],
  [
    'DELETE /agents/me/external-accounts/{id}',
    ['MANAGE_EXTERNAL_ACCOUNTS'],
    async () => ({ method: 'DELETE', path: `/agents/me/external-accounts/${await usdAccount(p, alice.id)}`, success: 204 }),
  ],
  ['GET /agents/me', [], async () => ({ method: 'GET', path: '/agents/me', success: 200 })],
  ['GET /agents/me/actions', [], async () => ({ method: 'GET', path: '/agents/me/actions', success: 200 })],
];

describe('agent payments that fail in the request itself', () => {
  it('replay their first answer, FAILED, under the same Idempotency-Key', async () => {
    const failing = await usdAccount(p, alice.id, '003'); // a transfer to ...003 fails at once
    const request = {
      method: 'POST',
      path: '/agents/me/transfer-out',
      body: { source: { accountId: alice.accounts.USD }, destination: { accountId: failing }, amount: 100 },
      headers: { 'idempotency-key': `agent-out-${failing}` },
    };
    const first = await aliceAgent.api.request(request);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ status: 'FAILED', transaction: { status: 'FAILED' } });
    const replay = await aliceAgent.api.request(request);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });
});

describe('agent transfers on a platform without a payment rail', () => {
  it('are refused when submitted (501), not left waiting for an approval they could never pass', async () => {
    const live = await t.createPlatform({ mode: 'PRODUCTION' });
    const owner = await newCustomer(live, 'Lena Live');
    const agent = await connectedAgent(t, live, owner.id, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }), 'Live agent');
    const transfer = { source: { accountId: owner.accounts.USD }, destination: { accountId: await usdAccount(live, owner.id) }, amount: 100 };
    expectError(await agent.api.post('/agents/me/transfer-out', transfer), 501, 'NOT_IMPLEMENTED');
    expect((await agent.api.get('/agents/me/actions')).body.data).toEqual([]);
  });
});

describe('every agent endpoint checks its permission', () => {
  it.each(ENDPOINTS)('%s needs %j', async (_name, needed, prepare) => {
    /** An agent whose permissions are set after it made its own quote (quote routes take only the agent's quotes). */
    const agentWith = async (permissions: string[]) => {
      const agent = await connectedAgent(t, p, alice.id);
      const quoteId = await aliceQuote(agent);
      expect((await setPolicy(p, agent.id, { permissions })).status).toBe(200);
      return { agent, quoteId };
    };
    const call = async ({ agent, quoteId }: { agent: TestAgent; quoteId: string }) => {
      const endpoint = await prepare();
      return agent.api.request({ method: endpoint.method, path: endpoint.path.replace('QUOTE', quoteId), body: endpoint.body ?? (endpoint.method === 'POST' ? {} : undefined) });
    };
    if (needed.length > 0) {
      const refused = await call(await agentWith(ALL_PERMISSIONS.filter((x) => !needed.includes(x))));
      expectError(refused, 403, 'PERMISSION_DENIED');
      expect(refused.body.details.requiredPermission).toBeDefined();
    }
    for (const permission of needed.length > 0 ? needed : [undefined]) {
      const allowed = await call(await agentWith(permission ? [permission] : []));
      expect(allowed.status, JSON.stringify(allowed.body)).toBe((await prepare()).success);
    }
  });

  it('with no permissions at all the agent can still read itself and its actions', async () => {
    const bare = await connectedAgent(t, p, alice.id, agentPolicy({ permissions: [] }));
    expect((await bare.api.get('/agents/me')).body.policy.permissions).toEqual([]);
    expect((await bare.api.get('/agents/me/actions')).body).toMatchObject({ data: [], totalCount: 0 });
  });

  it('immediatelyExecute needs EXECUTE_QUOTES as well', async () => {
    const creator = await connectedAgent(t, p, alice.id, agentPolicy({ permissions: ['CREATE_QUOTES'] }));
    const res = await creator.api.post('/agents/me/quotes', quoteBody(alice.accounts.USD, alice.accounts.EUR, { immediatelyExecute: true }));
    expectError(res, 403, 'PERMISSION_DENIED');
  });
});

describe('an agent sees and touches only its customer', () => {
  it('transactions: another customer\'s is 404, lists hold only its customer\'s', async () => {
    const bobOut = await bobAgent.api.post('/agents/me/transfer-out', { source: { accountId: bob.accounts.USD }, destination: { accountId: bobExternal }, amount: 150 });
    expect(bobOut.status).toBe(201);
    expectError(await aliceAgent.api.get(`/agents/me/transactions/${bobOut.body.transaction.id}`), 404, 'TRANSACTION_NOT_FOUND');
    const list = await aliceAgent.api.get('/agents/me/transactions', { limit: 100, customerId: bob.id });
    expect(list.body.data.length).toBeGreaterThan(0);
    expect(list.body.data.every((tx: any) => tx.customerId === alice.id)).toBe(true);
  });

  it('internal accounts: only its customer\'s', async () => {
    const list = await aliceAgent.api.get('/agents/me/internal-accounts', { limit: 100 });
    expect(list.body.data.map((a: any) => a.customerId)).toEqual(list.body.data.map(() => alice.id));
    expect(list.body.data.map((a: any) => a.id)).toContain(alice.accounts.USD);
    expect((await aliceAgent.api.get('/agents/me/internal-accounts', { currency: 'EUR' })).body.data.map((a: any) => a.id)).toEqual([alice.accounts.EUR]);
  });

  it.each([
    ['transfer-out from another customer\'s account', '/agents/me/transfer-out', () => ({ source: { accountId: bob.accounts.USD }, destination: { accountId: aliceExternal }, amount: 100 }), 'source.accountId'],
    ['transfer-out to another customer\'s external account', '/agents/me/transfer-out', () => ({ source: { accountId: alice.accounts.USD }, destination: { accountId: bobExternal }, amount: 100 }), 'destination.accountId'],
    ['transfer-in from another customer\'s external account', '/agents/me/transfer-in', () => ({ source: { accountId: bobExternal }, destination: { accountId: alice.accounts.USD }, amount: 100 }), 'source.accountId'],
    ['quote from another customer\'s account', '/agents/me/quotes', () => quoteBody(bob.accounts.USD, alice.accounts.EUR), 'source.accountId'],
    ['quote to another customer\'s internal account', '/agents/me/quotes', () => quoteBody(alice.accounts.USD, bob.accounts.EUR), 'destination.accountId'],
    ['quote to another customer\'s external account', '/agents/me/quotes', () => quoteBody(alice.accounts.USD, bobExternal), 'destination.accountId'],
  ])('%s is 404', async (_label, path, body, field) => {
    const res = await aliceAgent.api.post(path, body());
    expectError(res, 404, 'NOT_FOUND');
    expect(res.body.details.errors[0].field).toBe(field);
  });

  it('a transfer in from an account that cannot be pulled from is refused at once, before any approval', async () => {
    const clabe = await p.api.post('/customers/external-accounts', {
      customerId: alice.id,
      currency: 'MXN',
      accountInfo: { accountType: 'MXN_ACCOUNT', clabeNumber: '032180000118359719', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice' } },
    });
    expect(clabe.status, JSON.stringify(clabe.body)).toBe(201);
    const asking = await connectedAgent(t, p, alice.id, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const res = await asking.api.post('/agents/me/transfer-in', { source: { accountId: clabe.body.id }, destination: { accountId: alice.accounts.MXN }, amount: 100 });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0]).toMatchObject({ field: 'source.accountId', constraint: 'accountType' });
  });

  it('quotes: only the agent\'s own can be read or executed', async () => {
    const bobQuote = (await bobAgent.api.post('/agents/me/quotes', quoteBody(bob.accounts.USD, bob.accounts.EUR))).body.id;
    expectError(await aliceAgent.api.get(`/agents/me/quotes/${bobQuote}`), 404, 'QUOTE_NOT_FOUND');
    expectError(await aliceAgent.api.post(`/agents/me/quotes/${bobQuote}/execute`), 404, 'QUOTE_NOT_FOUND');
    // Even another agent of the same customer cannot use it, nor can agents use platform quotes.
    const sibling = await connectedAgent(t, p, alice.id);
    expectError(await sibling.api.get(`/agents/me/quotes/${await aliceQuote()}`), 404, 'QUOTE_NOT_FOUND');
    const platformQuote = await p.api.post('/quotes', quoteBody(alice.accounts.USD, alice.accounts.EUR));
    expectError(await aliceAgent.api.get(`/agents/me/quotes/${platformQuote.body.id}`), 404, 'QUOTE_NOT_FOUND');
  });

  it('external accounts: another customer\'s are 404 and unlisted; a foreign customerId is refused', async () => {
    expectError(await aliceAgent.api.get(`/agents/me/external-accounts/${bobExternal}`), 404, 'NOT_FOUND');
    expectError(await aliceAgent.api.delete(`/agents/me/external-accounts/${bobExternal}`), 404, 'NOT_FOUND');
    expect((await p.api.get(`/customers/external-accounts/${bobExternal}`)).status).toBe(200);
    const list = await aliceAgent.api.get('/agents/me/external-accounts', { limit: 100 });
    expect(list.body.data.every((a: any) => a.customerId === alice.id)).toBe(true);
    const res = await aliceAgent.api.post('/agents/me/external-accounts', {
      customerId: bob.id,
      currency: 'USD',
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '99887766', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Bob' } },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].field).toBe('customerId');
  });

  it('actions: another agent\'s are 404', async () => {
    const out = await bobAgent.api.post('/agents/me/transfer-out', { source: { accountId: bob.accounts.USD }, destination: { accountId: bobExternal }, amount: 120 });
    expect((await bobAgent.api.get(`/agents/me/actions/${out.body.id}`)).body.id).toBe(out.body.id);
    expectError(await aliceAgent.api.get(`/agents/me/actions/${out.body.id}`), 404, 'NOT_FOUND');
    expect((await aliceAgent.api.get('/agents/me/actions', { limit: 100 })).body.data.every((a: any) => a.agentId === aliceAgent.id)).toBe(true);
  });
});

describe('external accounts through the agent', () => {
  it('creates for its customer (customerId inferred), reads, lists, deletes', async () => {
    const created = await aliceAgent.api.post('/agents/me/external-accounts', {
      currency: 'USD',
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '55667788', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Agentowner' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^ExternalAccount:/), customerId: alice.id, currency: 'USD' });
    expect((await aliceAgent.api.get(`/agents/me/external-accounts/${created.body.id}`)).body.id).toBe(created.body.id);
    expect((await aliceAgent.api.get('/agents/me/external-accounts', { currency: 'USD', limit: 100 })).body.data.map((a: any) => a.id)).toContain(created.body.id);
    expect((await aliceAgent.api.delete(`/agents/me/external-accounts/${created.body.id}`)).status).toBe(204);
    expectError(await aliceAgent.api.get(`/agents/me/external-accounts/${created.body.id}`), 404, 'NOT_FOUND');
  });

  it('bad input is a 400 naming the field', async () => {
    const res = await aliceAgent.api.post('/agents/me/external-accounts', { currency: 'USD', accountInfo: { accountType: 'USD_ACCOUNT', routingNumber: '021000021' } });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => e.field)).toContain('accountInfo.accountNumber');
  });
});

describe('quotes through the agent', () => {
  it('responses carry source.customerId; the quote and its transaction carry the agent', async () => {
    const res = await aliceAgent.api.post('/agents/me/quotes', quoteBody(alice.accounts.USD, alice.accounts.EUR));
    expect(res.body.source).toEqual({ sourceType: 'ACCOUNT', accountId: alice.accounts.USD, customerId: alice.id });
    expect((await aliceAgent.api.get(`/agents/me/quotes/${res.body.id}`)).body.source.customerId).toBe(alice.id);
    const action = await aliceAgent.api.post(`/agents/me/quotes/${res.body.id}/execute`);
    expect(action.status, JSON.stringify(action.body)).toBe(200);
    expect(action.body).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'APPROVED', quote: { id: res.body.id, status: 'COMPLETED' }, transaction: { id: res.body.transactionId, agentId: aliceAgent.id } });
    expect((await p.api.get(`/transactions/${res.body.transactionId}`)).body.agentId).toBe(aliceAgent.id);
    expectError(await aliceAgent.api.post(`/agents/me/quotes/${res.body.id}/execute`), 409, 'QUOTE_ALREADY_EXECUTED');
  });

  it('immediatelyExecute executes it as an action', async () => {
    const res = await aliceAgent.api.post('/agents/me/quotes', quoteBody(alice.accounts.USD, alice.accounts.EUR, { immediatelyExecute: true }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ status: 'COMPLETED', source: { customerId: alice.id } });
    const actions = (await aliceAgent.api.get('/agents/me/actions', { limit: 100 })).body.data;
    expect(actions.find((a: any) => a.quote?.id === res.body.id)).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'APPROVED' });
  });

  it.each([
    ['real-time funding is not for agents', { source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' }, destination: { destinationType: 'ACCOUNT', accountId: 'x' }, lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 100 }, 'source.sourceType'],
    ['another customer in source.customerId', { ...quoteBody('SELF', 'EUR'), source: { sourceType: 'ACCOUNT', accountId: 'SELF', customerId: 'Customer:other' } }, 'source.customerId'],
    ['amount missing', { source: { sourceType: 'ACCOUNT', accountId: 'SELF' }, destination: { destinationType: 'ACCOUNT', accountId: 'EUR' }, lockedCurrencySide: 'SENDING' }, 'lockedCurrencyAmount'],
  ])('400: %s', async (_label, body, field) => {
    const json = JSON.stringify(body).replaceAll('"SELF"', JSON.stringify(alice.accounts.USD)).replaceAll('"EUR"', JSON.stringify(alice.accounts.EUR));
    const res = await aliceAgent.api.post('/agents/me/quotes', JSON.parse(json));
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => e.field)).toContain(field);
  });
});

describe('agent POSTs and Idempotency-Key', () => {
  it('a retry with the same key replays the first response; keys are per agent', async () => {
    const body = { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 333 };
    const headers = { 'idempotency-key': 'agent-retry-1' };
    const first = await aliceAgent.api.post('/agents/me/transfer-out', body, headers);
    const again = await aliceAgent.api.post('/agents/me/transfer-out', body, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.transaction.id).toBe(first.body.transaction.id);
    expectError(await aliceAgent.api.post('/agents/me/transfer-out', { ...body, amount: 334 }, headers), 422, 'IDEMPOTENCY_KEY_MISMATCH');
    const sibling = await connectedAgent(t, p, alice.id);
    const theirs = await sibling.api.post('/agents/me/transfer-out', body, headers);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it('a refused request releases its key', async () => {
    const headers = { 'idempotency-key': 'agent-retry-2' };
    const tooMuch = { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 100_001 };
    expectError(await aliceAgent.api.post('/agents/me/transfer-out', tooMuch, headers), 403, 'SPENDING_LIMIT_EXCEEDED');
    const fixed = await aliceAgent.api.post('/agents/me/transfer-out', { ...tooMuch, amount: 100 }, headers);
    expect(fixed.status).toBe(201);
  });

  it('transfer bodies are validated like the platform\'s', async () => {
    const res = await aliceAgent.api.post('/agents/me/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 0, extra: 1 });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: any) => e.field).sort()).toEqual(['amount', 'extra']);
  });

  it('platform transfers carry no agentId; agent ones do', async () => {
    const platformOut = await p.api.post('/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 100 });
    expect(platformOut.body.agentId).toBeUndefined();
    const agentOut = await aliceAgent.api.post('/agents/me/transfer-out', { source: { accountId: alice.accounts.USD }, destination: { accountId: aliceExternal }, amount: 100 });
    expect(agentOut.body.transaction.agentId).toBe(aliceAgent.id);
  });
});
