-- Indexes for the maintenance that prunes rows past their use (src/maintenance.ts).
--
-- A receiver lookup is kept while a quote names it (the UMA payer reads it again at execution):
-- the prune asks, for each old lookup, whether a quote does. Only quotes made from a lookup
-- carry an entry.
create index quotes_lookup on quotes (lookup_id) where lookup_id is not null;

-- Invoices no payment accepted (OPEN, or CANCELLED on a late or refused settlement), by expiry.
-- Accepted invoices leave the index: they record a payment and are kept.
create index uma_invoices_unaccepted on uma_invoices (expires_at) where status in ('OPEN', 'CANCELLED');
