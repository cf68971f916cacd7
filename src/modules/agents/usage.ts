/**
 * Usage against the spending limits. It is not a stored counter: it is the sum of the agent's
 * counting actions (PENDING_APPROVAL, APPROVED) of the current UTC day and month of the platform
 * clock, so a rejected or failed action gives its spend back by changing status, and the counters
 * "reset" by the calendar alone.
 */
import { utcDate } from '../../core/clock.js';
import type { Executor } from '../../db/database.js';
import { usageRows, type UsageRow } from './actions-repository.js';
import type { Converter, Usage } from './policy.js';
import type { AgentUsageView } from './schemas.js';

/** The UTC day and month an instant of the platform clock falls in. */
export interface Period {
  day: string;
  month: string;
}

export function periodOf(now: Date): Period {
  const day = utcDate(now);
  return { day, month: day.slice(0, 7) };
}

/** The first day after `day`, and the first month after `month` (when the counters start again). */
export function resets(period: Period): { dailyResetDate: string; monthlyResetMonth: string } {
  const next = new Date(`${period.day}T00:00:00.000Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  const [year, month] = period.month.split('-').map(Number);
  const nextMonth = month === 12 ? `${year + 1}-01` : `${year}-${String(month + 1).padStart(2, '0')}`;
  return { dailyResetDate: utcDate(next), monthlyResetMonth: nextMonth };
}

/**
 * Sums one agent's rows in the policy currency. Spend recorded in another currency (the policy's
 * currency changed since) is converted at the current rate.
 */
export function usageIn(rows: UsageRow[], currency: string, convert: Converter): Usage {
  const usage: Usage = { dailySpend: 0, dailyTransactionCount: 0, monthlySpend: 0 };
  for (const row of rows) {
    usage.dailySpend += convert(row.daily_spend, row.spend_currency, currency);
    usage.monthlySpend += convert(row.monthly_spend, row.spend_currency, currency);
    usage.dailyTransactionCount += row.daily_count;
  }
  return usage;
}

/** Usage rows of several agents, grouped by agent. */
export async function usageByAgent(ex: Executor, agentIds: string[], period: Period): Promise<Map<string, UsageRow[]>> {
  const byAgent = new Map<string, UsageRow[]>();
  for (const row of await usageRows(ex, agentIds, period.day, period.month)) {
    byAgent.set(row.agent_id, [...(byAgent.get(row.agent_id) ?? []), row]);
  }
  return byAgent;
}

export function usageView(usage: Usage, period: Period): AgentUsageView {
  const { dailyResetDate, monthlyResetMonth } = resets(period);
  return {
    dailyTransactionCount: usage.dailyTransactionCount,
    dailySpend: usage.dailySpend,
    dailyResetDate,
    monthlySpend: usage.monthlySpend,
    monthlyResetMonth,
  };
}
