-- Bytes of document files stored per platform, kept by a trigger in the same transaction as the
-- documents' rows, so that the storage quota reads one row instead of summing every document of
-- the platform. Taking that row's lock is also what puts one platform's uploads in line.
create table document_storage (
  platform_id text primary key references platforms (id) on delete cascade,
  bytes bigint not null check (bytes >= 0)
);

insert into document_storage (platform_id, bytes)
select platform_id, sum(size_bytes) from documents group by platform_id;

create function document_storage_count() returns trigger
language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    update document_storage set bytes = bytes - old.size_bytes where platform_id = old.platform_id;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    insert into document_storage (platform_id, bytes) values (new.platform_id, new.size_bytes)
    on conflict (platform_id) do update set bytes = document_storage.bytes + excluded.bytes;
  end if;
  return null;
end
$$;

create trigger documents_storage after insert or update of size_bytes or delete on documents
for each row execute function document_storage_count();
