import type { Logger } from 'pino';
import type { EventType } from '../../core/events.js';
import { describeOutcome, type DeliveryOutcome, type Envelope } from './delivery.js';
import type { ApprovalEventType } from './policy.js';

/** The event a try was about: the envelope the platform received, and whose it is. */
export interface DeliveredEvent extends Envelope {
  platformId: string;
}

export interface ResponseInfo {
  event: DeliveredEvent;
  outcome: DeliveryOutcome;
  /** Tries so far, this one included. */
  attempt: number;
  /** Whether another try is scheduled (never for approval events). */
  willRetry: boolean;
}

export type ResponseHandler = (info: ResponseInfo) => void | Promise<void>;

export type ApprovalFailureReason = 'PAYMENT_APPROVAL_TIMED_OUT' | 'PAYMENT_APPROVAL_WEBHOOK_ERROR';

/** The platform's answer to an approval webhook, read from the delivery outcome. */
export type ApprovalDecision =
  /** `automatic`: the platform has no webhookEndpoint, so nobody is asked and the payment proceeds. */
  | { kind: 'approve'; receiverCustomerInfo?: Record<string, unknown>; automatic: boolean }
  | { kind: 'reject'; reason?: string; requiredFields?: string[] }
  /** 202 (or 409, a repeat of an event already answered): the decision comes from approve/reject. */
  | { kind: 'await' }
  | { kind: 'fail'; failureReason: ApprovalFailureReason; detail: string };

export interface ApprovalInfo {
  event: DeliveredEvent;
  decision: ApprovalDecision;
  outcome: DeliveryOutcome;
}

export type ApprovalHandler = (info: ApprovalInfo) => void | Promise<void>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(body: unknown, name: string): string | undefined {
  const value = isRecord(body) ? body[name] : undefined;
  return typeof value === 'string' && value.length > 0 ? value.slice(0, 500) : undefined;
}

/**
 * Maps a try's outcome to the approval decision the reference describes: 200 approves (with
 * optional `receiverCustomerInfo`), 403 rejects (optional `reason`), 422 rejects for missing
 * counterparty fields (`requiredFields`), 202 defers to approve/reject, no answer in time is
 * PAYMENT_APPROVAL_TIMED_OUT and anything else PAYMENT_APPROVAL_WEBHOOK_ERROR.
 */
export function approvalDecision(outcome: DeliveryOutcome): ApprovalDecision {
  switch (outcome.kind) {
    case 'no_endpoint':
      return { kind: 'approve', automatic: true };
    case 'timeout':
      return { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT', detail: describeOutcome(outcome) };
    case 'error':
      return { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR', detail: describeOutcome(outcome) };
    case 'response':
      return decisionForStatus(outcome.status, outcome.body);
  }
}

function decisionForStatus(status: number, body: unknown): ApprovalDecision {
  if (status === 202 || status === 409) return { kind: 'await' };
  if (status >= 200 && status < 300) {
    const info = isRecord(body) && isRecord(body.receiverCustomerInfo) ? body.receiverCustomerInfo : undefined;
    return { kind: 'approve', automatic: false, ...(info && { receiverCustomerInfo: info }) };
  }
  if (status === 403) {
    const reason = stringField(body, 'reason');
    return { kind: 'reject', ...(reason && { reason }) };
  }
  if (status === 422) {
    const fields = isRecord(body) && Array.isArray(body.requiredFields) ? body.requiredFields.filter((f): f is string => typeof f === 'string') : [];
    return { kind: 'reject', reason: stringField(body, 'reason') ?? 'COUNTERPARTY_INFORMATION_REQUIRED', requiredFields: fields };
  }
  return { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR', detail: `HTTP ${status}` };
}

/** Handlers other modules register for the outcome of deliveries of one event type. */
export function createResponseHooks(log: Logger) {
  const handlers = new Map<string, ResponseHandler[]>();

  function onResponse(type: EventType, handler: ResponseHandler): void {
    handlers.set(type, [...(handlers.get(type) ?? []), handler]);
  }

  function onApproval(type: ApprovalEventType, handler: ApprovalHandler): void {
    onResponse(type, ({ event, outcome }) => handler({ event, outcome, decision: approvalDecision(outcome) }));
  }

  /** Runs the handlers of the event's type; one failing handler is logged and does not stop the others. */
  async function notify(info: ResponseInfo): Promise<void> {
    for (const handler of handlers.get(info.event.type) ?? []) {
      try {
        await handler(info);
      } catch (err) {
        log.error({ err, eventId: info.event.id, type: info.event.type }, 'webhook response handler failed');
      }
    }
  }

  return { onResponse, onApproval, notify };
}

export type ResponseHooks = ReturnType<typeof createResponseHooks>;
