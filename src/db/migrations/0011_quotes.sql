-- Quotes (a locked price for one cross-currency payment) and receiver lookups. A quote is created
-- together with its transaction (status PENDING); the two move together from then on.
create table quotes (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  status text not null check (status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')),
  -- Source and destination as the API shows them.
  source jsonb not null,
  destination jsonb not null,
  sending_currency text not null,
  receiving_currency text not null,
  total_sending_amount bigint not null check (total_sending_amount > 0),
  total_receiving_amount bigint not null check (total_receiving_amount > 0),
  fees_included bigint not null check (fees_included >= 0),
  exchange_rate double precision not null,
  rate_details jsonb not null,
  payment_instructions jsonb,
  counterparty_information jsonb,
  sender_customer_info jsonb,
  lookup_id text,
  purpose_of_payment text,
  description text,
  -- The sending customer (null: the platform itself).
  customer_id text,
  -- Ledger account debited at execution: an internal account, or null for real-time funding.
  debit_account_id text,
  -- Type of that internal account (EMBEDDED_WALLET executions need a wallet signature).
  debit_account_type text,
  -- How the receiving side is paid: {kind: INTERNAL, accountId} or {kind: RAIL, identifier, accountType}.
  delivery jsonb not null,
  -- Real-time funding: the reference the payer quotes.
  funding_reference text,
  transaction_id text not null,
  agent_id text,
  expires_at timestamptz(3) not null,
  executed_at timestamptz(3),
  -- What the rail will report, and when (relative to rail_initiated_at); next_step is the next to apply.
  rail_plan jsonb,
  rail_initiated_at timestamptz(3),
  next_step int not null default 0,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index quotes_transaction on quotes (transaction_id);
create unique index quotes_funding_reference on quotes (platform_id, funding_reference) where funding_reference is not null;

create table lookups (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  kind text not null check (kind in ('EXTERNAL_ACCOUNT', 'UMA')),
  account_id text,
  receiver_uma_address text,
  customer_id text,
  sender_uma_address text,
  supported_currencies jsonb not null,
  required_payer_data_fields jsonb not null,
  expires_at timestamptz(3) not null,
  created_at timestamptz(3) not null
);
create index lookups_platform on lookups (platform_id, created_at);
