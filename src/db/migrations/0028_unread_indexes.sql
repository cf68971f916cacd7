-- Three indexes that no query reads, each written on the hottest inserts: events by platform and
-- time (the delivery worker claims through events_pending, pruning filters by state and age, and
-- there is no list of events), quotes by transaction and transactions by quote (a quote carries
-- its transaction's id and a transaction its quote's; neither is looked up by the other). A quote
-- and its execution wrote about six entries into them (five events, one quote, one transaction,
-- and a quote index entry again on each of the quote's updates, which are never HOT).
drop index events_platform;
drop index quotes_transaction;
drop index transactions_quote;
