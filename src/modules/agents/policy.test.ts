import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../core/errors.js';
import { Dec } from '../rates/decimal.js';
import { BUILT_IN_PRICES, toUsdPrices } from '../rates/provider.js';
import { converter, evaluate, executionMode, type AgentPolicy, type SpendRequest, type Usage } from './policy.js';
import { mergePolicy, normalizePolicy, policyProblems } from './policy-input.js';

const convert = converter(toUsdPrices(BUILT_IN_PRICES));
const A = 'InternalAccount:a';
const B = 'InternalAccount:b';

function policy(overrides: Partial<AgentPolicy> = {}, limits: Partial<AgentPolicy['spendingLimits']> = {}): AgentPolicy {
  return {
    permissions: ['CREATE_TRANSFERS', 'EXECUTE_QUOTES'],
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 10_000, dailyLimit: 50_000, dailyTransactionLimit: 5, monthlyLimit: 200_000, ...limits },
    ...overrides,
  };
}

const spend = (amount: number, currency = 'USD', extra: Partial<SpendRequest> = {}): SpendRequest => ({
  permission: 'CREATE_TRANSFERS',
  amount,
  currency,
  accountIds: [A],
  ruleAccountId: A,
  ...extra,
});
const unused: Usage = { dailySpend: 0, dailyTransactionCount: 0, monthlySpend: 0 };

/** 'AUTO' / 'APPROVAL_REQUIRED' when allowed, else the refusal code and the limit named. */
function outcome(p: AgentPolicy, request: SpendRequest, usage: Usage = unused): string {
  const decision = evaluate(p, request, usage, convert);
  if (decision.outcome === 'ALLOWED') return decision.mode;
  return [decision.refusal.code, decision.refusal.details.limit].filter(Boolean).join(':');
}

describe('converter', () => {
  it.each([
    ['same currency is the identity', 12_345, 'USD', 'USD', 12_345],
    ['exact: 8620 EUR cents are 10000 USD cents', 8_620, 'EUR', 'USD', 10_000],
    ['a fraction above rounds up', 8_621, 'EUR', 'USD', 10_002],
    ['below rounds up to the next cent', 8_619, 'EUR', 'USD', 9_999],
    ['USD to EUR', 10_000, 'USD', 'EUR', 8_620],
    ['USD to EUR, one cent more', 10_001, 'USD', 'EUR', 8_621],
    ['decimals differ: 100 USD cents in JPY (0 decimals)', 100, 'USD', 'JPY', 155],
    ['decimals differ: 155 JPY in USD cents', 155, 'JPY', 'USD', 101],
  ])('%s', (_label, amount, from, to, expected) => {
    expect(convert(amount, from, to)).toBe(expected);
  });

  it('refuses (403) when a currency has no rate', () => {
    const partial = converter(new Map([['USD', new Dec(1)]]));
    expect(() => partial(100, 'EUR', 'USD')).toThrow(ServiceError);
    try {
      partial(100, 'EUR', 'USD');
    } catch (error) {
      expect((error as ServiceError).code).toBe('FORBIDDEN');
    }
  });
});

describe('evaluate: limits at every boundary (limit −1, =, +1)', () => {
  it.each([
    ['perTransactionLimit −1', policy(), spend(9_999), unused, 'AUTO'],
    ['perTransactionLimit =', policy(), spend(10_000), unused, 'AUTO'],
    ['perTransactionLimit +1', policy(), spend(10_001), unused, 'SPENDING_LIMIT_EXCEEDED:perTransactionLimit'],
    ['dailyLimit −1', policy(), spend(1_000), { ...unused, dailySpend: 48_999, monthlySpend: 48_999 }, 'AUTO'],
    ['dailyLimit =', policy(), spend(1_000), { ...unused, dailySpend: 49_000, monthlySpend: 49_000 }, 'AUTO'],
    ['dailyLimit +1', policy(), spend(1_000), { ...unused, dailySpend: 49_001, monthlySpend: 49_001 }, 'SPENDING_LIMIT_EXCEEDED:dailyLimit'],
    ['dailyTransactionLimit: 4 made, 5th allowed', policy(), spend(100), { ...unused, dailyTransactionCount: 4 }, 'AUTO'],
    ['dailyTransactionLimit: 5 made, 6th refused', policy(), spend(100), { ...unused, dailyTransactionCount: 5 }, 'SPENDING_LIMIT_EXCEEDED:dailyTransactionLimit'],
    ['monthlyLimit −1', policy(), spend(1_000), { ...unused, monthlySpend: 198_999 }, 'AUTO'],
    ['monthlyLimit =', policy(), spend(1_000), { ...unused, monthlySpend: 199_000 }, 'AUTO'],
    ['monthlyLimit +1', policy(), spend(1_000), { ...unused, monthlySpend: 199_001 }, 'SPENDING_LIMIT_EXCEEDED:monthlyLimit'],
    ['null daily and monthly limits: no cap', policy({}, { dailyLimit: null, monthlyLimit: null }), spend(10_000), { ...unused, dailySpend: 9e12, monthlySpend: 9e12 }, 'AUTO'],
    ['no dailyTransactionLimit: no count cap', policy({}, { dailyTransactionLimit: undefined }), spend(100), { ...unused, dailyTransactionCount: 10_000 }, 'AUTO'],
  ])('%s', (_label, p, request, usage, expected) => {
    expect(outcome(p, request, usage)).toBe(expected);
  });
});

describe('evaluate: other currencies are converted at the threshold', () => {
  // 10000 USD cents = 8620 EUR cents exactly at the built-in rate (0.862 EUR per USD).
  const eurPolicy = policy({}, { currency: 'EUR', perTransactionLimit: 8_620, dailyLimit: 8_620 });
  it.each([
    ['USD amount just under', 9_998, 'AUTO'],
    ['USD amount converting exactly to the limit', 10_000, 'AUTO'],
    ['one USD cent more', 10_001, 'SPENDING_LIMIT_EXCEEDED:perTransactionLimit'],
  ])('%s', (_label, amount, expected) => {
    expect(outcome(eurPolicy, spend(amount))).toBe(expected);
  });

  it('the daily limit compares converted amounts too', () => {
    expect(outcome(eurPolicy, spend(5_000), { ...unused, dailySpend: 4_310 })).toBe('AUTO'); // 4310 + 4310 = 8620
    expect(outcome(eurPolicy, spend(5_001), { ...unused, dailySpend: 4_310 })).toBe('SPENDING_LIMIT_EXCEEDED:dailyLimit');
  });

  it('reports the spend in the policy currency', () => {
    expect(evaluate(eurPolicy, spend(10_000), unused, convert)).toEqual({ outcome: 'ALLOWED', mode: 'AUTO', spend: 8_620, spendCurrency: 'EUR' });
  });
});

describe('evaluate: permissions and accounts', () => {
  it('needs the permission of the action', () => {
    expect(outcome(policy({ permissions: ['VIEW_TRANSACTIONS'] }), spend(100))).toBe('PERMISSION_DENIED');
    expect(outcome(policy(), spend(100, 'USD', { permission: 'CREATE_QUOTES' }))).toBe('PERMISSION_DENIED');
  });

  it.each([
    ['null allows every account', null, [A, B], 'AUTO'],
    ['a listed account', [A], [A], 'AUTO'],
    ['every account touched must be listed', [A], [A, B], 'FORBIDDEN'],
    ['an empty list allows none', [], [A], 'FORBIDDEN'],
  ])('allowedAccountIds: %s', (_label, allowed, accountIds, expected) => {
    const p = policy({ accountRestrictions: { allowedAccountIds: allowed as string[] | null, accountRules: [] } });
    expect(outcome(p, spend(100, 'USD', { accountIds: accountIds as string[] }))).toBe(expected);
  });

  it('checks the permission before the limits', () => {
    expect(outcome(policy({ permissions: [] }), spend(1e9))).toBe('PERMISSION_DENIED');
  });
});

describe('evaluate: account rules', () => {
  const withRule = (rule: Record<string, unknown>) => policy({ accountRestrictions: { allowedAccountIds: null, accountRules: [{ accountId: A, ...rule }] } });

  it.each([
    ['its own per-transaction limit, lower: −1', { perTransactionLimit: 500 }, 499, 'AUTO'],
    ['its own per-transaction limit, lower: =', { perTransactionLimit: 500 }, 500, 'AUTO'],
    ['its own per-transaction limit, lower: +1', { perTransactionLimit: 500 }, 501, 'SPENDING_LIMIT_EXCEEDED:accountRules.perTransactionLimit'],
    ['its own per-transaction limit, higher than the policy\'s', { perTransactionLimit: 20_000 }, 15_000, 'AUTO'],
    ['null inherits the policy\'s limit', { perTransactionLimit: null }, 10_001, 'SPENDING_LIMIT_EXCEEDED:perTransactionLimit'],
    ['its execution mode overrides the default', { executionMode: 'APPROVAL_REQUIRED' }, 100, 'APPROVAL_REQUIRED'],
  ])('%s', (_label, rule, amount, expected) => {
    expect(outcome(withRule(rule), spend(amount))).toBe(expected);
  });

  it('applies only to its own account', () => {
    expect(outcome(withRule({ executionMode: 'APPROVAL_REQUIRED' }), spend(100, 'USD', { accountIds: [B], ruleAccountId: B }))).toBe('AUTO');
  });

  it('an AUTO rule lifts a default APPROVAL_REQUIRED for that account', () => {
    const p = policy({ defaultExecutionMode: 'APPROVAL_REQUIRED', accountRestrictions: { accountRules: [{ accountId: A, executionMode: 'AUTO' }] } });
    expect(outcome(p, spend(100))).toBe('AUTO');
    expect(outcome(p, spend(100, 'USD', { accountIds: [B], ruleAccountId: B }))).toBe('APPROVAL_REQUIRED');
  });
});

describe('execution mode and approval thresholds', () => {
  const thresholdPolicy = (extra: Partial<AgentPolicy> = {}) => policy({ approvalThresholds: { currency: 'USD', amount: 5_000 }, ...extra });

  it.each([
    ['threshold −1', 4_999, 'AUTO'],
    ['threshold = (at the threshold needs approval)', 5_000, 'APPROVAL_REQUIRED'],
    ['threshold +1', 5_001, 'APPROVAL_REQUIRED'],
  ])('%s', (_label, amount, expected) => {
    expect(outcome(thresholdPolicy(), spend(amount))).toBe(expected);
  });

  it('forces approval even when an account rule says AUTO', () => {
    const p = thresholdPolicy({ accountRestrictions: { accountRules: [{ accountId: A, executionMode: 'AUTO' }] } });
    expect(executionMode(p, spend(5_000), convert)).toBe('APPROVAL_REQUIRED');
  });

  it.each([
    [9_998, 'AUTO'], // 8618.276 EUR cents, rounded up: 8619
    [9_999, 'APPROVAL_REQUIRED'], // 8619.138 → 8620: at the threshold
    [10_000, 'APPROVAL_REQUIRED'], // exactly 8620
  ])('converts into the threshold currency: %i USD cents against 8620 EUR cents → %s', (amount, expected) => {
    const p = policy({ approvalThresholds: { currency: 'EUR', amount: 8_620 } });
    expect(outcome(p, spend(amount))).toBe(expected);
  });

  it('a null threshold never forces approval', () => {
    expect(outcome(policy({ approvalThresholds: { currency: 'USD', amount: null } }), spend(10_000))).toBe('AUTO');
  });

  it('APPROVAL_REQUIRED by default', () => {
    expect(outcome(policy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }), spend(1))).toBe('APPROVAL_REQUIRED');
  });

  it('an action needing approval still has to fit the limits', () => {
    expect(outcome(policy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }), spend(10_001))).toBe('SPENDING_LIMIT_EXCEEDED:perTransactionLimit');
  });
});

describe('policy input', () => {
  const base = normalizePolicy({
    permissions: ['VIEW_TRANSACTIONS', 'VIEW_TRANSACTIONS', 'CREATE_TRANSFERS'],
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 10_000, dailyLimit: 50_000 },
  });

  it('normalizes: repeats dropped, absent nullable limits null', () => {
    expect(base).toEqual({
      permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 10_000, dailyLimit: 50_000, monthlyLimit: null },
    });
  });

  it('merges: permissions replace, limits merge field by field, null removes a limit', () => {
    const merged = mergePolicy(base, { permissions: ['CREATE_QUOTES'], spendingLimits: { dailyLimit: null, monthlyLimit: 90_000, dailyTransactionLimit: 3 } }, convert);
    expect(merged).toEqual({
      permissions: ['CREATE_QUOTES'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 10_000, dailyLimit: null, dailyTransactionLimit: 3, monthlyLimit: 90_000 },
    });
  });

  it('a new limit currency converts the amounts not given', () => {
    const merged = mergePolicy(base, { spendingLimits: { currency: 'EUR', perTransactionLimit: 5_000 } }, convert);
    expect(merged.spendingLimits).toEqual({ currency: 'EUR', perTransactionLimit: 5_000, dailyLimit: 43_100, monthlyLimit: null });
  });

  it('restrictions and thresholds replace their object', () => {
    const withBoth = mergePolicy(base, { accountRestrictions: { allowedAccountIds: [A] }, approvalThresholds: { currency: 'USD', amount: 1 } }, convert);
    expect(withBoth.accountRestrictions).toEqual({ allowedAccountIds: [A], accountRules: [] });
    expect(mergePolicy(withBoth, { accountRestrictions: { accountRules: [{ accountId: A, executionMode: 'AUTO' }] } }, convert).accountRestrictions).toEqual({
      allowedAccountIds: null,
      accountRules: [{ accountId: A, executionMode: 'AUTO' }],
    });
  });

  it('reports what a schema cannot: unknown currencies, a threshold without currency, repeated rules', () => {
    const bad: AgentPolicy = {
      ...base,
      spendingLimits: { ...base.spendingLimits, currency: 'XXQ' },
      approvalThresholds: { amount: 5 },
      accountRestrictions: { accountRules: [{ accountId: A }, { accountId: A }] },
    };
    expect(policyProblems(bad, 'policy.').map((p) => `${p.field}:${p.constraint}`)).toEqual([
      'policy.spendingLimits.currency:currency',
      'policy.approvalThresholds.currency:required',
      'policy.accountRestrictions.accountRules.1.accountId:unique',
    ]);
  });
});
