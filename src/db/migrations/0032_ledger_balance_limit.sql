-- Balances reach the API as JavaScript numbers, exact only up to 2^53 - 1. Amounts are capped
-- below that, but a balance is a sum: without a limit, a few large credits made a balance the API
-- showed rounded (while the ledger held it exactly). The limit counts pending credits too, so a
-- payment is refused when it is made, not when its credit posts in the background. System
-- accounts (settlement, funding, fees) have no balance the API shows and are exempt, as from the
-- overdraft check. NOT VALID: an existing row over the limit is not refused until it changes.
alter table ledger_accounts add constraint ledger_accounts_balance_limit
  check (no_balance_check or posted_credits + pending_credits - posted_debits <= 9007199254740991) not valid;
