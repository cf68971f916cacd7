-- now() has microseconds and a timestamptz(3) column rounds them, so an event written in the
-- second half of a millisecond was due half a millisecond in the future: a worker polling at
-- once (deliverDue, "every event due now") could pass it over until its next poll. Truncated,
-- an event is due the moment it is written.
alter table events alter column next_attempt_at set default date_trunc('milliseconds', now());
