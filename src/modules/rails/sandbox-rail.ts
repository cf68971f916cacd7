import { ServiceError } from '../../core/errors.js';
import type { RailAdapter, RailEvent, RailPlan, RailRequest } from './rail.js';

/** How long the sandbox rail takes to report an ordinary success. */
export const SANDBOX_SETTLE_MS = 1_000;
const SECOND = 1_000;

/**
 * The last three characters that decide a sandbox outcome. For identifiers with a domain part
 * (PIX e-mail keys, UPI handles) they are the end of the part before the `@`.
 */
export function outcomeSuffix(identifier: string): string {
  const local = identifier.includes('@') ? identifier.slice(0, identifier.indexOf('@')) : identifier;
  return local.slice(-3);
}

const at = (afterMs: number, event: RailEvent) => ({ afterMs, event });

/** SPEC 4.7, transfers in and out. */
function transferPlan(suffix: string): RailPlan {
  switch (suffix) {
    case '002':
      return { steps: [at(0, { kind: 'FAILED', detail: 'INSUFFICIENT_FUNDS' })] };
    case '003':
      return { steps: [at(0, { kind: 'FAILED', detail: 'ACCOUNT_CLOSED' })] };
    case '004':
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'FAILED', detail: 'BANK_REJECTED' })] };
    case '005':
      return { steps: [at(30 * SECOND, { kind: 'FAILED', detail: 'TIMEOUT' })] };
    default:
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'COMPLETED' })] };
  }
}

/** SPEC 4.7, quotes paying out to an external account. */
function quotePayoutPlan(suffix: string): RailPlan {
  switch (suffix) {
    case '002':
      return { steps: [at(0, { kind: 'FAILED', detail: 'EXECUTION_FAILED' })] };
    case '003':
      return { steps: [at(6 * 60 * SECOND, { kind: 'COMPLETED' })] };
    case '004':
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'FAILED', detail: 'COUNTERPARTY_DELIVERY_FAILED' })] };
    case '005':
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'COMPLETED' }), at(60 * SECOND, { kind: 'RETURNED' })] };
    case '006':
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'FAILED', detail: 'USER_CANCELLATION' })] };
    case '007':
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'REFUND_FAILED', detail: 'PAYOUT_AND_REFUND_FAILED' })] };
    default:
      return { steps: [at(SANDBOX_SETTLE_MS, { kind: 'COMPLETED' })] };
  }
}

/** The sandbox rail: every outcome of SPEC 4.7 by identifier suffix; delays run on the test clock. */
export const sandboxRail: RailAdapter = {
  simulated: true,
  async initiate(request: RailRequest): Promise<RailPlan> {
    const suffix = outcomeSuffix(request.identifier);
    return request.operation === 'QUOTE_PAYOUT' ? quotePayoutPlan(suffix) : transferPlan(suffix);
  },
};

/** Production platforms without a configured rail: refuse clearly rather than pretend. */
export const unconfiguredRail: RailAdapter = {
  async initiate(request: RailRequest): Promise<RailPlan> {
    throw new ServiceError('NOT_IMPLEMENTED', `no payment rail is configured for ${request.currency} ${request.accountType} payments on this platform`);
  },
};

/** The rail for a platform: the sandbox rail on sandbox platforms; production has none built in. */
export function railFor(platform: { mode: 'SANDBOX' | 'PRODUCTION' }): RailAdapter {
  return platform.mode === 'SANDBOX' ? sandboxRail : unconfiguredRail;
}
