import { Type, type Static, type TSchema } from 'typebox';
import { Amount, CurrencyCode, DateTime, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { InternalAccountTypeSchema } from '../accounts/schemas.js';
import { Quote } from '../quotes/schemas.js';
import { Transaction, TransactionListQuery } from '../transactions/schemas.js';
import { AGENT_PERMISSIONS, EXECUTION_MODES } from './policy.js';

export const ACTION_STATUSES = ['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];
export const ACTION_TYPES = ['EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });

// ── policy ───────────────────────────────────────────────────────────────────────────────────────

export const PermissionSchema = StringEnum(AGENT_PERMISSIONS, {
  description:
    'VIEW_TRANSACTIONS: list and read transactions and balances; CREATE_TRANSFERS: same-currency transfers; CREATE_QUOTES and EXECUTE_QUOTES: cross-currency quotes; MANAGE_EXTERNAL_ACCOUNTS: the customer\'s external accounts.',
});
export const ExecutionModeSchema = StringEnum(EXECUTION_MODES, {
  description: 'AUTO: the agent\'s actions run at once; APPROVAL_REQUIRED: each waits for the platform to approve it.',
});

const limitFields = {
  currency: CurrencyCode('Currency every amount limit is in (ISO 4217).'),
  perTransactionLimit: Amount('Largest amount of one action, in the smallest unit of `currency`.'),
  dailyLimit: Nullable(Amount('Daily limit.'), 'Most the agent may spend per UTC day of the platform clock, smallest unit; null for no daily limit.'),
  dailyTransactionLimit: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Most actions the agent may submit per UTC day.' }),
  monthlyLimit: Nullable(Amount('Monthly limit.'), 'Most the agent may spend per UTC calendar month, smallest unit; null for no monthly limit.'),
};

export const SpendingLimitsInput = Type.Object(
  {
    currency: limitFields.currency,
    perTransactionLimit: limitFields.perTransactionLimit,
    dailyLimit: Type.Optional(limitFields.dailyLimit),
    dailyTransactionLimit: Type.Optional(limitFields.dailyTransactionLimit),
    monthlyLimit: Type.Optional(limitFields.monthlyLimit),
  },
  { additionalProperties: false, description: 'Caps on amounts and counts. Amounts in other currencies are converted at the mid-market rate when an action is evaluated.' },
);

export const SpendingLimitsUpdate = Type.Object(
  {
    currency: Type.Optional(CurrencyCode('New limit currency; amounts not given in this update are converted into it at the current rate.')),
    perTransactionLimit: Type.Optional(limitFields.perTransactionLimit),
    dailyLimit: Type.Optional(limitFields.dailyLimit),
    dailyTransactionLimit: Type.Optional(limitFields.dailyTransactionLimit),
    monthlyLimit: Type.Optional(limitFields.monthlyLimit),
  },
  { additionalProperties: false, description: 'Spending-limit fields to change; the others keep their values.' },
);

const AccountRule = Type.Object(
  {
    accountId: Id('Internal account of the agent\'s customer this rule is for (`InternalAccount:…`).'),
    executionMode: Type.Optional(ExecutionModeSchema),
    perTransactionLimit: Type.Optional(
      Nullable(Amount('Limit.'), 'Largest amount of one action paid from (or, for transfers in, into) this account, in the smallest unit of the account\'s currency; null: the policy\'s limit.'),
    ),
  },
  { additionalProperties: false, description: 'Overrides for actions on one account.' },
);

export const AccountRestrictionsSchema = Type.Object(
  {
    allowedAccountIds: Type.Optional(
      Nullable(Type.Array(Id('Internal account id.'), { maxItems: 100, description: 'Allowed accounts.' }), 'The only internal accounts the agent may move money from or to; null: all of the customer\'s accounts.'),
    ),
    accountRules: Type.Optional(Type.Array(AccountRule, { maxItems: 100, description: 'Per-account overrides of execution mode and per-transaction limit.' })),
  },
  { additionalProperties: false, description: 'Which accounts the agent may use, and per-account rules.' },
);

export const ApprovalThresholdsSchema = Type.Object(
  {
    currency: Type.Optional(CurrencyCode('Currency of `amount`; required when `amount` is set.')),
    amount: Type.Optional(Nullable(Amount('Threshold.'), 'Actions worth this much or more need approval whatever the execution mode; null: no threshold.')),
  },
  { additionalProperties: false, description: 'Approval for large actions.' },
);

export const AgentPolicyInput = Type.Object(
  {
    permissions: Type.Array(PermissionSchema, { maxItems: 5, uniqueItems: true, description: 'What the agent may do.' }),
    defaultExecutionMode: ExecutionModeSchema,
    spendingLimits: SpendingLimitsInput,
    accountRestrictions: Type.Optional(AccountRestrictionsSchema),
    approvalThresholds: Type.Optional(ApprovalThresholdsSchema),
  },
  { additionalProperties: false, description: 'Permissions, execution mode and spending boundaries of an agent.' },
);

export const AgentPolicyUpdateRequest = Type.Object(
  {
    permissions: Type.Optional(Type.Array(PermissionSchema, { maxItems: 5, uniqueItems: true, description: 'Replaces the whole list.' })),
    defaultExecutionMode: Type.Optional(ExecutionModeSchema),
    spendingLimits: Type.Optional(SpendingLimitsUpdate),
    accountRestrictions: Type.Optional(AccountRestrictionsSchema),
    approvalThresholds: Type.Optional(ApprovalThresholdsSchema),
  },
  { additionalProperties: false, description: 'Policy fields to change; omitted fields keep their values.' },
);
export type AgentPolicyUpdateRequest = Static<typeof AgentPolicyUpdateRequest>;

export const AgentPolicyView = Type.Object(
  {
    permissions: Type.Array(PermissionSchema, { description: 'What the agent may do.' }),
    defaultExecutionMode: ExecutionModeSchema,
    spendingLimits: Type.Object(
      {
        currency: limitFields.currency,
        perTransactionLimit: limitFields.perTransactionLimit,
        dailyLimit: limitFields.dailyLimit,
        dailyTransactionLimit: Type.Optional(limitFields.dailyTransactionLimit),
        monthlyLimit: limitFields.monthlyLimit,
      },
      { description: 'Caps on amounts and counts.' },
    ),
    accountRestrictions: Type.Optional(AccountRestrictionsSchema),
    approvalThresholds: Type.Optional(ApprovalThresholdsSchema),
  },
  { title: 'AgentPolicy', description: 'Permissions, execution mode and spending boundaries of an agent.' },
);

// ── agent ────────────────────────────────────────────────────────────────────────────────────────

export const AgentUsage = Type.Object(
  {
    dailyTransactionCount: Type.Integer({ description: 'Actions submitted today that count (pending approval or approved).' }),
    dailySpend: Type.Integer({ description: 'What those actions are worth, in the smallest unit of the policy currency.' }),
    dailyResetDate: Type.String({ format: 'date', description: 'UTC date (platform clock) on which the daily counters start again.' }),
    monthlySpend: Type.Integer({ description: 'What this month\'s counting actions are worth, in the smallest unit of the policy currency.' }),
    monthlyResetMonth: Type.String({ description: 'Month (YYYY-MM) in which the monthly counter starts again.' }),
  },
  { description: 'Usage against the limits; rejected and failed actions do not count.' },
);
export type AgentUsageView = Static<typeof AgentUsage>;

export const Agent = Type.Object(
  {
    id: Type.String({ description: 'Agent identifier (`Agent:…`).' }),
    name: Type.String({ description: 'Name given by the platform.' }),
    customerId: Type.String({ description: 'The customer the agent acts for.' }),
    isPaused: Type.Boolean({ description: 'A paused agent is refused on every request.' }),
    isConnected: Type.Boolean({ description: 'Whether its device code has been redeemed.' }),
    policy: AgentPolicyView,
    usage: AgentUsage,
    createdAt: DateTime('When the agent was created.'),
    updatedAt: DateTime('When it last changed.'),
  },
  { title: 'Agent', description: 'An agent: who it acts for, what it may do, and what it has spent.' },
);
export type AgentView = Static<typeof Agent>;

export const AgentDeviceCode = Type.Object(
  {
    code: Type.String({ description: 'One-time code the agent software redeems for its access token.' }),
    agentId: Type.String({ description: 'The agent it connects.' }),
    expiresAt: DateTime('When the code stops working.'),
    redeemed: Type.Boolean({ description: 'Whether it has been redeemed.' }),
  },
  { title: 'AgentDeviceCode', description: 'A one-time code that connects agent software.' },
);
export type AgentDeviceCodeView = Static<typeof AgentDeviceCode>;

export const AgentCreateRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Name to recognize the agent by.' }),
    customerId: Id('Customer the agent acts for (`Customer:…`).'),
    policy: AgentPolicyInput,
  },
  { additionalProperties: false },
);
export type AgentCreateRequest = Static<typeof AgentCreateRequest>;

export const AgentCreateResponse = Type.Object(
  { agent: Agent, deviceCode: AgentDeviceCode },
  { description: 'The agent and the device code that connects it.' },
);

export const AgentUpdateRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'New name.' })),
    isPaused: Type.Optional(Type.Boolean({ description: 'true pauses the agent (every request refused), false resumes it.' })),
  },
  { additionalProperties: false },
);
export type AgentUpdateRequest = Static<typeof AgentUpdateRequest>;

export const AgentListQuery = Type.Object({
  customerId: Type.Optional(Type.String({ maxLength: 200, description: 'Only agents of this customer.' })),
  isPaused: Type.Optional(Type.Boolean({ description: 'Only paused (true) or running (false) agents.' })),
  isConnected: Type.Optional(Type.Boolean({ description: 'Only connected (true) or not yet connected (false) agents.' })),
  createdAfter: Type.Optional(DateTime('Created at or after this time.')),
  createdBefore: Type.Optional(DateTime('Created at or before this time.')),
  updatedAfter: Type.Optional(DateTime('Updated at or after this time.')),
  updatedBefore: Type.Optional(DateTime('Updated at or before this time.')),
  ...PageQuery,
});
export type AgentListQuery = Static<typeof AgentListQuery>;

// ── device codes ─────────────────────────────────────────────────────────────────────────────────

export const DeviceCodeStatus = Type.Object(
  {
    code: Type.String({ description: 'The device code asked about.' }),
    redeemed: Type.Boolean({ description: 'Whether it has been redeemed.' }),
    expiresAt: DateTime('When it stops (or stopped) being redeemable.'),
  },
  { title: 'AgentDeviceCodeStatus' },
);

export const DeviceCodeRedeemResponse = Type.Object(
  {
    agentId: Type.String({ description: 'The agent now connected.' }),
    agentName: Type.String({ description: 'Its name.' }),
    accessToken: Type.String({ description: 'Bearer token for /agents/me requests. Shown this once; only a hash is kept.' }),
    policy: AgentPolicyView,
  },
  { title: 'AgentDeviceCodeRedeemResponse' },
);
export type DeviceCodeRedeemView = Static<typeof DeviceCodeRedeemResponse>;

export const CodeParam = Type.Object({ code: Type.String({ minLength: 1, maxLength: 100, description: 'The device code.' }) });

// ── actions ──────────────────────────────────────────────────────────────────────────────────────

export const ActionStatusSchema = StringEnum(ACTION_STATUSES, {
  description: 'PENDING_APPROVAL: waiting for the platform; APPROVED: executed (or executing); REJECTED: refused, not executed; FAILED: approved but could not execute, or its payment failed.',
});

export const TransferDetails = Type.Object(
  {
    amount: Type.Integer({ description: 'Amount, in the smallest unit of `currency`.' }),
    currency: Type.String({ description: 'Currency of the transfer.' }),
    sourceAccountId: Type.String({ description: 'Account the money leaves.' }),
    destinationAccountId: Type.String({ description: 'Account the money goes to.' }),
  },
  { description: 'What a transfer action moves (TRANSFER_OUT, TRANSFER_IN).' },
);
export type TransferDetailsView = Static<typeof TransferDetails>;

export const AgentAction = Type.Object(
  {
    id: Type.String({ description: 'Action identifier (`AgentAction:…`).' }),
    agentId: Type.String({ description: 'The agent that submitted it.' }),
    customerId: Type.String({ description: 'The customer it acts for.' }),
    platformCustomerId: Type.String({ description: 'The platform\'s own id of that customer.' }),
    status: ActionStatusSchema,
    type: StringEnum(ACTION_TYPES, { description: 'EXECUTE_QUOTE, TRANSFER_OUT or TRANSFER_IN.' }),
    quote: Type.Optional(Type.Object(Quote.properties, { description: 'The quote to execute (EXECUTE_QUOTE).' })),
    transferDetails: Type.Optional(TransferDetails),
    transaction: Type.Optional(Type.Object(Transaction.properties, { description: 'The resulting payment, once execution began.' })),
    rejectionReason: Type.Optional(Type.String({ description: 'Why the platform rejected it (REJECTED).' })),
    failureReason: Type.Optional(Type.String({ description: 'Corridor extension: why it failed (FAILED), e.g. QUOTE_EXPIRED or INSUFFICIENT_FUNDS.' })),
    createdAt: DateTime('When the agent submitted it.'),
    updatedAt: DateTime('When it last changed.'),
  },
  { title: 'AgentAction' },
);
export type AgentActionView = Static<typeof AgentAction>;

export const ApprovalListQuery = Type.Object({
  agentId: Type.Optional(Type.String({ maxLength: 200, description: 'Only actions of this agent.' })),
  customerId: Type.Optional(Type.String({ maxLength: 200, description: 'Only actions for this customer.' })),
  startDate: Type.Optional(DateTime('Submitted at or after this time.')),
  endDate: Type.Optional(DateTime('Submitted at or before this time.')),
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], { description: 'By submission time; default desc (newest first).', default: 'desc' })),
  ...PageQuery,
});
export type ApprovalListQuery = Static<typeof ApprovalListQuery>;

export const ActionListQuery = Type.Object({ status: Type.Optional(ActionStatusSchema), ...PageQuery });
export type ActionListQuery = Static<typeof ActionListQuery>;

export const RejectRequest = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1000, description: 'Why it is rejected; shown as `rejectionReason`.' })) },
  { additionalProperties: false },
);

export const ActionParams = Type.Object({
  agentId: Id('Agent identifier (`Agent:…`).'),
  actionId: Id('Action identifier (`AgentAction:…`).'),
});

// ── agent-side queries ───────────────────────────────────────────────────────────────────────────

export const AgentTransactionListQuery = Type.Omit(TransactionListQuery, ['customerId', 'platformCustomerId']);
export type AgentTransactionListQuery = Static<typeof AgentTransactionListQuery>;

export const AgentInternalAccountQuery = Type.Object({
  currency: Type.Optional(CurrencyCode('Only accounts in this currency.')),
  type: Type.Optional(InternalAccountTypeSchema),
  ...PageQuery,
});
export type AgentInternalAccountQuery = Static<typeof AgentInternalAccountQuery>;

export const AgentExternalAccountQuery = Type.Object({
  currency: Type.Optional(CurrencyCode('Only accounts in this currency.')),
  ...PageQuery,
});
export type AgentExternalAccountQuery = Static<typeof AgentExternalAccountQuery>;
