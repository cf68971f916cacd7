-- A replay must answer the first response's bytes. jsonb stores objects with their keys sorted
-- (by length, then bytes), so parts of a response the serializer passes through as they are (a
-- beneficiary, say) came back in another order; json keeps the text as written.
alter table idempotency_keys alter column response type json using response::json;
