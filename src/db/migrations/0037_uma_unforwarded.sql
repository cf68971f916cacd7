-- A customer's verification becoming APPROVED forwards the UMA deposits the send rule held
-- back (uma.resumeForwards): found by customer among the few held back, not by scanning the
-- platform's invoices.
create index uma_invoices_unforwarded on uma_invoices (customer_id)
  where deposit_account_id is not null and forward_transaction_id is null;
