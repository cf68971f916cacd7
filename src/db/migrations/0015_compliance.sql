-- Customer verification (KYC/KYB), beneficial owners, verification documents and bulk customer
-- imports.

create table beneficial_owners (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  -- The business customer the person belongs to.
  customer_id text not null,
  roles text[] not null,
  ownership_percentage int not null check (ownership_percentage between 0 and 100),
  -- firstName, middleName, lastName, birthDate, nationality, email, phoneNumber, address, idType,
  -- identifier, countryOfIssuance.
  personal_info jsonb not null,
  kyc_status text not null check (kyc_status in ('UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED')),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index beneficial_owners_customer on beneficial_owners (platform_id, customer_id, created_at, id);

create table verifications (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  customer_id text not null,
  status text not null check (status in ('RESOLVE_ERRORS', 'PENDING_MANUAL_REVIEW', 'IN_PROGRESS', 'APPROVED', 'REJECTED', 'READY_FOR_VERIFICATION')),
  errors jsonb not null default '[]',
  customer_type text not null check (customer_type in ('INDIVIDUAL', 'BUSINESS')),
  -- The customer's kycStatus (individuals) or kybStatus (businesses) this verification led to.
  customer_status text not null,
  -- Who decided a manual review (operator note), when it was decided that way.
  resolution_note text,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index verifications_page on verifications (platform_id, created_at, id);
create index verifications_customer on verifications (platform_id, customer_id, created_at);
-- At most one verification per customer waits for a manual decision.
create unique index verifications_one_open on verifications (customer_id) where status = 'PENDING_MANUAL_REVIEW';

create table documents (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  -- Customer:… or BeneficialOwner:…
  holder_id text not null,
  -- The customer the holder is or belongs to.
  customer_id text not null,
  document_type text not null,
  side text,
  country text not null,
  document_number text,
  file_name text not null,
  content_type text not null,
  size_bytes bigint not null check (size_bytes > 0),
  sha256 text not null,
  -- Path of the file relative to the documents directory.
  storage_key text not null,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index documents_page on documents (platform_id, created_at, id);
create index documents_holder on documents (platform_id, holder_id);
create index documents_customer on documents (platform_id, customer_id);

create table bulk_imports (
  id text primary key,
  platform_id text not null references platforms (id) on delete cascade,
  status text not null check (status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
  file_name text,
  -- The uploaded CSV, kept until the import finishes (any process may run the job).
  csv text,
  total int not null,
  -- Rows handled so far, in file order: row n is done exactly when processed >= n.
  processed int not null default 0,
  successful int not null default 0,
  failed int not null default 0,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  completed_at timestamptz(3)
);

create table bulk_import_errors (
  import_id text not null references bulk_imports (id) on delete cascade,
  -- 1-based data row number (the header is row 0).
  row_number int not null,
  correlation_id text not null,
  code text not null,
  message text not null,
  details jsonb not null,
  primary key (import_id, row_number)
);
