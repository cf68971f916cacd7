import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError, type FieldError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import type { AccountService } from '../accounts/service.js';
import type { CustomerService } from '../customers/service.js';
import type { ExternalAccountService } from '../external-accounts/service.js';
import type { Platform, PlatformService } from '../platform/service.js';
import type { QuoteService } from '../quotes/service.js';
import type { RateService } from '../rates/service.js';
import type { TransactionService } from '../transactions/service.js';
import type { TransferService } from '../transfers/service.js';
import { createAgentAuthenticator } from './access-tokens.js';
import { createActions, ENDS_ACTION } from './actions.js';
import * as actionsRepo from './actions-repository.js';
import { createDeviceCodes } from './device-codes.js';
import { createAgentOperations } from './operations.js';
import { grants, type Permission } from '../tokens/schemas.js';
import { converter, MONEY_PERMISSIONS, type AgentPolicy, type Converter } from './policy.js';
import { limitProblems, mergePolicy, normalizePolicy, policyAccountIds, policyProblems, throwProblems } from './policy-input.js';
import * as repo from './repository.js';
import type { AgentRow } from './repository.js';
import type {
  AgentActionView,
  AgentCreateRequest,
  AgentDeviceCodeView,
  AgentListQuery,
  AgentPolicyUpdateRequest,
  AgentUpdateRequest,
  AgentView,
  ApprovalListQuery,
} from './schemas.js';
import { periodOf, usageByAgent, usageIn, usageView } from './usage.js';

type Ctx = ServiceContext<Platform>;

export interface AgentServiceDeps {
  database: Database;
  clock: Clock;
  platforms: Pick<PlatformService, 'get'>;
  customers: Pick<CustomerService, 'requireCustomer' | 'lockActive'>;
  accounts: Pick<AccountService, 'getAccount' | 'listCustomerAccounts'>;
  externalAccounts: Pick<ExternalAccountService, 'findExternalAccount' | 'createForCustomer' | 'list' | 'get' | 'remove'>;
  rates: Pick<RateService, 'getRates'>;
  quotes: Pick<QuoteService, 'createQuote' | 'executeQuote' | 'getQuote'>;
  transfers: Pick<TransferService, 'transferIn' | 'transferOut' | 'requireRail'>;
  transactions: Pick<TransactionService, 'find' | 'present' | 'get' | 'list'>;
}

const agentNotFound = () => new ServiceError('NOT_FOUND', 'agent not found');

/**
 * Agents: programmatic actors bound to one customer (docs/agents.md). The platform manages them
 * and decides their pending actions; the agent itself calls /agents/me/* with its access token.
 */
export function createAgentService(deps: AgentServiceDeps) {
  const { database, clock } = deps;
  const authentication = createAgentAuthenticator({ database, clock });
  const deviceCodes = createDeviceCodes({ database, clock, platforms: deps.platforms });
  const actions = createActions(deps);

  const currentConverter = async (): Promise<Converter> => converter((await deps.rates.getRates()).usdPrices);

  /** API views with their usage, read in one query (through `ex`: inside a transaction, its own). */
  async function views(ex: Executor, platform: PlatformRef, rows: AgentRow[]): Promise<AgentView[]> {
    const period = periodOf(clock.now(platform));
    const [byAgent, convert] = await Promise.all([usageByAgent(ex, rows.map((r) => r.id), period), currentConverter()]);
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      customerId: row.customer_id,
      isPaused: row.is_paused,
      isConnected: row.is_connected,
      policy: row.policy,
      usage: usageView(usageIn(byAgent.get(row.id) ?? [], row.policy.spendingLimits.currency, convert), period),
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    }));
  }
  const viewOf = async (ex: Executor, platform: PlatformRef, row: AgentRow) => (await views(ex, platform, [row]))[0];

  async function requireAgent(ex: Executor, platformId: string, id: string, lock = false): Promise<AgentRow> {
    const row = await repo.findAgent(ex, platformId, id, lock);
    if (!row) throw agentNotFound();
    return row;
  }

  /** Schema-free policy rules, and every account it names must be an internal account of the customer. */
  async function checkPolicy(ctx: Ctx, policy: AgentPolicy, customerId: string, prefix: string): Promise<void> {
    const { usdPrices } = await deps.rates.getRates();
    const problems: FieldError[] = policyProblems(policy, prefix, (code) => usdPrices.has(code));
    for (const { field, accountId } of policyAccountIds(policy, prefix)) {
      const account = await deps.accounts.getAccount(database.db, ctx.platform.id, accountId).catch(() => undefined);
      if (account?.customerId !== customerId) {
        problems.push({ field, constraint: 'owner', message: `${accountId} is not an internal account of customer ${customerId}` });
      }
    }
    throwProblems(problems);
  }

  /**
   * An agent that may move money acts with the caller's TRANSACT: a token without it can neither
   * give an agent such a policy nor change one (a token delegates only what it holds).
   */
  function checkDelegation(policy: AgentPolicy, held: readonly Permission[]): void {
    const moving = policy.permissions.filter((p) => MONEY_PERMISSIONS.includes(p));
    if (moving.length > 0 && !grants(held, 'TRANSACT')) {
      throw new ServiceError('PERMISSION_DENIED', `an agent with ${moving.join(' or ')} moves money: its policy needs a token with TRANSACT`, {
        details: { requiredPermissions: ['TRANSACT'] },
      });
    }
  }

  /** POST /agents: the agent and its first device code. */
  async function create(ctx: Ctx, input: AgentCreateRequest, held: readonly Permission[]): Promise<{ agent: AgentView; deviceCode: AgentDeviceCodeView }> {
    const customer = await deps.customers.requireCustomer(database.db, ctx.platform.id, input.customerId);
    const policy = normalizePolicy(input.policy);
    checkDelegation(policy, held);
    await checkPolicy(ctx, policy, customer.id, 'policy.');
    const now = clock.now(ctx.platform);
    const row: AgentRow = {
      id: newId('Agent'),
      platform_id: ctx.platform.id,
      customer_id: customer.id,
      name: input.name,
      is_paused: false,
      is_connected: false,
      policy,
      token_id: null,
      token_salt: null,
      token_hash: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    return ctx.tx(async (trx) => {
      // Under the customer's row lock: a deletion that committed since the check above is a 404;
      // one still running waits, then deletes this agent and its code (hooks.deleted).
      if (!(await deps.customers.lockActive(trx, ctx.platform.id, customer.id))) throw new ServiceError('USER_NOT_FOUND', 'customer not found');
      await repo.insertAgent(trx, row);
      const deviceCode = await deviceCodes.issue(trx, ctx.platform, row.id);
      return { agent: await viewOf(trx, ctx.platform, row), deviceCode };
    });
  }

  async function list(ctx: Ctx, query: AgentListQuery): Promise<Page<AgentView>> {
    const page = await repo.listAgents(database.db, ctx.platform.id, query);
    return { data: await views(database.db, ctx.platform, page.rows), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  async function get(ctx: Ctx, id: string): Promise<AgentView> {
    return viewOf(database.db, ctx.platform, await requireAgent(database.db, ctx.platform.id, id));
  }

  /**
   * PATCH /agents/{agentId}: name and pause. Pausing takes effect at once (see access-tokens.ts);
   * resuming gives the agent its spending power back, so it is delegation as creating one is.
   */
  async function update(ctx: Ctx, id: string, patch: AgentUpdateRequest, held: readonly Permission[]): Promise<AgentView> {
    if (patch.name === undefined && patch.isPaused === undefined) throw invalidInput('body', 'give name or isPaused', 'minProperties');
    const view = await ctx.tx(async (trx) => {
      const locked = await requireAgent(trx, ctx.platform.id, id, true);
      if (patch.isPaused === false && locked.is_paused) checkDelegation(locked.policy, held);
      const row = await repo.updateAgent(trx, ctx.platform.id, id, { name: patch.name, is_paused: patch.isPaused }, clock.now(ctx.platform));
      return viewOf(trx, ctx.platform, row!);
    });
    authentication.evict(id);
    return view;
  }

  /** PATCH /agents/{agentId}/policy: merged into the current policy under the agent's row lock. */
  async function updatePolicy(ctx: Ctx, id: string, patch: AgentPolicyUpdateRequest, held: readonly Permission[]): Promise<AgentView> {
    const current = await requireAgent(database.db, ctx.platform.id, id);
    const { usdPrices } = await deps.rates.getRates();
    // A new limit currency is checked before the current limits are converted into it.
    if (patch.spendingLimits?.currency) {
      const recast = { ...current.policy, spendingLimits: { ...current.policy.spendingLimits, currency: patch.spendingLimits.currency } };
      throwProblems(policyProblems(recast, '', (code) => usdPrices.has(code)));
    }
    const convert = converter(usdPrices);
    await checkPolicy(ctx, mergePolicy(current.policy, patch, convert), current.customer_id, '');
    const view = await ctx.tx(async (trx) => {
      const locked = await requireAgent(trx, ctx.platform.id, id, true);
      const policy = mergePolicy(locked.policy, patch, convert);
      throwProblems(limitProblems(policy, ''));
      checkDelegation(policy, held);
      const row = await repo.updateAgent(trx, ctx.platform.id, id, { policy }, clock.now(ctx.platform));
      return viewOf(trx, ctx.platform, row!);
    });
    authentication.evict(id);
    return view;
  }

  /** Deletes agents in the caller's transaction: their codes go, their pending actions are rejected. */
  async function deleteWhere(trx: Trx, platform: PlatformRef, filter: { id: string } | { customerId: string }): Promise<string[]> {
    const now = clock.now(platform);
    const ids = (await repo.deleteAgents(trx, platform.id, filter, now)).map((r) => r.id);
    await repo.deleteCodesOf(trx, ids);
    await actionsRepo.rejectPendingOf(trx, platform.id, ids, 'The agent was deleted.', now);
    return ids;
  }

  async function remove(ctx: Ctx, id: string): Promise<void> {
    const ids = await ctx.tx((trx) => deleteWhere(trx, ctx.platform, { id }));
    if (ids.length === 0) throw agentNotFound();
    authentication.evict(id);
  }

  /**
   * POST /agents/{agentId}/device-codes: a fresh code for an agent not yet connected. The code
   * becomes the agent's access token, so handing one out is delegation as creating the agent is.
   */
  async function regenerateDeviceCode(ctx: Ctx, id: string, held: readonly Permission[]): Promise<AgentDeviceCodeView> {
    return ctx.tx(async (trx) => {
      const row = await requireAgent(trx, ctx.platform.id, id, true);
      checkDelegation(row.policy, held);
      if (row.is_connected) throw new ServiceError('AGENT_ALREADY_CONNECTED', 'this agent is already connected; delete it and create a new one to reinstall');
      return deviceCodes.issue(trx, ctx.platform, id);
    });
  }

  async function listApprovals(ctx: Ctx, query: ApprovalListQuery): Promise<Page<AgentActionView>> {
    const page = await actionsRepo.listPending(database.db, ctx.platform.id, query);
    return { data: await Promise.all(page.rows.map((r) => actions.view(ctx, r))), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  const operations = createAgentOperations({ ...deps, actions, requireAgent, viewOf });

  /**
   * An agent's quote whose execution waits for the platform's approval is executed by approving
   * that action, not by the platform executing the quote itself: that would move the money while
   * the action still waits, and leave the payment out of the agent's limits.
   */
  async function refuseHeldQuote(ctx: ServiceContext, quote: { id: string; agentId: string | null }): Promise<void> {
    if (!quote.agentId || ctx.agentId) return; // an agent's own call, or the approval itself
    const pending = await actionsRepo.findQuoteAction(database.db, ctx.platform.id, quote.id, 'PENDING_APPROVAL');
    if (!pending) return;
    throw new ServiceError(
      'QUOTE_PENDING_APPROVAL',
      `agent ${pending.agent_id} asked to execute this quote and waits for your approval: approve or reject action ${pending.id} instead`,
      { details: { agentId: pending.agent_id, actionId: pending.id } },
    );
  }

  return {
    /** For src/http/auth.ts: verifies Bearer tokens. */
    authenticator: authentication.authenticator,
    requirePermission: authentication.requirePermission,
    create,
    list,
    get,
    update,
    updatePolicy,
    remove,
    regenerateDeviceCode,
    deviceCodeStatus: deviceCodes.status,
    redeemDeviceCode: deviceCodes.redeem,
    listApprovals,
    approve: actions.approve,
    reject: actions.reject,
    /** What the agent itself may do (/agents/me/*). */
    me: operations,
    /** Hook for the quotes service (beforeExecute). */
    refuseHeldQuote,
    /** Hook for the transactions service: a failed agent payment fails its action. */
    transactionHook: { statuses: ENDS_ACTION, run: actions.onTransactionChanged },
    /** Hook for the customers service: a deleted customer's agents are deleted with it. */
    deleteCustomerAgents: async (trx: Trx, platform: PlatformRef, customerId: string) => {
      for (const id of await deleteWhere(trx, platform, { customerId })) authentication.evict(id);
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;
