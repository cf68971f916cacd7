/**
 * The agent policy engine: pure functions from a policy, one requested spend, the agent's usage
 * and a currency converter to a decision. Nothing here reads the database or the clock; the
 * caller (usage.ts / actions.ts) runs `evaluate` on the agent row it holds locked, in the
 * transaction that records the spend, so two requests can never both pass on the same headroom.
 */
import { ServiceError } from '../../core/errors.js';
import { findCurrency } from '../../core/currencies.js';
import { Dec } from '../rates/decimal.js';

export const AGENT_PERMISSIONS = ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES', 'MANAGE_EXTERNAL_ACCOUNTS'] as const;
export type AgentPermission = (typeof AGENT_PERMISSIONS)[number];
/** The permissions with which an agent moves money (the rest read, or manage payees). */
export const MONEY_PERMISSIONS: readonly AgentPermission[] = ['CREATE_TRANSFERS', 'EXECUTE_QUOTES'];

export const EXECUTION_MODES = ['AUTO', 'APPROVAL_REQUIRED'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

export interface SpendingLimits {
  currency: string;
  perTransactionLimit: number;
  /** null: no daily amount limit. */
  dailyLimit: number | null;
  /** Absent: no limit on the number of actions per day. */
  dailyTransactionLimit?: number;
  /** null: no monthly amount limit. */
  monthlyLimit: number | null;
}

export interface AccountRule {
  accountId: string;
  executionMode?: ExecutionMode;
  /** In the smallest unit of the account's own currency; null or absent: the policy's limit applies. */
  perTransactionLimit?: number | null;
}

export interface AccountRestrictions {
  /** null or absent: every account of the customer. */
  allowedAccountIds?: string[] | null;
  accountRules?: AccountRule[];
}

export interface ApprovalThresholds {
  currency?: string;
  /** null or absent: no threshold. */
  amount?: number | null;
}

export interface AgentPolicy {
  permissions: AgentPermission[];
  defaultExecutionMode: ExecutionMode;
  spendingLimits: SpendingLimits;
  accountRestrictions?: AccountRestrictions;
  approvalThresholds?: ApprovalThresholds;
}

/** One money movement an agent asks for. */
export interface SpendRequest {
  permission: AgentPermission;
  /** Amount in the smallest unit of `currency` (for quotes: the total sending amount, fees included). */
  amount: number;
  currency: string;
  /** Every internal account the action touches (all must be allowed). */
  accountIds: string[];
  /** The internal account whose accountRule applies: the one paying (transfer-in: the one paid). */
  ruleAccountId: string;
}

/** What already counts today and this month, in the policy currency. */
export interface Usage {
  dailySpend: number;
  dailyTransactionCount: number;
  monthlySpend: number;
}

/** Converts an amount in the smallest unit of `from` to the smallest unit of `to`. */
export type Converter = (amount: number, from: string, to: string) => number;

export type RefusalCode = 'PERMISSION_DENIED' | 'FORBIDDEN' | 'SPENDING_LIMIT_EXCEEDED';

export interface Refusal {
  code: RefusalCode;
  message: string;
  details: Record<string, unknown>;
}

export type Decision =
  | { outcome: 'ALLOWED'; mode: ExecutionMode; spend: number; spendCurrency: string }
  | { outcome: 'REFUSED'; refusal: Refusal };

/** Digits kept before rounding up, so a rate's last-digit noise never moves an exact boundary. */
const CONVERSION_DECIMALS = 9;

/**
 * A converter at the given mid-market prices (US dollars per major unit). The result is rounded
 * to 9 decimal places, then up to the next smallest unit of `to`: a converted amount that is over
 * a limit by any fraction is over it.
 */
export function converter(usdPrices: ReadonlyMap<string, Dec>): Converter {
  return (amount, from, to) => {
    if (from === to) return amount;
    const fromPrice = usdPrices.get(from);
    const toPrice = usdPrices.get(to);
    const fromCurrency = findCurrency(from);
    const toCurrency = findCurrency(to);
    if (!fromPrice || !toPrice || !fromCurrency || !toCurrency) {
      throw new ServiceError('FORBIDDEN', `the agent policy cannot be evaluated: no exchange rate between ${from} and ${to}`);
    }
    const exact = new Dec(amount)
      .times(fromPrice)
      .div(toPrice)
      .times(new Dec(10).pow(toCurrency.decimals - fromCurrency.decimals));
    return exact.toDecimalPlaces(CONVERSION_DECIMALS, Dec.ROUND_HALF_EVEN).ceil().toNumber();
  };
}

function ruleFor(policy: AgentPolicy, accountId: string): AccountRule | undefined {
  return policy.accountRestrictions?.accountRules?.find((rule) => rule.accountId === accountId);
}

/**
 * AUTO or APPROVAL_REQUIRED: an approval threshold at or below the amount forces approval;
 * otherwise the paying account's rule decides, else the policy's default mode.
 */
export function executionMode(policy: AgentPolicy, request: SpendRequest, convert: Converter): ExecutionMode {
  const threshold = policy.approvalThresholds;
  if (threshold?.amount !== undefined && threshold.amount !== null) {
    const inThresholdCurrency = convert(request.amount, request.currency, threshold.currency ?? policy.spendingLimits.currency);
    if (inThresholdCurrency >= threshold.amount) return 'APPROVAL_REQUIRED';
  }
  return ruleFor(policy, request.ruleAccountId)?.executionMode ?? policy.defaultExecutionMode;
}

function refused(code: RefusalCode, message: string, details: Record<string, unknown>): Decision {
  return { outcome: 'REFUSED', refusal: { code, message, details } };
}

function limitExceeded(limit: string, message: string, details: Record<string, unknown>): Decision {
  return refused('SPENDING_LIMIT_EXCEEDED', message, { limit, ...details });
}

/** The permission and account checks; undefined when they pass. */
export function checkAccess(policy: AgentPolicy, request: SpendRequest): Decision | undefined {
  if (!policy.permissions.includes(request.permission)) {
    return refused('PERMISSION_DENIED', `the agent's policy does not grant ${request.permission}`, { requiredPermission: request.permission });
  }
  const allowed = policy.accountRestrictions?.allowedAccountIds;
  const outside = allowed ? request.accountIds.filter((id) => !allowed.includes(id)) : [];
  if (outside.length > 0) {
    return refused('FORBIDDEN', `the agent's policy does not allow account ${outside[0]}`, { accountId: outside[0] });
  }
  return undefined;
}

/** The per-transaction limit: the account rule's (in the account's currency) or the policy's. */
function checkPerTransaction(policy: AgentPolicy, request: SpendRequest, spend: number): Decision | undefined {
  const rule = ruleFor(policy, request.ruleAccountId);
  if (rule?.perTransactionLimit !== undefined && rule.perTransactionLimit !== null) {
    if (request.amount <= rule.perTransactionLimit) return undefined;
    return limitExceeded('accountRules.perTransactionLimit', `the amount exceeds the per-transaction limit of account ${rule.accountId}`, {
      accountId: rule.accountId,
      limitAmount: rule.perTransactionLimit,
      amount: request.amount,
      currency: request.currency,
    });
  }
  const { perTransactionLimit, currency } = policy.spendingLimits;
  if (spend <= perTransactionLimit) return undefined;
  return limitExceeded('perTransactionLimit', "the amount exceeds the agent's per-transaction limit", {
    limitAmount: perTransactionLimit,
    amount: spend,
    currency,
  });
}

/** Daily count, daily amount and monthly amount, after this action. */
export function checkPeriods(limits: SpendingLimits, usage: Usage, spend: number): Decision | undefined {
  const { currency } = limits;
  if (limits.dailyTransactionLimit !== undefined && usage.dailyTransactionCount + 1 > limits.dailyTransactionLimit) {
    return limitExceeded('dailyTransactionLimit', `the agent already made its ${limits.dailyTransactionLimit} transactions for today`, {
      limitCount: limits.dailyTransactionLimit,
      dailyTransactionCount: usage.dailyTransactionCount,
    });
  }
  if (limits.dailyLimit !== null && usage.dailySpend + spend > limits.dailyLimit) {
    return limitExceeded('dailyLimit', "the amount would take the agent past its daily limit", {
      limitAmount: limits.dailyLimit,
      dailySpend: usage.dailySpend,
      amount: spend,
      currency,
    });
  }
  if (limits.monthlyLimit !== null && usage.monthlySpend + spend > limits.monthlyLimit) {
    return limitExceeded('monthlyLimit', "the amount would take the agent past its monthly limit", {
      limitAmount: limits.monthlyLimit,
      monthlySpend: usage.monthlySpend,
      amount: spend,
      currency,
    });
  }
  return undefined;
}

/**
 * Decides one spend: refused (missing permission, account not allowed, a limit that the spend
 * would pass), or allowed with its execution mode and the amount it counts in the policy
 * currency. Limits are inclusive: a spend that lands exactly on a limit is allowed.
 */
export function evaluate(policy: AgentPolicy, request: SpendRequest, usage: Usage, convert: Converter): Decision {
  const access = checkAccess(policy, request);
  if (access) return access;
  const { currency } = policy.spendingLimits;
  const spend = convert(request.amount, request.currency, currency);
  const problem = checkPerTransaction(policy, request, spend) ?? checkPeriods(policy.spendingLimits, usage, spend);
  if (problem) return problem;
  return { outcome: 'ALLOWED', mode: executionMode(policy, request, convert), spend, spendCurrency: currency };
}

/** The refusal as the error the API answers with. */
export function refusalError(refusal: Refusal): ServiceError {
  return new ServiceError(refusal.code, refusal.message, { details: refusal.details });
}
