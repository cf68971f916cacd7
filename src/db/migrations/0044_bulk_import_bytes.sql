-- A bulk import's run reads its stored CSV a slice at a time (`substring` of bytes from the
-- resume offset), not the whole file: the file is kept as the bytes uploaded (UTF-8), and stored
-- uncompressed, so that a slice reads only the TOAST chunks it covers (a compressed value is
-- decompressed from its start up to the slice). It is dropped when its import ends.
-- One statement: the rewrite that changes the type then stores the files it converts
-- uncompressed too (set afterwards, the storage applies only to files stored later).
alter table bulk_imports
  alter column csv type bytea using convert_to(csv, 'UTF8'),
  alter column csv set storage external;
-- Where row `processed` starts in the file, in bytes. The offsets stored so far counted UTF-16
-- code units and are forgotten: an import in flight counts its rows from the header once.
alter table bulk_imports drop column resume_at, add column resume_byte int;
