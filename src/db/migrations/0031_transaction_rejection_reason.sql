-- The reason a platform gives when it refuses an incoming payment (reject call or webhook answer),
-- shown on the transaction as rejectionReason.
alter table transactions add column rejection_reason text;
