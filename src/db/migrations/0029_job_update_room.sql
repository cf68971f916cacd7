-- A job is inserted, claimed (an update of its lease and attempts, no indexed column) and deleted.
-- Inserts filled each page, so most claims wrote a new entry into each of the three indexes; with
-- a third of each new page kept free the claim can stay on the page (a HOT update).
alter table jobs set (fillfactor = 70);
