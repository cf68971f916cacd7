// Helpers shared by the agents tests.
import { expect } from 'vitest';
import { apiClient, type ApiClient, type TestApp, type TestPlatform } from './app.js';

export const ALL_PERMISSIONS = ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES', 'MANAGE_EXTERNAL_ACCOUNTS'];

export function agentPolicy(overrides: Record<string, unknown> = {}, limits: Record<string, unknown> = {}) {
  return {
    permissions: ALL_PERMISSIONS,
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 100_000, dailyLimit: 500_000, dailyTransactionLimit: 100, monthlyLimit: 5_000_000, ...limits },
    ...overrides,
  };
}

export interface TestAgent {
  id: string;
  code: string;
  /** A client authenticated as the agent (after redeeming its code). */
  api: ApiClient;
  accessToken: string;
}

/** Creates an agent for the customer and redeems its device code. */
export async function connectedAgent(t: TestApp, p: TestPlatform, customerId: string, policy: Record<string, unknown> = agentPolicy(), name = 'Test agent'): Promise<TestAgent> {
  const created = await p.api.post('/agents', { name, customerId, policy });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const code = created.body.deviceCode.code;
  const redeemed = await t.anonymous.post(`/agents/device-codes/${code}/redeem`);
  expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
  const accessToken = redeemed.body.accessToken;
  return { id: created.body.agent.id, code, accessToken, api: apiClient(t.corridor, { bearer: accessToken }) };
}

export function setPolicy(p: TestPlatform, agentId: string, patch: Record<string, unknown>) {
  return p.api.patch(`/agents/${agentId}/policy`, patch);
}
