// Agents paying from an embedded wallet: the owner's session signature is still required.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy, connectedAgent, type TestAgent } from '../../../test/support/agents.js';
import { balances, usdAccount } from '../../../test/support/quotes.js';
import { emailSession, expectRefused, newWallet, signedRequest, verifyEmail, walletPlatform, walletQuote, type OpenedSession, type Wallet } from '../../../test/support/wallets.js';
import { signPayload } from '../../wallet-client/index.js';

let t: TestApp;
let tp: TestPlatform;
let wallet: Wallet;
let session: OpenedSession & { credentialId: string };
let agent: TestAgent;
let bank: string;
const FUNDS = 100_000;

beforeAll(async () => {
  t = await startTestApp();
  tp = await walletPlatform(t, 'SANDBOX');
  wallet = await newWallet(tp);
  session = await emailSession(t, wallet);
  await tp.api.post(`/sandbox/internal-accounts/${wallet.accountId}/fund`, { amount: FUNDS });
  bank = await usdAccount(tp, wallet.customerId);
  agent = await connectedAgent(t, tp, wallet.customerId, agentPolicy({ approvalThresholds: { currency: 'USD', amount: 3_000 } }));
});
afterAll(() => t.close());

async function agentWalletQuote(amount: number): Promise<{ id: string; payloadToSign: string }> {
  const { quote, payloadToSign } = await walletQuote(agent.api, '/agents/me/quotes', wallet.accountId, bank, amount);
  return { id: quote.id, payloadToSign };
}

describe('an agent paying from an embedded wallet', () => {
  it('needs the owner\'s session signature to execute, and runs with it', async () => {
    const quote = await agentWalletQuote(1_000);
    expectRefused(await agent.api.post(`/agents/me/quotes/${quote.id}/execute`), 401, 'UNAUTHORIZED');
    expect(await balances(t, wallet.accountId)).toEqual({ available: FUNDS, posted: FUNDS });

    const signed = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`, undefined, {
      'service-wallet-signature': signPayload(quote.payloadToSign, session.key),
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body).toMatchObject({ status: 'APPROVED', transaction: { agentId: agent.id } });
    expect((await balances(t, wallet.accountId)).available).toBe(FUNDS - 1_000);
  });

  it('a held wallet payment keeps the signature, and the approval executes with it', async () => {
    const before = await balances(t, wallet.accountId);
    const quote = await agentWalletQuote(5_000);
    const signature = signPayload(quote.payloadToSign, session.key);
    const held = await agent.api.post(`/agents/me/quotes/${quote.id}/execute`, undefined, { 'service-wallet-signature': signature });
    expect(held.status, JSON.stringify(held.body)).toBe(200);
    expect(held.body.status).toBe('PENDING_APPROVAL');
    expect(JSON.stringify(held.body)).not.toContain(signature);
    expect(JSON.stringify((await tp.api.get('/agents/approvals', { agentId: agent.id })).body)).not.toContain(signature);

    const approved = await tp.api.post(`/agents/${agent.id}/actions/${held.body.id}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'APPROVED', transaction: { agentId: agent.id } });
    expect((await balances(t, wallet.accountId)).available).toBe(before.available - 5_000);
  });

  it('a held wallet payment without a signature, or signed by a session revoked since, fails on approval and moves no money', async () => {
    const before = await balances(t, wallet.accountId);
    const unsigned = await agentWalletQuote(4_000);
    const heldUnsigned = await agent.api.post(`/agents/me/quotes/${unsigned.id}/execute`);
    expect(heldUnsigned.body.status).toBe('PENDING_APPROVAL');

    const second = await verifyEmail(t, wallet.api, session.credentialId, '000000');
    const signed = await agentWalletQuote(4_500);
    const heldSigned = await agent.api.post(`/agents/me/quotes/${signed.id}/execute`, undefined, {
      'service-wallet-signature': signPayload(signed.payloadToSign, second.key),
    });
    expect(heldSigned.body.status).toBe('PENDING_APPROVAL');
    const revoked = await signedRequest(wallet.api, 'DELETE', `/auth/sessions/${second.id}`, undefined, session.key);
    expect(revoked.response.status, JSON.stringify(revoked.response.body)).toBe(204);

    for (const action of [heldUnsigned.body, heldSigned.body]) {
      const approved = await tp.api.post(`/agents/${agent.id}/actions/${action.id}/approve`);
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body).toMatchObject({ status: 'FAILED', failureReason: 'UNAUTHORIZED' });
    }
    expect(await balances(t, wallet.accountId)).toEqual(before);
    expect((await tp.api.get(`/quotes/${signed.id}`)).body.status).toBe('PENDING');
  });
});

describe('requests an embedded wallet could never pass', () => {
  /** The agent's quotes and actions, and its usage: none of it may change on a refusal. */
  async function footprint() {
    const { db } = t.corridor.database;
    const quotes = await db.selectFrom('quotes').select('id').where('agent_id', '=', agent.id).execute();
    const actions = await db.selectFrom('agent_actions').select('id').where('agent_id', '=', agent.id).execute();
    const { usage } = (await agent.api.get('/agents/me')).body;
    return { quotes: quotes.length, actions: actions.length, count: usage.dailyTransactionCount, spend: usage.dailySpend };
  }

  // 1,000 would run at once (AUTO), 5,000 wait for approval: both are refused before either.
  it.each([1_000, 5_000])('a transfer out of the wallet (%i) is 400 at once, held or not, and counts nothing', async (amount) => {
    const before = await footprint();
    const res = await agent.api.post('/agents/me/transfer-out', { source: { accountId: wallet.accountId }, destination: { accountId: bank }, amount });
    expectRefused(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors).toEqual([expect.objectContaining({ field: 'source.accountId', constraint: 'accountType' })]);
    expect(await footprint()).toEqual(before);
  });

  it.each([1_000, 5_000])('an immediately executed quote from the wallet (%i) is 400 and creates nothing', async (amount) => {
    const before = await footprint();
    const res = await agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: wallet.accountId },
      destination: { destinationType: 'ACCOUNT', accountId: bank },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: amount,
      immediatelyExecute: true,
    });
    expectRefused(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors).toEqual([expect.objectContaining({ field: 'immediatelyExecute' })]);
    expect(await footprint()).toEqual(before);
  });
});
