-- Embedded wallets: platform settings, credentials, sessions, authentication challenges,
-- signed-retry challenges and the wallets' exportable secrets.

-- Corridor extension of the platform configuration (see docs/embedded-wallets.md).
alter table platforms add column embedded_wallets jsonb not null
  default '{"currencies": [], "oidcIssuers": []}';

-- The exportable secret of an embedded wallet (a BIP-39 mnemonic), encrypted at rest with a key
-- derived from WALLET_ENCRYPTION_KEY. Created on first need; also the row locked to serialize
-- credential registration on one account.
create table wallet_secrets (
  account_id text primary key references internal_accounts (id),
  platform_id text not null references platforms (id) on delete cascade,
  encrypted_mnemonic text not null,
  created_at timestamptz(3) not null
);

create table wallet_credentials (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  account_id text not null references internal_accounts (id),
  type text not null check (type in ('EMAIL_OTP', 'OAUTH', 'PASSKEY')),
  nickname text not null,
  -- EMAIL_OTP
  email text,
  -- OAUTH: the identity the credential is bound to.
  oidc_issuer text,
  oidc_audience text,
  oidc_subject text,
  -- PASSKEY: WebAuthn credential id (base64url), COSE public key, signature counter, and where it
  -- was registered. Binary values are base64url.
  passkey_credential_id text,
  passkey_public_key text,
  passkey_counter bigint,
  passkey_transports text[],
  passkey_origin text,
  passkey_rp_id text,
  revoked_at timestamptz(3),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
-- One live credential per type per account (v1 rule).
create unique index wallet_credentials_one_per_type on wallet_credentials (account_id, type) where revoked_at is null;
create index wallet_credentials_platform on wallet_credentials (platform_id, account_id);

-- Registration challenges of passkeys are single use.
create table wallet_used_registration_challenges (
  platform_id text not null references platforms (id) on delete cascade,
  challenge_hash text not null,
  created_at timestamptz(3) not null,
  primary key (platform_id, challenge_hash)
);

-- Sessions: only the public half of the session key is kept; the client holds the private key.
create table wallet_sessions (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  account_id text not null references internal_accounts (id),
  credential_id text not null references wallet_credentials (id),
  public_key text not null,
  expires_at timestamptz(3) not null,
  revoked_at timestamptz(3),
  created_at timestamptz(3) not null
);
create index wallet_sessions_account on wallet_sessions (account_id, expires_at) where revoked_at is null;

-- Pending proofs of a credential: a WebAuthn challenge (PASSKEY) or an emailed code (EMAIL_OTP).
create table wallet_auth_challenges (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  credential_id text not null references wallet_credentials (id),
  kind text not null check (kind in ('PASSKEY', 'EMAIL_OTP')),
  -- PASSKEY: the WebAuthn challenge (base64url) and the client key the session is sealed to.
  challenge text,
  client_public_key text,
  -- EMAIL_OTP: keyed hash of the code, and failed attempts so far.
  otp_hash text,
  attempts integer not null default 0,
  expires_at timestamptz(3) not null,
  consumed_at timestamptz(3),
  created_at timestamptz(3) not null
);
create index wallet_auth_challenges_credential on wallet_auth_challenges (credential_id, created_at);

-- Signed-retry challenges (202 responses): single use, expiring on the platform clock.
create table signed_retry_challenges (
  request_id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  account_id text not null,
  operation text not null,
  body_hash text,
  payload text not null,
  exclude_credential_id text,
  expires_at timestamptz(3) not null,
  consumed_at timestamptz(3),
  created_at timestamptz(3) not null
);
create index signed_retry_challenges_expiry on signed_retry_challenges (expires_at);
