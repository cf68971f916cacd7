-- Platforms (tenants), their API tokens and configuration.
create table platforms (
  id text primary key,
  config_id text not null unique,
  name text not null,
  mode text not null check (mode in ('SANDBOX', 'PRODUCTION')),
  is_regulated_financial_institution boolean not null default false,
  uma_domain text not null,
  proxy_uma_subdomain text,
  webhook_endpoint text,
  supported_currencies jsonb not null,
  -- Test clock: the platform's "now" is real time plus this offset (sandbox only).
  clock_offset_ms bigint not null default 0,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);

create table api_tokens (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  client_id text not null unique,
  name text not null,
  permissions text[] not null,
  secret_salt text not null,
  secret_hash text not null,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  deleted_at timestamptz(3)
);
create index api_tokens_page on api_tokens (platform_id, created_at, id) where deleted_at is null;

-- Fee schedule applied to cross-currency pricing (exchange rates and quotes); see docs/pricing.md.
alter table platforms add column fees jsonb not null
  default '{"variableFeeRate": 0.003, "fixedFees": [], "fxSpreadBps": 25}';
