-- ledger_resolve picked its holds with `id = any(…) and platform_id = … and state = 'PENDING'`.
-- Once statistics said pending transfers were rare (after an ANALYZE taken while few were in
-- flight), PostgreSQL could answer that through an index on (account, state) instead of the
-- primary key, walking every pending transfer (auto_explain showed it in a bench run, see
-- docs/benchmarks.md, "Where the time goes"): on PGlite, vacuuming with ANALYZE made a round of
-- settlements take 0.9-1.0 s instead of 0.55-0.6 s. Only the key is left in the WHERE clause;
-- the platform and the state filter the aggregate.
create or replace function ledger_resolve(
  p_platform text, p_transfer_ids text[], p_transaction text, p_post boolean, p_now timestamptz
) returns table (account_id text, available bigint, posted bigint)
language plpgsql as $$
declare
  v_candidates text[];
  v_ids text[];
begin
  v_candidates := array(
    select unnest(p_transfer_ids)
    union
    select x.id from ledger_transfers x where x.transaction_id = p_transaction
  );
  -- An array, not a join, and nothing but the key in the WHERE clause, so the plan is
  -- primary-key lookups whatever the statistics say (the rest is a filter of the aggregate).
  select coalesce(array_agg(t.id) filter (where t.platform_id = p_platform and t.state = 'PENDING'), '{}') into v_ids
  from ledger_transfers t
  where t.id = any(v_candidates);

  perform 1 from ledger_accounts
  where not no_balance_check and id in (
    select unnest(array[t.debit_account_id, t.credit_account_id]) from ledger_transfers t where t.id = any(v_ids)
  )
  order by id for update;

  -- Still pending is checked again after the locks: a concurrent call may have resolved them.
  return query
  with resolved as (
    update ledger_transfers t
    set state = case when p_post then 'POSTED' else 'VOIDED' end, resolved_at = p_now
    where t.id = any(v_ids) and t.state = 'PENDING'
    returning t.debit_account_id, t.credit_account_id, t.amount
  ),
  deltas as (
    select debit_account_id as id, amount as debit, 0::bigint as credit from resolved
    union all
    select credit_account_id, 0, amount from resolved
  ),
  totals as (
    select id, sum(debit)::bigint as debit, sum(credit)::bigint as credit from deltas group by id
  )
  update ledger_accounts a
  set pending_debits = a.pending_debits - t.debit,
      pending_credits = a.pending_credits - t.credit,
      posted_debits = a.posted_debits + case when p_post then t.debit else 0 end,
      posted_credits = a.posted_credits + case when p_post then t.credit else 0 end,
      updated_at = p_now
  from totals t
  where a.id = t.id and not a.no_balance_check
  returning a.id, a.posted_credits - a.posted_debits - a.pending_debits, a.posted_credits - a.posted_debits;
end $$;
