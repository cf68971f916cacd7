-- Every page of a list carries totalCount. Counted with count(*), a page costs time in
-- proportion to the rows that match: half of a 20-customer page's database time with 1,000
-- customers, tens of milliseconds with 100,000. The unfiltered lists (all customers, active
-- customers, all transactions of a platform) read their total from these counters instead; the
-- triggers below keep them in the same transaction as the rows, so a reader's snapshot sees a
-- total that matches the rows it sees.
--
-- A platform's count is spread over shards picked by the writing connection's backend pid: two
-- connections rarely share a shard, so concurrent writers do not queue on one counter row. A
-- shard may go negative (a row counted in one shard, uncounted in another); only the sum means
-- anything.
create table list_counts (
  platform_id text not null,
  list text not null,
  shard smallint not null,
  n bigint not null,
  primary key (platform_id, list, shard)
);

create function list_count_add(p_platform_id text, p_list text, p_delta integer) returns void
language sql as $$
  insert into list_counts as c (platform_id, list, shard, n)
  values (p_platform_id, p_list, pg_backend_pid() % 16, p_delta)
  on conflict (platform_id, list, shard) do update set n = c.n + excluded.n;
$$;

-- Customers are counted as active or deleted (all customers = the two together), so creating one,
-- the common write, touches one counter.
create function customers_list_count() returns trigger
language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform list_count_add(old.platform_id, case when old.is_deleted then 'customers:deleted' else 'customers:active' end, -1);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform list_count_add(new.platform_id, case when new.is_deleted then 'customers:deleted' else 'customers:active' end, 1);
  end if;
  return null;
end $$;

-- Fires on updates only when is_deleted changes (soft delete), not on every edit.
create trigger customers_list_count_write after insert or delete on customers
  for each row execute function customers_list_count();
create trigger customers_list_count_move after update of is_deleted on customers
  for each row when (old.is_deleted is distinct from new.is_deleted) execute function customers_list_count();

create function transactions_list_count() returns trigger
language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform list_count_add(new.platform_id, 'transactions', 1);
  else
    perform list_count_add(old.platform_id, 'transactions', -1);
  end if;
  return null;
end $$;

create trigger transactions_list_count after insert or delete on transactions
  for each row execute function transactions_list_count();

insert into list_counts (platform_id, list, shard, n)
select platform_id, case when is_deleted then 'customers:deleted' else 'customers:active' end, 0, count(*)
from customers group by 1, 2
union all
select platform_id, 'transactions', 0, count(*) from transactions group by platform_id;
