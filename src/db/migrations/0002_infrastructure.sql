-- Cross-cutting tables: idempotency keys, the durable job queue, the event outbox.
create table idempotency_keys (
  scope text not null,
  key text not null,
  request_hash text not null,
  status_code int,
  response jsonb,
  locked_until timestamptz(3),
  created_at timestamptz(3) not null default now(),
  primary key (scope, key)
);
create index idempotency_keys_age on idempotency_keys (created_at);

create table jobs (
  id bigint generated always as identity primary key,
  platform_id text references platforms (id) on delete cascade,
  kind text not null,
  payload jsonb not null default '{}',
  -- Real (wall-clock) time at which the job is due. Advancing a platform's test clock moves
  -- its jobs' due_at back by the same amount, so this column stays indexable.
  due_at timestamptz(3) not null,
  attempts int not null default 0,
  max_attempts int not null default 10,
  locked_until timestamptz(3),
  last_error text,
  -- Set when the job ran out of attempts; it stays for inspection and is never claimed again.
  dead_at timestamptz(3),
  created_at timestamptz(3) not null default now()
);
create index jobs_due on jobs (due_at) where dead_at is null;
create index jobs_platform on jobs (platform_id);

create table events (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  type text not null,
  data jsonb not null,
  -- The platform-clock time of the state change; the webhook envelope's timestamp.
  created_at timestamptz(3) not null,
  delivery_state text not null default 'PENDING'
    check (delivery_state in ('PENDING', 'DELIVERED', 'FAILED', 'SKIPPED')),
  attempts int not null default 0,
  next_attempt_at timestamptz(3) not null default now(),
  last_error text,
  delivered_at timestamptz(3)
);
create index events_pending on events (next_attempt_at) where delivery_state = 'PENDING';
create index events_platform on events (platform_id, created_at, id);
