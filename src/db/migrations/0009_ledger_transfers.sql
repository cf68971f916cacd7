-- Immutable ledger transfers and the two functions that apply them. Each function is one round
-- trip: it checks the legs, locks the balance-checked accounts in id order (so concurrent
-- transfers never deadlock), moves the balance columns and writes the transfer rows.
--
-- System accounts (no_balance_check) keep no running balance: every transfer of a platform and
-- currency passes through them, so updating their row would serialize all of those transfers.
-- Their balance is the sum of their transfers (see `corridor ledger verify`).

create table ledger_transfers (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  transaction_id text,
  debit_account_id text not null references ledger_accounts (id),
  credit_account_id text not null references ledger_accounts (id),
  amount bigint not null check (amount > 0),
  currency text not null,
  state text not null check (state in ('PENDING', 'POSTED', 'VOIDED')),
  code text not null,
  created_at timestamptz(3) not null,
  resolved_at timestamptz(3),
  constraint ledger_transfers_distinct_accounts check (debit_account_id <> credit_account_id)
);
create index ledger_transfers_transaction on ledger_transfers (transaction_id) where transaction_id is not null;
create index ledger_transfers_debit on ledger_transfers (debit_account_id, state);
create index ledger_transfers_credit on ledger_transfers (credit_account_id, state);
create index ledger_transfers_pending on ledger_transfers (platform_id, created_at) where state = 'PENDING';

-- Records transfers: posted at once, or pending (a hold: the debit side's available balance
-- drops now, the money moves when ledger_resolve posts it). Returns the new balances of the
-- balance-checked accounts it changed. A leg that would overdraw an account violates
-- ledger_accounts_no_overdraft and aborts the whole call.
create function ledger_record(
  p_platform text, p_transaction text, p_now timestamptz,
  p_ids text[], p_debits text[], p_credits text[], p_amounts bigint[], p_pending boolean[], p_codes text[]
) returns table (account_id text, available bigint, posted bigint)
language plpgsql as $$
declare
  v_bad text;
begin
  select l.id into v_bad
  from unnest(p_ids, p_debits, p_credits) as l(id, debit, credit)
  left join ledger_accounts d on d.id = l.debit and d.platform_id = p_platform
  left join ledger_accounts c on c.id = l.credit and c.platform_id = p_platform
  where d.id is null or c.id is null or d.currency <> c.currency
  limit 1;
  if v_bad is not null then
    raise exception 'ledger transfer % names an unknown account or mixes currencies', v_bad using errcode = 'LG001';
  end if;

  perform 1 from ledger_accounts
  where id = any(p_debits || p_credits) and not no_balance_check
  order by id for update;

  insert into ledger_transfers (id, platform_id, transaction_id, debit_account_id, credit_account_id, amount, currency, state, code, created_at)
  select l.id, p_platform, p_transaction, l.debit, l.credit, l.amount, d.currency,
         case when l.pending then 'PENDING' else 'POSTED' end, l.code, p_now
  from unnest(p_ids, p_debits, p_credits, p_amounts, p_pending, p_codes) as l(id, debit, credit, amount, pending, code)
  join ledger_accounts d on d.id = l.debit;

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
      updated_at = p_now
  from totals t
  where a.id = t.id and not a.no_balance_check
  returning a.id, a.posted_credits - a.posted_debits - a.pending_debits, a.posted_credits - a.posted_debits;
end $$;

-- Posts (p_post) or voids the pending transfers given by id or by transaction. Transfers no
-- longer pending are skipped, so resolving twice is harmless.
create function ledger_resolve(
  p_platform text, p_transfer_ids text[], p_transaction text, p_post boolean, p_now timestamptz
) returns table (account_id text, available bigint, posted bigint)
language plpgsql as $$
begin
  perform 1 from ledger_accounts
  where not no_balance_check and id in (
    select unnest(array[t.debit_account_id, t.credit_account_id])
    from ledger_transfers t
    where t.platform_id = p_platform and t.state = 'PENDING'
      and (t.id = any(p_transfer_ids) or (p_transaction is not null and t.transaction_id = p_transaction))
  )
  order by id for update;

  return query
  with resolved as (
    update ledger_transfers t
    set state = case when p_post then 'POSTED' else 'VOIDED' end, resolved_at = p_now
    where t.platform_id = p_platform and t.state = 'PENDING'
      and (t.id = any(p_transfer_ids) or (p_transaction is not null and t.transaction_id = p_transaction))
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
