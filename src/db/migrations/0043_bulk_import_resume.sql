-- Where a bulk import's next row starts in its stored CSV, so a run resumes there instead of
-- parsing the whole file again: an offset in UTF-16 code units (JavaScript's string index, used
-- only by the application), written with `processed` in the statement that counts each row.
-- Null: no row counted since this column was added; the run then counts rows from the header.
alter table bulk_imports add column resume_at int;
