create table customers (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  platform_customer_id text not null,
  customer_type text not null check (customer_type in ('INDIVIDUAL', 'BUSINESS')),
  uma_address text not null,
  email text,
  region text,
  currencies text[] not null default '{}',
  kyc_status text,
  kyb_status text,
  -- Individual fields (fullName, birthDate, nationality, address) or businessInfo/address.
  details jsonb not null default '{}',
  is_deleted boolean not null default false,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create unique index customers_platform_customer_id on customers (platform_id, platform_customer_id)
  where not is_deleted;
create unique index customers_uma_address on customers (platform_id, lower(uma_address))
  where not is_deleted;
create index customers_page on customers (platform_id, created_at, id);
