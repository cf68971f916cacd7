-- Agents: programmatic actors bound to one customer, with permissions and a spending policy
-- (docs/agents.md). Deleting an agent keeps its row (deleted_at), so the transactions and actions
-- that name it still resolve.
create table agents (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  customer_id text not null,
  name text not null,
  is_paused boolean not null default false,
  is_connected boolean not null default false,
  -- The normalized AgentPolicy (see src/modules/agents/policy.ts).
  policy jsonb not null,
  -- The access token handed out when the device code was redeemed: its public id and a salted
  -- SHA-256 of its secret part (the token itself is never stored).
  token_id text,
  token_salt text,
  token_hash text,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  deleted_at timestamptz(3)
);
create index agents_page on agents (platform_id, created_at, id) where deleted_at is null;
create index agents_customer on agents (platform_id, customer_id) where deleted_at is null;
create unique index agents_token on agents (token_id) where token_id is not null;

-- One-time codes that connect agent software. Only a SHA-256 of the code is kept.
create table agent_device_codes (
  code_hash text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  agent_id text not null references agents (id) on delete cascade,
  expires_at timestamptz(3) not null,
  redeemed_at timestamptz(3),
  created_at timestamptz(3) not null
);
create index agent_device_codes_agent on agent_device_codes (agent_id);

-- What agents asked to do. Usage (dailySpend, monthlySpend, dailyTransactionCount) is derived from
-- the actions that count (PENDING_APPROVAL and APPROVED) of the current UTC day and month of the
-- platform clock: a rejected or failed action stops counting by changing its status.
create table agent_actions (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  agent_id text not null references agents (id) on delete cascade,
  customer_id text not null,
  platform_customer_id text not null,
  type text not null check (type in ('EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN')),
  status text not null check (status in ('PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED')),
  quote_id text,
  -- TRANSFER_*: {amount, currency, sourceAccountId, destinationAccountId}.
  transfer_details jsonb,
  -- Set once execution began (approved, or submitted under AUTO).
  transaction_id text,
  rejection_reason text,
  failure_reason text,
  -- What the action counts against the limits: amount in the policy currency at submission time,
  -- and the UTC day (YYYY-MM-DD) and month (YYYY-MM) of the platform clock it counts in.
  spend_amount bigint not null check (spend_amount >= 0),
  spend_currency text not null,
  spend_day text not null,
  spend_month text not null,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index agent_actions_page on agent_actions (platform_id, agent_id, created_at, id);
create index agent_actions_pending on agent_actions (platform_id, created_at, id) where status = 'PENDING_APPROVAL';
create index agent_actions_usage on agent_actions (agent_id, spend_month, spend_day) where status in ('PENDING_APPROVAL', 'APPROVED');
create index agent_actions_transaction on agent_actions (transaction_id) where transaction_id is not null;
-- A quote has at most one action that is waiting or went ahead.
create unique index agent_actions_quote_live on agent_actions (quote_id) where quote_id is not null and status in ('PENDING_APPROVAL', 'APPROVED');
