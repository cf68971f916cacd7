import { Type } from 'typebox';
import { errors, IdParam, NoContent } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { InternalAccountView } from '../accounts/schemas.js';
import { addExternalAccountSchemas, CustomerExternalAccountCreate, ExternalAccountRef } from '../external-accounts/schemas.js';
import { ExecuteHeaders, Quote, QuoteRequest } from '../quotes/schemas.js';
import { Transaction } from '../transactions/schemas.js';
import { TransferInRequest, TransferOutRequest } from '../transfers/schemas.js';
import type { AgentPermission } from './policy.js';
import { ActionListQuery, Agent, AgentAction, AgentExternalAccountQuery, AgentInternalAccountQuery, AgentTransactionListQuery } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Agent routes: the policy must grant one of these permissions. */
    agentPermission?: AgentPermission[];
  }
}

const TAGS = ['Agent Operations'];
const AGENT = { auth: 'agent' as const };
const security = [{ AgentAuth: [] }];
// Views are built field by field; serializing through the external-account union is slow (see its routes).
const serializerCompiler = () => (data: unknown) => JSON.stringify(data);

const AgentExternalAccountCreate = Type.Object(
  {
    ...CustomerExternalAccountCreate.properties,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The agent\'s customer; may be left out.' })),
  },
  { additionalProperties: false },
);

/**
 * What an agent calls with its Bearer token (/agents/me/*). Each request is bound to the agent's
 * customer; `agentPermission` names the policy permission a route needs.
 */
export function agentRoutes(app: Api, services: Services): void {
  app.register(async (scope) => {
    addExternalAccountSchemas(scope);
    scope.addHook('preHandler', async (request) => {
      const needed = request.routeOptions.config.agentPermission;
      if (needed && request.principal?.kind === 'agent') await services.agents.requirePermission(request.platform.id, request.principal.agentId, needed);
    });
    readRoutes(scope as unknown as Api, services);
    moneyRoutes(scope as unknown as Api, services);
    externalAccountRoutes(scope as unknown as Api, services);
  });
}

/** The calling agent and its customer. */
function caller(request: { principal: { kind: string } & Record<string, any> }) {
  return { agentId: request.principal.agentId as string, customerId: request.principal.customerId as string };
}

function readRoutes(app: Api, { agents }: Services): void {
  const me = agents.me;
  app.get(
    '/agents/me',
    { schema: { summary: 'Get the calling agent', description: 'Its policy and usage.', tags: TAGS, security, response: { 200: Agent, ...errors(403) } }, config: AGENT },
    async (request) => me.profile(request.ctx, caller(request)),
  );
  app.get(
    '/agents/me/transactions',
    {
      schema: { summary: 'List the customer\'s transactions', description: 'Needs VIEW_TRANSACTIONS.', tags: TAGS, security, querystring: AgentTransactionListQuery, response: { 200: PageOf(Transaction, 'transactions'), ...errors(403) } },
      config: { ...AGENT, agentPermission: ['VIEW_TRANSACTIONS'] },
    },
    async (request) => me.listTransactions(request.ctx, caller(request), request.query),
  );
  app.get(
    '/agents/me/transactions/:transactionId',
    {
      schema: {
        summary: 'Get one of the customer\'s transactions',
        description: 'Needs VIEW_TRANSACTIONS; another customer\'s transaction is 404.',
        tags: TAGS,
        security,
        params: IdParam('transactionId', 'Transaction identifier (`Transaction:…`).'),
        response: { 200: Transaction, ...errors(403, 404) },
      },
      config: { ...AGENT, agentPermission: ['VIEW_TRANSACTIONS'] },
    },
    async (request) => me.getTransaction(request.ctx, caller(request), request.params.transactionId),
  );
  app.get(
    '/agents/me/internal-accounts',
    {
      schema: { summary: 'List the customer\'s internal accounts', description: 'With balances. Needs VIEW_TRANSACTIONS.', tags: TAGS, security, querystring: AgentInternalAccountQuery, response: { 200: PageOf(InternalAccountView, 'internal accounts'), ...errors(403) } },
      config: { ...AGENT, agentPermission: ['VIEW_TRANSACTIONS'] },
    },
    async (request) => me.listInternalAccounts(request.ctx, caller(request), request.query),
  );
  app.get(
    '/agents/me/actions',
    { schema: { summary: 'List the agent\'s actions', description: 'Poll here for approval decisions.', tags: TAGS, security, querystring: ActionListQuery, response: { 200: PageOf(AgentAction, 'actions'), ...errors(403) } }, config: AGENT },
    async (request) => me.listActions(request.ctx, caller(request), request.query),
  );
  app.get(
    '/agents/me/actions/:actionId',
    {
      schema: { summary: 'Get one of the agent\'s actions', tags: TAGS, security, params: IdParam('actionId', 'Action identifier (`AgentAction:…`).'), response: { 200: AgentAction, ...errors(403, 404) } },
      config: AGENT,
    },
    async (request) => me.getAction(request.ctx, caller(request), request.params.actionId),
  );
}

function moneyRoutes(app: Api, { agents }: Services): void {
  const me = agents.me;
  const QuoteId = IdParam('quoteId', 'Quote identifier (`Quote:…`).');
  app.post(
    '/agents/me/quotes',
    {
      schema: {
        summary: 'Create a quote for the customer',
        description:
          'Needs CREATE_QUOTES; the source must be an internal account of the customer allowed by the policy. With `immediatelyExecute` (also needs EXECUTE_QUOTES) the quote is executed as an EXECUTE_QUOTE action: at once under AUTO, or left PENDING with an action awaiting approval. Supports `Idempotency-Key`.',
        tags: TAGS,
        security,
        body: QuoteRequest,
        response: { 201: Quote, ...errors(403, 404, 409, 501) },
      },
      config: { ...AGENT, agentPermission: ['CREATE_QUOTES'] },
    },
    async (request, reply) => reply.code(201).send(await me.createQuote(request.ctx, caller(request), request.body)),
  );
  app.get(
    '/agents/me/quotes/:quoteId',
    {
      schema: { summary: 'Get a quote the agent created', description: 'Needs CREATE_QUOTES or EXECUTE_QUOTES; other quotes are 404.', tags: TAGS, security, params: QuoteId, response: { 200: Quote, ...errors(403, 404) } },
      config: { ...AGENT, agentPermission: ['CREATE_QUOTES', 'EXECUTE_QUOTES'] },
    },
    async (request) => me.getQuote(request.ctx, caller(request), request.params.quoteId),
  );
  app.post(
    '/agents/me/quotes/:quoteId/execute',
    {
      schema: {
        summary: 'Execute a quote the agent created',
        description:
          'Needs EXECUTE_QUOTES. Returns the EXECUTE_QUOTE action: APPROVED with its transaction when the policy lets it run, PENDING_APPROVAL when the platform must approve; 403 SPENDING_LIMIT_EXCEEDED past a limit. Supports `Idempotency-Key`.',
        tags: TAGS,
        security,
        params: QuoteId,
        headers: ExecuteHeaders,
        response: { 200: AgentAction, ...errors(403, 404, 409) },
      },
      config: { ...AGENT, agentPermission: ['EXECUTE_QUOTES'] },
    },
    async (request) =>
      me.executeQuote(request.ctx, caller(request), request.params.quoteId, { 'service-wallet-signature': request.headers['service-wallet-signature'] }),
  );
  const transferDescription = (what: string) =>
    `${what} Needs CREATE_TRANSFERS; both accounts must be the customer's. Returns the action (201): APPROVED with its transaction, or PENDING_APPROVAL; 403 SPENDING_LIMIT_EXCEEDED past a limit. Supports \`Idempotency-Key\`.`;
  app.post(
    '/agents/me/transfer-out',
    {
      schema: { summary: 'Send money to an external account', description: transferDescription('Internal account → external account, same currency.'), tags: TAGS, security, body: TransferOutRequest, response: { 201: AgentAction, ...errors(403, 404, 409, 501) } },
      config: { ...AGENT, agentPermission: ['CREATE_TRANSFERS'] },
    },
    async (request, reply) => reply.code(201).send(await me.transferOut(request.ctx, caller(request), request.body)),
  );
  app.post(
    '/agents/me/transfer-in',
    {
      schema: { summary: 'Pull money from an external account', description: transferDescription('External account → internal account, same currency (pull).'), tags: TAGS, security, body: TransferInRequest, response: { 201: AgentAction, ...errors(403, 404, 409, 501) } },
      config: { ...AGENT, agentPermission: ['CREATE_TRANSFERS'] },
    },
    async (request, reply) => reply.code(201).send(await me.transferIn(request.ctx, caller(request), request.body)),
  );
}

function externalAccountRoutes(app: Api, { agents }: Services): void {
  const me = agents.me;
  const config = { ...AGENT, agentPermission: ['MANAGE_EXTERNAL_ACCOUNTS' as const] };
  const AccountId = IdParam('externalAccountId', 'External account identifier (`ExternalAccount:…`).');
  app.get(
    '/agents/me/external-accounts',
    { schema: { summary: 'List the customer\'s external accounts', description: 'Needs MANAGE_EXTERNAL_ACCOUNTS.', tags: TAGS, security, querystring: AgentExternalAccountQuery, response: { 200: PageOf(ExternalAccountRef, 'external accounts'), ...errors(403) } }, config, serializerCompiler },
    async (request) => me.listExternalAccounts(request.ctx, caller(request), request.query),
  );
  app.post(
    '/agents/me/external-accounts',
    {
      schema: { summary: 'Add an external account for the customer', description: 'Needs MANAGE_EXTERNAL_ACCOUNTS. Supports `Idempotency-Key`.', tags: TAGS, security, body: AgentExternalAccountCreate, response: { 201: ExternalAccountRef, ...errors(403, 409) } },
      config,
      serializerCompiler,
    },
    async (request, reply) => reply.code(201).send(await me.createExternalAccount(request.ctx, caller(request), request.body as any)),
  );
  app.get(
    '/agents/me/external-accounts/:externalAccountId',
    { schema: { summary: 'Get one of the customer\'s external accounts', description: 'Needs MANAGE_EXTERNAL_ACCOUNTS; another customer\'s account is 404.', tags: TAGS, security, params: AccountId, response: { 200: ExternalAccountRef, ...errors(403, 404) } }, config, serializerCompiler },
    async (request) => me.getExternalAccount(request.ctx, caller(request), request.params.externalAccountId),
  );
  app.delete(
    '/agents/me/external-accounts/:externalAccountId',
    { schema: { summary: 'Delete one of the customer\'s external accounts', description: 'Needs MANAGE_EXTERNAL_ACCOUNTS.', tags: TAGS, security, params: AccountId, response: { 204: NoContent, ...errors(403, 404) } }, config },
    async (request, reply) => {
      await me.removeExternalAccount(request.ctx, caller(request), request.params.externalAccountId);
      return reply.code(204).send(null);
    },
  );
}
