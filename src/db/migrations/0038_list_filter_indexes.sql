-- Filtered lists on a large platform (review at scale, 2026-11-27: a platform with a million
-- transactions and 200,000 customers). Each index below leads with the filter and ends with the
-- list's order, so a page reads its rows in order and its count reads only the matching entries.
--
-- GET /transactions?platformCustomerId: no index held the column (500–730 ms for a customer
-- with eight transactions; 0.16 ms with it).
create index transactions_platform_customer on transactions (platform_id, platform_customer_id, created_at, id);

-- senderAccountIdentifier / receiverAccountIdentifier / accountIdentifier: with the identifier
-- alone, a page of an account whose payments are old walked the platform's list in order and
-- filtered (847,611 rows for one page, 514 ms; 8 ms with the order in the index).
create index transactions_source_page on transactions (platform_id, source_identifier, created_at, id);
create index transactions_destination_page on transactions (platform_id, destination_identifier, created_at, id);
drop index transactions_source;
drop index transactions_destination;

-- GET /customers?umaAddress: the unique index covers live customers only (not a list with
-- isIncludingDeleted) and gave the planner no order to read in; a page walked the platform's
-- customers by date and filtered (131–203 ms at 200,000 customers; 0.07 ms with this index).
create index customers_uma_page on customers (platform_id, lower(uma_address), created_at, id);

-- /metrics counted failed deliveries by reading every event on each scrape (133 ms at 500,000
-- events). Only failed rows enter this index; the PENDING partial index already makes a
-- delivery's state change a non-HOT update, so events pay nothing more.
create index events_failed on events (created_at) where delivery_state = 'FAILED';
