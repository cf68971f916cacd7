-- Resolving a hold changes a transfer's state and resolved_at. Both account indexes held `state`,
-- so every resolution was a new row version with a new entry in each of the four indexes; and
-- every leg to a system account added an entry with the same key (the account, PENDING) to a
-- leaf page all transfers of that platform and currency shared. No query reads transfers by
-- account: `ledger verify` scans them all, and a transaction's legs are found by
-- ledger_transfers_transaction. Without the two indexes no indexed column changes when a hold is
-- resolved, and room left on each page lets the new version stay there (a HOT update).
drop index ledger_transfers_debit;
drop index ledger_transfers_credit;
alter table ledger_transfers set (fillfactor = 80);
