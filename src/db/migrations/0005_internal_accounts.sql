create table internal_accounts (
  -- Same id as the ledger account that holds its balance.
  id text primary key references ledger_accounts (id),
  platform_id text not null references platforms (id) on delete cascade,
  customer_id text references customers (id),
  type text not null check (type in ('INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET')),
  currency text not null,
  -- Reference a depositor quotes so incoming funds are credited to this account.
  funding_reference text not null unique,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create unique index internal_accounts_customer_currency on internal_accounts (customer_id, currency, type)
  where customer_id is not null;
create unique index internal_accounts_platform_currency on internal_accounts (platform_id, currency, type)
  where customer_id is null;
create index internal_accounts_page on internal_accounts (platform_id, created_at, id);
