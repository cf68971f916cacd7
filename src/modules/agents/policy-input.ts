/**
 * Turning request bodies into stored policies: normalizing a new policy, merging a partial update
 * into the current one, and the checks a schema cannot express. Pure functions.
 */
import { isCurrencyCode } from '../../core/currencies.js';
import { ServiceError, type FieldError } from '../../core/errors.js';
import { MAX_AMOUNT } from '../rates/pricing.js';
import type { AccountRestrictions, AgentPolicy, ApprovalThresholds, Converter, SpendingLimits } from './policy.js';

/** A policy as POST /agents accepts it (optional fields may be left out). */
export interface AgentPolicyInput {
  permissions: AgentPolicy['permissions'];
  defaultExecutionMode: AgentPolicy['defaultExecutionMode'];
  spendingLimits: { currency: string; perTransactionLimit: number; dailyLimit?: number | null; dailyTransactionLimit?: number; monthlyLimit?: number | null };
  accountRestrictions?: AccountRestrictions;
  approvalThresholds?: ApprovalThresholds;
}

/** A partial policy as PATCH /agents/{agentId}/policy accepts it. */
export interface AgentPolicyUpdate {
  permissions?: AgentPolicy['permissions'];
  defaultExecutionMode?: AgentPolicy['defaultExecutionMode'];
  spendingLimits?: Partial<AgentPolicyInput['spendingLimits']>;
  accountRestrictions?: AccountRestrictions;
  approvalThresholds?: ApprovalThresholds;
}

function normalizeLimits(input: AgentPolicyInput['spendingLimits']): SpendingLimits {
  return {
    currency: input.currency,
    perTransactionLimit: input.perTransactionLimit,
    dailyLimit: input.dailyLimit ?? null,
    ...(input.dailyTransactionLimit !== undefined && { dailyTransactionLimit: input.dailyTransactionLimit }),
    monthlyLimit: input.monthlyLimit ?? null,
  };
}

function normalizeRestrictions(input: AccountRestrictions): AccountRestrictions {
  return { allowedAccountIds: input.allowedAccountIds ?? null, accountRules: input.accountRules ?? [] };
}

function normalizeThresholds(input: ApprovalThresholds): ApprovalThresholds {
  return { ...(input.currency !== undefined && { currency: input.currency }), amount: input.amount ?? null };
}

/** The stored form: nullable limits spelled out, permissions without repeats. */
export function normalizePolicy(input: AgentPolicyInput): AgentPolicy {
  return {
    permissions: [...new Set(input.permissions)],
    defaultExecutionMode: input.defaultExecutionMode,
    spendingLimits: normalizeLimits(input.spendingLimits),
    ...(input.accountRestrictions && { accountRestrictions: normalizeRestrictions(input.accountRestrictions) }),
    ...(input.approvalThresholds && { approvalThresholds: normalizeThresholds(input.approvalThresholds) }),
  };
}

/**
 * Merges given spending-limit fields into the current ones. When only the currency changes, the
 * amounts not given are converted into it at the current rate, so a limit keeps its worth.
 */
function mergeLimits(current: SpendingLimits, patch: Partial<AgentPolicyInput['spendingLimits']>, convert: Converter): SpendingLimits {
  const currency = patch.currency ?? current.currency;
  const carry = (value: number) => convert(value, current.currency, currency);
  const carryNullable = (value: number | null) => (value === null ? null : carry(value));
  return {
    currency,
    perTransactionLimit: patch.perTransactionLimit ?? carry(current.perTransactionLimit),
    dailyLimit: patch.dailyLimit !== undefined ? patch.dailyLimit : carryNullable(current.dailyLimit),
    ...((patch.dailyTransactionLimit ?? current.dailyTransactionLimit) !== undefined && {
      dailyTransactionLimit: patch.dailyTransactionLimit ?? current.dailyTransactionLimit,
    }),
    monthlyLimit: patch.monthlyLimit !== undefined ? patch.monthlyLimit : carryNullable(current.monthlyLimit),
  };
}

/**
 * PATCH semantics: `permissions` replaces the list, `spendingLimits` merges field by field,
 * `accountRestrictions` and `approvalThresholds` replace their object; omitted fields stay.
 */
export function mergePolicy(current: AgentPolicy, patch: AgentPolicyUpdate, convert: Converter): AgentPolicy {
  const merged: AgentPolicy = {
    permissions: patch.permissions ? [...new Set(patch.permissions)] : current.permissions,
    defaultExecutionMode: patch.defaultExecutionMode ?? current.defaultExecutionMode,
    spendingLimits: patch.spendingLimits ? mergeLimits(current.spendingLimits, patch.spendingLimits, convert) : current.spendingLimits,
  };
  const restrictions = patch.accountRestrictions ? normalizeRestrictions(patch.accountRestrictions) : current.accountRestrictions;
  const thresholds = patch.approvalThresholds ? normalizeThresholds(patch.approvalThresholds) : current.approvalThresholds;
  if (restrictions) merged.accountRestrictions = restrictions;
  if (thresholds) merged.approvalThresholds = thresholds;
  return merged;
}

/**
 * Limits within the largest amount (`MAX_AMOUNT`). The schema bounds the limits a request gives;
 * this bounds those converted into a new limit currency (50 USD is about 1.6e16 wei).
 */
export function limitProblems(policy: AgentPolicy, prefix: string): FieldError[] {
  const limits = policy.spendingLimits;
  return (['perTransactionLimit', 'dailyLimit', 'monthlyLimit'] as const)
    .filter((field) => (limits[field] ?? 0) > MAX_AMOUNT)
    .map((field) => ({
      field: `${prefix}spendingLimits.${field}`,
      constraint: 'maximum',
      message: `is ${limits[field]} in ${limits.currency}, above the largest amount (${MAX_AMOUNT}); give it in the new currency`,
    }));
}

/**
 * Rules a JSON schema cannot state: known currencies with an exchange rate, a currency with every
 * threshold, no repeated rules, limits within the largest amount.
 */
export function policyProblems(policy: AgentPolicy, prefix: string, hasRate: (code: string) => boolean = () => true): FieldError[] {
  const problems: FieldError[] = limitProblems(policy, prefix);
  const currencyProblem = (field: string, code: string | undefined) => {
    if (code === undefined) return;
    if (!isCurrencyCode(code)) problems.push({ field: `${prefix}${field}`, constraint: 'currency', message: `${code} is not a known currency code` });
    else if (!hasRate(code)) problems.push({ field: `${prefix}${field}`, constraint: 'rate', message: `no exchange rate is available for ${code}` });
  };
  currencyProblem('spendingLimits.currency', policy.spendingLimits.currency);
  const threshold = policy.approvalThresholds;
  currencyProblem('approvalThresholds.currency', threshold?.currency);
  if (threshold && threshold.amount !== null && threshold.amount !== undefined && threshold.currency === undefined) {
    problems.push({ field: `${prefix}approvalThresholds.currency`, constraint: 'required', message: 'is required when approvalThresholds.amount is set' });
  }
  const seen = new Set<string>();
  for (const [i, rule] of (policy.accountRestrictions?.accountRules ?? []).entries()) {
    if (seen.has(rule.accountId)) {
      problems.push({ field: `${prefix}accountRestrictions.accountRules.${i}.accountId`, constraint: 'unique', message: 'has a rule already' });
    }
    seen.add(rule.accountId);
  }
  return problems;
}

/** Every internal account id the policy names, with the field that names it. */
export function policyAccountIds(policy: AgentPolicy, prefix: string): Array<{ field: string; accountId: string }> {
  const restrictions = policy.accountRestrictions;
  return [
    ...(restrictions?.allowedAccountIds ?? []).map((accountId, i) => ({ field: `${prefix}accountRestrictions.allowedAccountIds.${i}`, accountId })),
    ...(restrictions?.accountRules ?? []).map((rule, i) => ({ field: `${prefix}accountRestrictions.accountRules.${i}.accountId`, accountId: rule.accountId })),
  ];
}

export function throwProblems(problems: FieldError[]): void {
  if (problems.length > 0) throw new ServiceError('INVALID_INPUT', `${problems[0].field} ${problems[0].message}`, { details: { errors: problems } });
}
