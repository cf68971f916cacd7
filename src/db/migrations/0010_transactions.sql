-- Payments as the API shows them (incoming and outgoing). Money itself moves in the ledger;
-- ledger_transfers.transaction_id links the legs of each transaction.
create table transactions (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  type text not null check (type in ('INCOMING', 'OUTGOING')),
  status text not null check (status in ('CREATED', 'PENDING', 'PROCESSING', 'COMPLETED', 'REJECTED', 'FAILED', 'REFUNDED', 'EXPIRED')),
  -- null: the platform's own transaction.
  customer_id text,
  platform_customer_id text,
  source jsonb not null,
  destination jsonb not null,
  -- Account id or UMA address of each side, for the accountIdentifier filters.
  source_identifier text,
  destination_identifier text,
  sent_amount bigint,
  sent_currency text,
  received_amount bigint not null,
  received_currency text not null,
  exchange_rate double precision,
  fees bigint,
  quote_id text,
  reference text not null,
  description text,
  counterparty_information jsonb,
  rate_details jsonb,
  payment_instructions jsonb,
  failure_reason text,
  failure_detail text,
  refund jsonb,
  agent_id text,
  -- Incoming payments waiting for the platform's approve/reject.
  awaiting_approval boolean not null default false,
  settled_at timestamptz(3),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create unique index transactions_reference on transactions (platform_id, reference);
create index transactions_page on transactions (platform_id, created_at, id);
create index transactions_customer on transactions (platform_id, customer_id, created_at);
create index transactions_source on transactions (platform_id, source_identifier);
create index transactions_destination on transactions (platform_id, destination_identifier);
create index transactions_quote on transactions (quote_id) where quote_id is not null;
create index transactions_agent on transactions (agent_id, created_at) where agent_id is not null;
