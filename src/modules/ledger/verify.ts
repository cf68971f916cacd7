import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

export interface LedgerProblem {
  platformId: string;
  currency: string;
  accountId?: string;
  message: string;
}

export interface LedgerReport {
  accounts: number;
  transfers: number;
  problems: LedgerProblem[];
}

/**
 * Checks the ledger's invariants: every balance-checked account's columns equal the sums of its
 * transfers; every transfer stays within one currency; per platform and currency, debits equal
 * credits (so all balances, system accounts included, sum to zero).
 */
export async function verifyLedger(ex: Executor, platformId?: string, progress: (check: string) => void = () => {}): Promise<LedgerReport> {
  const scope = platformId ? sql`and a.platform_id = ${platformId}` : sql``;
  const tscope = platformId ? sql`and t.platform_id = ${platformId}` : sql``;
  // Each transfer seen from both of its accounts.
  const sides = sql`sides as (
      select t.debit_account_id as account_id, t.state, t.amount as debit, 0::bigint as credit from ledger_transfers t where true ${tscope}
      union all
      select t.credit_account_id, t.state, 0::bigint, t.amount from ledger_transfers t where true ${tscope})`;
  const problems: LedgerProblem[] = [];

  progress('balance columns against transfers');
  const { rows: columnMismatches } = await sql<{
    id: string; platform_id: string; currency: string;
    posted_debits: string; posted_credits: string; pending_debits: string; pending_credits: string;
    sum_posted_debits: string; sum_posted_credits: string; sum_pending_debits: string; sum_pending_credits: string;
  }>`
    with ${sides}, sums as (
      select account_id,
        coalesce(sum(debit) filter (where state = 'POSTED'), 0) as sum_posted_debits,
        coalesce(sum(credit) filter (where state = 'POSTED'), 0) as sum_posted_credits,
        coalesce(sum(debit) filter (where state = 'PENDING'), 0) as sum_pending_debits,
        coalesce(sum(credit) filter (where state = 'PENDING'), 0) as sum_pending_credits
      from sides group by account_id
    )
    select a.id, a.platform_id, a.currency,
           a.posted_debits::text, a.posted_credits::text, a.pending_debits::text, a.pending_credits::text,
           coalesce(s.sum_posted_debits, 0)::text as sum_posted_debits, coalesce(s.sum_posted_credits, 0)::text as sum_posted_credits,
           coalesce(s.sum_pending_debits, 0)::text as sum_pending_debits, coalesce(s.sum_pending_credits, 0)::text as sum_pending_credits
    from ledger_accounts a left join sums s on s.account_id = a.id
    where not a.no_balance_check ${scope}
      and (a.posted_debits <> coalesce(s.sum_posted_debits, 0) or a.posted_credits <> coalesce(s.sum_posted_credits, 0)
        or a.pending_debits <> coalesce(s.sum_pending_debits, 0) or a.pending_credits <> coalesce(s.sum_pending_credits, 0))
    order by a.id`.execute(ex);
  for (const r of columnMismatches) {
    problems.push({
      platformId: r.platform_id,
      currency: r.currency,
      accountId: r.id,
      message:
        `balance columns (posted ${r.posted_debits} dr / ${r.posted_credits} cr, pending ${r.pending_debits} dr / ${r.pending_credits} cr) ` +
        `differ from its transfers (posted ${r.sum_posted_debits} dr / ${r.sum_posted_credits} cr, pending ${r.sum_pending_debits} dr / ${r.sum_pending_credits} cr)`,
    });
  }

  progress('currencies and platforms of transfers');
  const { rows: currencyMismatches } = await sql<{ id: string; platform_id: string; currency: string }>`
    select t.id, t.platform_id, t.currency
    from ledger_transfers t
    join ledger_accounts d on d.id = t.debit_account_id
    join ledger_accounts c on c.id = t.credit_account_id
    where (d.currency <> t.currency or c.currency <> t.currency or d.platform_id <> t.platform_id or c.platform_id <> t.platform_id) ${tscope}`.execute(ex);
  for (const r of currencyMismatches) {
    problems.push({ platformId: r.platform_id, currency: r.currency, message: `transfer ${r.id} crosses currencies or platforms` });
  }

  // Debits equal credits per platform and currency: balance-checked accounts count by their
  // columns, system accounts (which keep no columns) by their transfers.
  progress('debits against credits');
  const { rows: imbalances } = await sql<{ platform_id: string; currency: string; debits: string; credits: string }>`
    with ${sides}, system_sums as (
      select account_id, sum(debit) as debits, sum(credit) as credits from sides where state = 'POSTED' group by account_id
    )
    select a.platform_id, a.currency,
      sum(case when a.no_balance_check then coalesce(s.debits, 0) else a.posted_debits end)::text as debits,
      sum(case when a.no_balance_check then coalesce(s.credits, 0) else a.posted_credits end)::text as credits
    from ledger_accounts a left join system_sums s on s.account_id = a.id
    where true ${scope}
    group by a.platform_id, a.currency
    having sum(case when a.no_balance_check then coalesce(s.debits, 0) else a.posted_debits end)
        <> sum(case when a.no_balance_check then coalesce(s.credits, 0) else a.posted_credits end)`.execute(ex);
  for (const r of imbalances) {
    problems.push({ platformId: r.platform_id, currency: r.currency, message: `posted debits ${r.debits} differ from posted credits ${r.credits}` });
  }

  const counts = await sql<{ accounts: number; transfers: number }>`
    select (select count(*) from ledger_accounts a where true ${scope})::int as accounts,
           (select count(*) from ledger_transfers t where true ${tscope})::int as transfers`.execute(ex);
  return { accounts: counts.rows[0].accounts, transfers: counts.rows[0].transfers, problems };
}
