-- The ledger functions look up accounts and transfers by key only. PL/pgSQL keeps one plan per
-- statement for the life of a connection, and a plan made while a table was a page or two scans it
-- (cheaper than an index then) and goes on scanning it as it grows: in a bench run, with
-- autovacuum off so that no ANALYZE ever replanned, some connections' ledger_resolve read every
-- transfer three times per call (seq_tup_read of ledger_transfers 273,636 in 56 calls of a 10-s
-- run, a pass that grows with the ledger). Sequential scans off inside the two functions leaves the
-- planner the indexes only, whatever the statistics said when it planned.
alter function ledger_record(text, text, timestamptz, text[], text[], text[], bigint[], boolean[], text[]) set enable_seqscan = off;
alter function ledger_resolve(text, text[], text, boolean, timestamptz) set enable_seqscan = off;
