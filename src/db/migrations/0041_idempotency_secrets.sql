-- Idempotency records written before one-time secrets were left out of them kept, for their
-- 48 hours, a new token's clientSecret and a new agent's deviceCode in plain text. Removed from
-- what is stored; a replay answers as it does for a record written now (the token without its
-- secret, the agent with a device code made anew). The text is edited rather than rebuilt as
-- jsonb, which would reorder the keys a replay answers with. Both secrets are hex or dashed
-- codes, never holding a quote.
update idempotency_keys
set response = regexp_replace(
    regexp_replace(response::text, ',"(clientSecret|deviceCode)":"[^"]*"', '', 'g'),
    '"(clientSecret|deviceCode)":"[^"]*",?', '', 'g')::json
where response::text ~ '"(clientSecret|deviceCode)":"';
