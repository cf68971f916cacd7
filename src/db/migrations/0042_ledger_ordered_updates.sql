-- Balance events can be put in order: each change to a checked account moves its updated_at
-- strictly forward, and the functions return it, so the events (and the account's GET) show the
-- time the database gave the change rather than the caller's clock reading. A caller reads its
-- clock before the statement, so one that read it earlier could take the row lock, and commit,
-- later: its event then looked older than the one it followed, with the older balance on it.
-- The row lock is held to the commit, so per account the order of the locks is the order of the
-- commits, and `greatest(p_now, updated_at + 1 ms)` under the lock is strictly increasing in it.
-- The step is a millisecond, the API's precision, so that two changes never show the same time.
-- The result gains a column, which CREATE OR REPLACE cannot add: the functions are dropped and
-- created again, with 0030's definitions otherwise (sequential scans off included).
drop function ledger_record(text, text, timestamptz, text[], text[], text[], bigint[], boolean[], text[]);
drop function ledger_resolve(text, text[], text, boolean, timestamptz);

create function ledger_record(
  p_platform text, p_transaction text, p_now timestamptz,
  p_ids text[], p_debits text[], p_credits text[], p_amounts bigint[], p_pending boolean[], p_codes text[]
) returns table (account_id text, available bigint, posted bigint, updated_at timestamptz)
language plpgsql set enable_seqscan = off as $$
declare
  v_accounts text[] := p_debits || p_credits;
  v_bad text;
begin
  select l.id into v_bad
  from unnest(p_ids, p_debits, p_credits) as l(id, debit, credit)
  left join ledger_accounts d on d.id = l.debit and d.id = any(p_debits) and d.platform_id = p_platform
  left join ledger_accounts c on c.id = l.credit and c.id = any(p_credits) and c.platform_id = p_platform
  where d.id is null or c.id is null or d.currency <> c.currency
  limit 1;
  if v_bad is not null then
    raise exception 'ledger transfer % names an unknown account or mixes currencies', v_bad using errcode = 'LG001';
  end if;

  perform 1 from ledger_accounts
  where id = any(v_accounts) and not no_balance_check
  order by id for update;

  insert into ledger_transfers (id, platform_id, transaction_id, debit_account_id, credit_account_id, amount, currency, state, code, created_at)
  select l.id, p_platform, p_transaction, l.debit, l.credit, l.amount, d.currency,
         case when l.pending then 'PENDING' else 'POSTED' end, l.code, p_now
  from unnest(p_ids, p_debits, p_credits, p_amounts, p_pending, p_codes) as l(id, debit, credit, amount, pending, code)
  join ledger_accounts d on d.id = l.debit and d.id = any(p_debits);

  return query
  with legs as (
    select * from unnest(p_debits, p_credits, p_amounts, p_pending) as l(debit, credit, amount, pending)
  ),
  deltas as (
    select debit as id,
           case when pending then 0 else amount end as posted_debit,
           case when pending then amount else 0 end as pending_debit,
           0::bigint as posted_credit, 0::bigint as pending_credit
    from legs
    union all
    select credit, 0, 0, case when pending then 0 else amount end, case when pending then amount else 0 end
    from legs
  ),
  totals as (
    select id, sum(posted_debit)::bigint as pd, sum(pending_debit)::bigint as pnd,
           sum(posted_credit)::bigint as pc, sum(pending_credit)::bigint as pnc
    from deltas group by id
  )
  update ledger_accounts a
  set posted_debits = a.posted_debits + t.pd,
      pending_debits = a.pending_debits + t.pnd,
      posted_credits = a.posted_credits + t.pc,
      pending_credits = a.pending_credits + t.pnc,
      updated_at = greatest(p_now, a.updated_at + interval '1 millisecond')
  from totals t
  where a.id = t.id and a.id = any(v_accounts) and not a.no_balance_check
  returning a.id, a.posted_credits - a.posted_debits - a.pending_debits, a.posted_credits - a.posted_debits, a.updated_at;
end $$;

create function ledger_resolve(
  p_platform text, p_transfer_ids text[], p_transaction text, p_post boolean, p_now timestamptz
) returns table (account_id text, available bigint, posted bigint, updated_at timestamptz)
language plpgsql set enable_seqscan = off as $$
declare
  v_candidates text[];
  v_ids text[];
  v_accounts text[];
begin
  v_candidates := array(
    select unnest(p_transfer_ids)
    union
    select x.id from ledger_transfers x where x.transaction_id = p_transaction
  );
  -- Nothing but the key in the WHERE clause (migration 0025); the rest filters the aggregate.
  select coalesce(array_agg(t.id) filter (where t.platform_id = p_platform and t.state = 'PENDING'), '{}') into v_ids
  from ledger_transfers t
  where t.id = any(v_candidates);

  v_accounts := array(
    select unnest(array[t.debit_account_id, t.credit_account_id]) from ledger_transfers t where t.id = any(v_ids)
  );
  perform 1 from ledger_accounts
  where id = any(v_accounts) and not no_balance_check
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
      updated_at = greatest(p_now, a.updated_at + interval '1 millisecond')
  from totals t
  where a.id = t.id and a.id = any(v_accounts) and not a.no_balance_check
  returning a.id, a.posted_credits - a.posted_debits - a.pending_debits, a.posted_credits - a.posted_debits, a.updated_at;
end $$;
