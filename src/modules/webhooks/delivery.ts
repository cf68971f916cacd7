import type { EventType } from '../../core/events.js';
import { fetchFor, guardRefusalOf, readAtMost } from '../../core/outbound.js';
import type { SigningKeys } from './keys.js';

export const SIGNATURE_HEADER = 'X-Service-Signature';
const USER_AGENT = 'Corridor-Webhooks/1';
/** How much of a receiver's answer is read; the rest is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** What a platform receives: the webhook envelope. */
export interface Envelope {
  id: string;
  type: EventType;
  /** When the state change happened, in the platform's clock. */
  timestamp: string;
  data: unknown;
}

/** How one try ended. `no_endpoint`: the platform has no webhookEndpoint, so nothing was sent. */
export type DeliveryOutcome =
  | { kind: 'response'; status: number; text: string; body: unknown }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'error'; message: string }
  | { kind: 'no_endpoint' };

/** Thrown when shutdown interrupts a try: the caller hands the event back instead of counting a failure. */
export class DeliveryInterrupted extends Error {
  constructor() {
    super('webhook delivery interrupted by shutdown');
    this.name = 'DeliveryInterrupted';
  }
}

/** The exact bytes that are sent and signed. */
export function serializeEnvelope(envelope: Envelope): Buffer {
  const { id, type, timestamp, data } = envelope;
  return Buffer.from(JSON.stringify({ id, type, timestamp, data }));
}

export interface SendOptions {
  timeoutMs: number;
  /** Whether the endpoint may be a loopback or private address (sandbox platforms, or allowed by the operator). */
  allowPrivate: boolean;
  /** Aborted on shutdown. */
  shutdown?: AbortSignal;
}

/** Signs the envelope with the platform's key and POSTs it to `url`. Never throws for the receiver's faults. */
export async function sendWebhook(keys: SigningKeys, platformId: string, url: string, envelope: Envelope, options: SendOptions): Promise<DeliveryOutcome> {
  const body = serializeEnvelope(envelope);
  const signature = await keys.sign(platformId, body);
  return post(url, body, signature, options);
}

async function post(url: string, body: Buffer, signature: string, { timeoutMs, shutdown, allowPrivate }: SendOptions): Promise<DeliveryOutcome> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = shutdown ? AbortSignal.any([timeout, shutdown]) : timeout;
  try {
    // Connects only to a public address when private ones are not allowed, checked as the socket
    // connects (and so on every try: a host's DNS answer can change after PATCH /config accepted it).
    const response = await fetchFor(allowPrivate)(url, {
      method: 'POST',
      body: new Uint8Array(body),
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, [SIGNATURE_HEADER]: signature },
      signal,
      // A redirect is an answer like any other non-2xx: following it would post the payload somewhere the platform never configured.
      redirect: 'manual',
    });
    // A longer answer is cut, not refused: the receiver's status is the outcome, the text only shown.
    const text = (await readAtMost(response, MAX_RESPONSE_BYTES)).toString('utf8');
    return { kind: 'response', status: response.status, text, body: parseJson(text) };
  } catch (error) {
    if (shutdown?.aborted) throw new DeliveryInterrupted();
    if (timeout.aborted) return { kind: 'timeout', timeoutMs };
    return { kind: 'error', message: networkErrorMessage(error) };
  }
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function networkErrorMessage(error: unknown): string {
  const refusal = guardRefusalOf(error);
  if (refusal) return `${refusal}, which production platforms may not call`;
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.message ? `${cause.code}: ${cause.message}` : cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** One line for logs and the event's `last_error`. */
export function describeOutcome(outcome: DeliveryOutcome): string {
  switch (outcome.kind) {
    case 'response':
      return `HTTP ${outcome.status}`;
    case 'timeout':
      return `no response within ${outcome.timeoutMs} ms`;
    case 'error':
      return `request failed: ${outcome.message}`;
    case 'no_endpoint':
      return 'no webhookEndpoint configured';
  }
}
