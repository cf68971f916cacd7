-- UMA invitations. The code is the key: it is random and unguessable, and any platform of this
-- instance that knows it may read or claim the invitation; only the creating platform cancels it.
create table invitations (
  code text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  inviter_customer_id text not null,
  inviter_uma text not null,
  invitee_uma text,
  first_name text,
  -- Display only: the inviter platform sends the payment itself after INVITATION.CLAIMED.
  amount_to_send bigint check (amount_to_send > 0),
  amount_currency text,
  status text not null check (status in ('PENDING', 'CLAIMED', 'EXPIRED', 'CANCELLED')),
  -- The platform whose token claimed it (may differ from platform_id).
  claimed_by_platform_id text,
  created_at timestamptz(3) not null,
  expires_at timestamptz(3),
  claimed_at timestamptz(3),
  cancelled_at timestamptz(3),
  updated_at timestamptz(3) not null,
  check ((amount_to_send is null) = (amount_currency is null))
);
create index invitations_platform on invitations (platform_id, created_at, code);
