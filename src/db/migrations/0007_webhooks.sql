-- Webhook delivery: one P-256 signing key per platform, created on first need.
create table webhook_signing_keys (
  platform_id text primary key references platforms (id) on delete cascade,
  -- PKCS#8 PEM. Stored in the clear: see docs/decisions.md ("Webhook signing keys").
  private_key_pem text not null,
  -- SPKI PEM, what GET /webhooks/signing-key hands the platform.
  public_key_pem text not null,
  created_at timestamptz(3) not null default now()
);

-- Keep the emitter's key order in webhook payloads: jsonb would reorder keys (shortest first).
alter table events alter column data type json using data::json;
