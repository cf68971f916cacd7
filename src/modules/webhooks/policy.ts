import type { EventType } from '../../core/events.js';
import { describeOutcome, type DeliveryOutcome } from './delivery.js';
import type { RecordedState } from './repository.js';

/** Retries stop this long after the event happened. */
export const RETRY_WINDOW_MS = 7 * 24 * 3600_000;
export const FIRST_RETRY_DELAY_MS = 30_000;
export const MAX_RETRY_DELAY_MS = 30 * 60_000;

/**
 * Event types whose delivery asks the platform for a decision. They get one decisive try: a
 * payment cannot wait days for an answer, so a missing answer is itself the outcome.
 */
export const APPROVAL_EVENT_TYPES = ['INCOMING_PAYMENT.PENDING'] as const satisfies readonly EventType[];
export type ApprovalEventType = (typeof APPROVAL_EVENT_TYPES)[number];

export function isApprovalEvent(type: string): type is ApprovalEventType {
  return (APPROVAL_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * Wait before the next try after `failures` failed tries: 30 s, 1 min, 2 min, … capped at 30 min.
 * Jitter takes off up to a quarter, so receivers that failed together do not retry in lockstep.
 */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (1 - 0.25 * random()));
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Answers that settle an approval event: a decision, a deferral (202), or "already processed" (409). */
function isDecisiveAnswer(status: number): boolean {
  return isSuccess(status) || status === 403 || status === 409 || status === 422;
}

export interface AttemptContext {
  type: string;
  /** Tries so far, this one included. */
  attempt: number;
  nowMs: number;
  /** Wall-clock time after which no further try is scheduled. */
  giveUpAtMs: number;
}

/** What to record after a try: delivered, skipped, given up, or retried later. */
export function nextState(outcome: DeliveryOutcome, context: AttemptContext): RecordedState {
  if (outcome.kind === 'no_endpoint') return { state: 'SKIPPED', note: describeOutcome(outcome) };
  if (outcome.kind === 'response' && isSuccess(outcome.status)) return { state: 'DELIVERED', note: null };
  if (outcome.kind === 'response' && outcome.status === 409) {
    return { state: 'DELIVERED', note: 'HTTP 409: the receiver had already processed this event' };
  }
  const note = describeOutcome(outcome);
  if (isApprovalEvent(context.type)) {
    const decisive = outcome.kind === 'response' && isDecisiveAnswer(outcome.status);
    return { state: decisive ? 'DELIVERED' : 'FAILED', note };
  }
  if (context.nowMs >= context.giveUpAtMs) return { state: 'FAILED', note: `${note}; gave up after ${context.attempt} tries` };
  const nextMs = Math.min(context.nowMs + retryDelayMs(context.attempt), context.giveUpAtMs);
  return { state: 'PENDING', nextAttemptAt: new Date(nextMs), note };
}
