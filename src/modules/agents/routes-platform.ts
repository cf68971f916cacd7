import { heldBy } from '../../http/auth.js';
import { errors, IdParam, NoContent } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import { optionalBody } from '../../http/validation.js';
import type { Services } from '../../services.js';
import {
  ActionParams,
  Agent,
  AgentAction,
  AgentCreateRequest,
  AgentCreateResponse,
  AgentDeviceCode,
  AgentListQuery,
  AgentPolicyUpdateRequest,
  AgentUpdateRequest,
  ApprovalListQuery,
  CodeParam,
  DeviceCodeRedeemResponse,
  DeviceCodeStatus,
  RejectRequest,
  type AgentDeviceCodeView,
  type AgentView,
} from './schemas.js';

const AgentId = IdParam('agentId', 'Agent identifier (`Agent:…`).');
const TAGS = ['Agent Management'];

/** The platform's side of agents (HTTP Basic), and the device-code endpoints (no authentication). */
export function agentPlatformRoutes(app: Api, { agents }: Services): void {
  app.post(
    '/agents',
    {
      schema: {
        summary: 'Create an agent',
        description:
          'Creates an agent for one customer with its policy, and a one-time device code (valid 24 hours) that the agent software redeems for its access token. A replay under the same Idempotency-Key answers a new code (earlier ones stop working).',
        tags: TAGS,
        body: AgentCreateRequest,
        response: { 201: AgentCreateResponse, ...errors(403, 404) },
      },
      config: {
        oneTimeSecret: {
          kept: ({ agent }: { agent: AgentView }) => ({ agent }),
          replay: async (request, { agent }: { agent: AgentView }) => ({ agent, deviceCode: await agents.regenerateDeviceCode(request.ctx, agent.id, heldBy(request)) }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.create(request.ctx, request.body, heldBy(request))),
  );

  app.get(
    '/agents',
    { schema: { summary: 'List agents', tags: TAGS, querystring: AgentListQuery, response: { 200: PageOf(Agent, 'agents'), ...errors() } } },
    async (request) => agents.list(request.ctx, request.query),
  );

  app.get(
    '/agents/approvals',
    {
      schema: {
        summary: 'List agent actions waiting for approval',
        description: 'Actions in PENDING_APPROVAL, newest first unless `sortOrder=asc`. Approve or reject each with the actions endpoints.',
        tags: TAGS,
        querystring: ApprovalListQuery,
        response: { 200: PageOf(AgentAction, 'actions'), ...errors() },
      },
    },
    async (request) => agents.listApprovals(request.ctx, request.query),
  );

  app.get(
    '/agents/:agentId',
    { schema: { summary: 'Get an agent', tags: TAGS, params: AgentId, response: { 200: Agent, ...errors(404) } } },
    async (request) => agents.get(request.ctx, request.params.agentId),
  );

  app.patch(
    '/agents/:agentId',
    {
      schema: {
        summary: 'Rename, pause or resume an agent',
        description: 'A paused agent is refused (403 AGENT_PAUSED) on every request but reads until it is resumed.',
        tags: TAGS,
        params: AgentId,
        body: AgentUpdateRequest,
        response: { 200: Agent, ...errors(404) },
      },
    },
    async (request) => agents.update(request.ctx, request.params.agentId, request.body, heldBy(request)),
  );

  app.delete(
    '/agents/:agentId',
    {
      schema: {
        summary: 'Delete an agent',
        description: 'Its access token stops working (401) and its pending actions are rejected.',
        tags: TAGS,
        params: AgentId,
        response: { 204: NoContent, ...errors(404) },
      },
    },
    async (request, reply) => {
      await agents.remove(request.ctx, request.params.agentId);
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/agents/:agentId/policy',
    {
      schema: {
        summary: 'Change an agent\'s policy',
        description: '`permissions` replaces the list, `spendingLimits` merges field by field, `accountRestrictions` and `approvalThresholds` replace their object; omitted fields keep their values. Effective for the next action.',
        tags: TAGS,
        params: AgentId,
        body: AgentPolicyUpdateRequest,
        response: { 200: Agent, ...errors(404) },
      },
    },
    async (request) => agents.updatePolicy(request.ctx, request.params.agentId, request.body, heldBy(request)),
  );

  app.post(
    '/agents/:agentId/device-codes',
    {
      schema: {
        summary: 'Issue a new device code',
        description:
          'For an agent not yet connected (409 AGENT_ALREADY_CONNECTED otherwise); earlier unredeemed codes stop working. A replay under the same Idempotency-Key issues another.',
        tags: TAGS,
        params: AgentId,
        response: { 201: AgentDeviceCode, ...errors(404, 409) },
      },
      config: {
        oneTimeSecret: {
          kept: ({ agentId }: AgentDeviceCodeView) => ({ agentId }),
          replay: async (request, { agentId }: { agentId: string }) => agents.regenerateDeviceCode(request.ctx, agentId, heldBy(request)),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.regenerateDeviceCode(request.ctx, request.params.agentId, heldBy(request))),
  );

  app.post(
    '/agents/:agentId/actions/:actionId/approve',
    {
      schema: {
        summary: 'Approve an agent action',
        description: 'Executes a PENDING_APPROVAL action: APPROVED with its transaction, or FAILED with `failureReason` when it cannot execute (for example QUOTE_EXPIRED, INSUFFICIENT_FUNDS; an action its quote\'s expiry already failed is answered as it is). 409 AGENT_ACTION_NOT_PENDING otherwise.',
        tags: TAGS,
        params: ActionParams,
        response: { 200: AgentAction, ...errors(404, 409) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request) => agents.approve(request.ctx, request.params.agentId, request.params.actionId),
  );

  app.post(
    '/agents/:agentId/actions/:actionId/reject',
    {
      schema: {
        summary: 'Reject an agent action',
        description: 'The action becomes REJECTED (with `rejectionReason`) and is never executed; its spend no longer counts. 409 AGENT_ACTION_NOT_PENDING when it is not pending.',
        tags: TAGS,
        params: ActionParams,
        body: RejectRequest,
        response: { 200: AgentAction, ...errors(404, 409) },
      },
      config: { permission: 'TRANSACT' },
      // A bare POST rejects without a reason.
      preValidation: optionalBody,
    },
    async (request) => agents.reject(request.ctx, request.params.agentId, request.params.actionId, request.body?.reason),
  );

  app.get(
    '/agents/device-codes/:code/status',
    {
      schema: {
        summary: 'Get a device code\'s status',
        description: 'Whether the code has been redeemed: poll it to see the agent connect. 404 for a code of another platform, like an unknown one; failed lookups count toward the per-address limit (429).',
        tags: TAGS,
        params: CodeParam,
        response: { 200: DeviceCodeStatus, ...errors(404, 429) },
      },
    },
    async (request) => agents.deviceCodeStatus(request.ctx.platform, request.params.code, request.ip),
  );

  app.post(
    '/agents/device-codes/:code/redeem',
    {
      schema: {
        summary: 'Redeem a device code',
        description: 'Connects the agent and returns its access token, once. 400 DEVICE_CODE_EXPIRED or DEVICE_CODE_ALREADY_REDEEMED, 404 for an unknown code; failures count toward the per-address limit (429). No authentication.',
        tags: TAGS,
        security: [],
        params: CodeParam,
        response: { 200: DeviceCodeRedeemResponse, ...errors(404, 409, 429) },
      },
      config: { auth: 'none' },
    },
    async (request) => agents.redeemDeviceCode(request.params.code, request.ip),
  );
}
