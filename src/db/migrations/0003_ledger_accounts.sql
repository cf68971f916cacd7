-- Ledger accounts (TigerBeetle-style balance columns). Customer and platform accounts may never
-- go below zero available; system accounts (settlement, FX liquidity, fees) skip the check.
create table ledger_accounts (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  currency text not null,
  kind text not null check (kind in ('CUSTOMER', 'PLATFORM', 'SYSTEM')),
  code text,
  no_balance_check boolean not null default false,
  posted_debits bigint not null default 0 check (posted_debits >= 0),
  posted_credits bigint not null default 0 check (posted_credits >= 0),
  pending_debits bigint not null default 0 check (pending_debits >= 0),
  pending_credits bigint not null default 0 check (pending_credits >= 0),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  constraint ledger_accounts_no_overdraft
    check (no_balance_check or posted_credits - posted_debits - pending_debits >= 0)
);
create unique index ledger_accounts_system_code on ledger_accounts (platform_id, currency, code)
  where kind = 'SYSTEM';
