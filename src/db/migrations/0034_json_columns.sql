-- The payment documents of quotes and transactions, and job payloads, are written on every
-- payment and read back whole, never queried inside: json stores the text as sent after checking
-- its syntax, where jsonb builds (and later prints) a binary tree. Alternated with the jsonb build
-- on the quote + execute bench: about 3% less PostgreSQL CPU per request (docs/benchmarks.md).
alter table quotes
  alter column source type json using source::json,
  alter column destination type json using destination::json,
  alter column rate_details type json using rate_details::json,
  alter column payment_instructions type json using payment_instructions::json,
  alter column counterparty_information type json using counterparty_information::json,
  alter column sender_customer_info type json using sender_customer_info::json,
  alter column delivery type json using delivery::json,
  alter column rail_plan type json using rail_plan::json;
alter table transactions
  alter column source type json using source::json,
  alter column destination type json using destination::json,
  alter column counterparty_information type json using counterparty_information::json,
  alter column rate_details type json using rate_details::json,
  alter column payment_instructions type json using payment_instructions::json,
  alter column refund type json using refund::json;
alter table jobs alter column payload drop default, alter column payload type json using payload::json, alter column payload set default '{}';
