-- UMA: signing keys, seen nonces, lookups, invoices (receiving side), payments (sending side),
-- counterparty providers. See docs/uma.md.

-- One secp256k1 key per platform signs and decrypts its UMA messages (UMAD-02 allows one key for
-- both). The private key is AES-256-GCM sealed with a key derived from WALLET_ENCRYPTION_KEY.
create table uma_keys (
  platform_id text primary key references platforms (id) on delete cascade,
  sealed_private_key text not null,
  -- Uncompressed SEC1 point, hex (65 bytes).
  public_key text not null,
  -- Self-signed X.509 certificate wrapping public_key, DER hex.
  certificate text not null,
  created_at timestamptz(3) not null
);

-- Nonces of signed UMA messages already accepted, per signing domain. Rows older than the
-- accepted timestamp window are useless and pruned.
create table uma_nonces (
  vasp_domain text not null,
  nonce text not null,
  signed_at timestamptz(3) not null,
  primary key (vasp_domain, nonce)
);
create index uma_nonces_signed_at on uma_nonces (signed_at);

-- What a UMA lookup learned beyond the generic lookup row (quotes' `lookups`, same id).
create table uma_lookups (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  receiver_uma_address text not null,
  receiver_domain text not null,
  -- Sandbox addresses: SUCCESS, PENDING_LONG or FAIL_COMPLIANCE; null for real counterparties.
  sandbox_outcome text,
  sender_identifier text,
  callback text,
  uma_version text,
  -- Receiver currencies as the lnurlp response gave them: code, multiplier, decimals, min, max.
  currencies jsonb not null,
  created_at timestamptz(3) not null
);

-- Receiving side: one invoice per accepted pay request. The payment hash is sha256(preimage);
-- the preimage is revealed to the payer when the payment settles (hold-invoice semantics).
create table uma_invoices (
  payment_hash text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  invoice text not null,
  customer_id text not null,
  -- Internal account credited, and the external account it is forwarded to (defaultUmaDepositAccount).
  account_id text not null,
  deposit_account_id text,
  sender_identifier text not null,
  sender_domain text not null,
  receiver_identifier text not null,
  currency text not null,
  amount bigint not null,
  amount_msats bigint not null,
  preimage text not null,
  counterparty_information jsonb,
  status text not null check (status in ('OPEN', 'ACCEPTED', 'CANCELLED')),
  -- Assigned when the invoice is created, so accepting it twice creates one transaction.
  transaction_id text not null,
  forward_transaction_id text,
  expires_at timestamptz(3) not null,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index uma_invoices_platform on uma_invoices (platform_id, created_at);

-- Sending side: the invoice a quote's pay request obtained and how paying it went.
create table uma_payments (
  quote_id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  receiver_domain text not null,
  invoice text not null,
  payment_hash text not null,
  amount_msats bigint not null,
  status text not null check (status in ('INVOICED', 'SETTLING', 'SETTLED', 'FAILED')),
  preimage text,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);

-- Counterparty UMA providers a platform has dealt with (looked up, or been paid by).
create table uma_providers (
  platform_id text not null references platforms (id) on delete cascade,
  -- The provider's UMA domain; `id` so that keyset pagination can use it.
  id text not null,
  name text not null,
  supported_regions text[] not null default '{}',
  currency_codes text[] not null default '{}',
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  primary key (platform_id, id)
);
create index uma_providers_page on uma_providers (platform_id, created_at, id);
