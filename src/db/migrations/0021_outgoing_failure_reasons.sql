-- Outgoing transactions used to fail with OFFRAMP_FAILED (rail failures) or LNURLP_FAILED /
-- PAY_REQUEST_FAILED (an UMA receiver that could not be paid), values of the reference's
-- incoming enum only. Clients that read outgoing transactions with the reference's
-- OutgoingTransactionFailureReason could not parse them. Stored rows take the values new
-- failures get: a payment that never started is QUOTE_EXECUTION_FAILED, one the receiving side
-- failed or returned is COUNTERPARTY_POST_TX_FAILED (failure_detail keeps what happened). Agent
-- actions copy their transaction's reason, so they follow.
update transactions
set failure_reason = case when failure_reason = 'OFFRAMP_FAILED' then 'COUNTERPARTY_POST_TX_FAILED' else 'QUOTE_EXECUTION_FAILED' end
where type = 'OUTGOING' and failure_reason in ('OFFRAMP_FAILED', 'LNURLP_FAILED', 'PAY_REQUEST_FAILED');

update agent_actions a
set failure_reason = t.failure_reason
from transactions t
where t.id = a.transaction_id and t.platform_id = a.platform_id and t.type = 'OUTGOING'
  and a.failure_reason in ('OFFRAMP_FAILED', 'LNURLP_FAILED', 'PAY_REQUEST_FAILED');
