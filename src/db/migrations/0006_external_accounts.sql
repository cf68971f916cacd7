create table external_accounts (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  -- null: the account belongs to the platform itself.
  customer_id text references customers (id),
  currency text not null,
  account_type text not null,
  account_info jsonb not null,
  -- The account's main identifier (account number, IBAN, key, address); sandbox outcomes key on its suffix.
  identifier text not null,
  platform_account_id text,
  status text not null check (status in ('PENDING', 'ACTIVE', 'UNDER_REVIEW', 'INACTIVE')),
  beneficiary_verification_status text check (beneficiary_verification_status in
    ('MATCHED', 'PARTIAL_MATCH', 'NOT_MATCHED', 'UNSUPPORTED', 'CHECKED_BY_RECEIVING_FI', 'PENDING')),
  beneficiary_verified_data jsonb,
  default_uma_deposit_account boolean not null default false,
  is_deleted boolean not null default false,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  check (not (default_uma_deposit_account and customer_id is null))
);
create unique index external_accounts_default_uma on external_accounts (customer_id)
  where default_uma_deposit_account and not is_deleted;
-- One live registration of the same destination per owner.
create unique index external_accounts_identity on external_accounts
  (platform_id, coalesce(customer_id, ''), currency, account_type, identifier) where not is_deleted;
create index external_accounts_page on external_accounts (platform_id, created_at, id) where not is_deleted;
create index external_accounts_customer on external_accounts (customer_id, created_at, id) where not is_deleted;
