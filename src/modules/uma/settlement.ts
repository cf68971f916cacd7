import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import { enqueueJobs, type ClaimedJob, type JobRunner } from '../../core/jobs.js';
import type { Database, Executor } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { Platform, PlatformService } from '../platform/service.js';
import type { QuoteRecord } from '../quotes/repository.js';
import type { RailPlan } from '../rails/rail.js';
import type { FailureDetail } from '../transactions/lifecycle.js';
import { UmaAuthError, type Authenticator } from './authentication.js';
import { baseUrlOf, callCounterparty, CounterpartyError, type HttpAnswer, type NetworkPolicy } from './counterparty.js';
import { preimageMatches } from './invoice.js';
import { signUma, type UmaKeys } from './keys.js';
import * as repo from './repository.js';
import type { PaymentRecord } from './repository.js';

/**
 * Settlement between Corridor instances (docs/uma.md, "Settlement"). There is no Lightning node,
 * so paying the receiver's invoice is a signed `POST /uma/settle` naming the invoice; the receiver
 * answers with a signed status. It behaves like a Lightning hold invoice: PENDING while the
 * receiving platform decides (INCOMING_PAYMENT.PENDING), SETTLED with the preimage once the
 * receiver credited its customer, FAILED when it will not. The sender's legs stay held until then.
 */
export type SettleStatus = 'SETTLED' | 'PENDING' | 'FAILED';

export const settleRequestPayload = (invoice: string, nonce: string, timestampSec: number) => `${invoice}|${nonce}|${timestampSec}`;
export const settleStatusPayload = (paymentHash: string, status: SettleStatus, detail: string, nonce: string, timestampSec: number) =>
  `${paymentHash}|${status}|${detail}|${nonce}|${timestampSec}`;

/** Job that asks the receiver again about an invoice it has not settled yet. */
export const POLL_JOB = 'uma.settle-poll';
const MAX_POLLS = 60;
const MAX_POLL_DELAY_MS = 60_000;

type ReceiverAnswer = { kind: 'SETTLED'; preimage: string } | { kind: 'FAILED'; reason: string } | { kind: 'UNKNOWN' };

const COMPLETED: RailPlan = { steps: [{ afterMs: 0, event: { kind: 'COMPLETED' } }] };

function failureDetailFor(reason: string): FailureDetail {
  if (reason === 'REJECTED') return 'PLATFORM_REJECTED';
  if (reason === 'INVOICE_EXPIRED' || reason === 'PAYMENT_APPROVAL_TIMED_OUT') return 'TIMEOUT';
  return 'COUNTERPARTY_DELIVERY_FAILED';
}

export interface SettlementDeps {
  network: NetworkPolicy;
  database: Database;
  clock: Clock;
  log?: Logger;
  jobs: JobRunner;
  keys: UmaKeys;
  auth: Authenticator;
  platforms: Pick<PlatformService, 'get'>;
  /** The quotes service's resumeDelivery (built after this module). */
  resumeDelivery: (platform: PlatformRef, quoteId: string) => Promise<void>;
}

interface StatusBody {
  status: SettleStatus;
  preimage?: string;
  reason?: string;
  signatureNonce: string;
  signatureTimestamp: number;
  signature: string;
}

function statusBody(json: unknown): StatusBody | undefined {
  const b = json as Partial<StatusBody> | undefined;
  if (!b || !['SETTLED', 'PENDING', 'FAILED'].includes(b.status as string)) return undefined;
  if (typeof b.signature !== 'string' || typeof b.signatureNonce !== 'string' || typeof b.signatureTimestamp !== 'number') return undefined;
  return b as StatusBody;
}

export function createSettlement(deps: SettlementDeps) {
  const { database, clock } = deps;

  /** Reads a signed status answer; anything unverifiable counts as "not known". */
  async function readAnswer(payment: PaymentRecord, answer: HttpAnswer): Promise<ReceiverAnswer> {
    const code = (answer.json as { code?: unknown } | undefined)?.code;
    if (answer.status === 404 && code === 'REQUEST_NOT_FOUND') return { kind: 'FAILED', reason: 'INVOICE_NOT_FOUND' };
    const body = answer.status === 200 ? statusBody(answer.json) : undefined;
    if (!body) return { kind: 'UNKNOWN' };
    const detail = body.status === 'SETTLED' ? (body.preimage ?? '') : body.status === 'FAILED' ? (body.reason ?? '') : '';
    const payload = settleStatusPayload(payment.paymentHash, body.status, detail, body.signatureNonce, body.signatureTimestamp);
    try {
      await deps.auth.verifyMessage({ domain: payment.receiverDomain, payload, signature: body.signature, nonce: body.signatureNonce, timestampSec: body.signatureTimestamp });
    } catch (error) {
      if (!(error instanceof UmaAuthError)) throw error;
      deps.log?.warn({ quoteId: payment.quoteId, reason: error.code }, 'UMA settlement answer is not authentic; asking again later');
      return { kind: 'UNKNOWN' };
    }
    if (body.status === 'SETTLED' && preimageMatches(detail, payment.paymentHash)) return { kind: 'SETTLED', preimage: detail };
    if (body.status === 'FAILED') return { kind: 'FAILED', reason: detail };
    return { kind: 'UNKNOWN' };
  }

  /** Pays (or asks again about) the invoice: one signed call to the receiver. */
  async function askReceiver(platform: Platform, payment: PaymentRecord): Promise<ReceiverAnswer> {
    const key = await deps.keys.get(platform);
    const nonce = randomBytes(16).toString('hex');
    const timestampSec = Math.floor(clock.realNowMs() / 1000);
    const body = {
      invoice: payment.invoice,
      vaspDomain: platform.umaDomain.toLowerCase(),
      signatureNonce: nonce,
      signatureTimestamp: timestampSec,
      signature: await signUma(settleRequestPayload(payment.invoice, nonce, timestampSec), key),
    };
    try {
      const answer = await callCounterparty(`${baseUrlOf(payment.receiverDomain)}/uma/settle`, { method: 'POST', body: JSON.stringify(body) }, deps.network);
      return await readAnswer(payment, answer);
    } catch (error) {
      if (!(error instanceof CounterpartyError)) throw error;
      deps.log?.warn({ quoteId: payment.quoteId, err: error }, 'UMA receiver unreachable for settlement; asking again later');
      return { kind: 'UNKNOWN' };
    }
  }

  async function schedulePoll(ex: Executor, platform: PlatformRef, quoteId: string, attempt: number): Promise<void> {
    const runAt = new Date(clock.now(platform).getTime() + Math.min(MAX_POLL_DELAY_MS, 1000 * 2 ** attempt));
    await enqueueJobs(ex, platform, [{ kind: POLL_JOB, payload: { quoteId, attempt }, runAt }], clock);
  }

  /** Settles the quote's invoice: the plan to apply, or null while the receiver has not decided. */
  async function pay(platform: Platform, q: QuoteRecord, payment: PaymentRecord): Promise<RailPlan | null> {
    if (payment.status === 'SETTLED') return COMPLETED;
    if (payment.status === 'FAILED') return { steps: [{ afterMs: 0, event: { kind: 'FAILED', detail: 'COUNTERPARTY_DELIVERY_FAILED', reason: 'LIGHTNING_PAYMENT_FAILED' } }] };
    const answer = await askReceiver(platform, payment);
    const now = new Date(clock.realNowMs());
    if (answer.kind === 'SETTLED') {
      await repo.movePayment(database.db, q.id, ['INVOICED', 'SETTLING'], 'SETTLED', now, answer.preimage);
      return COMPLETED;
    }
    if (answer.kind === 'FAILED') {
      await repo.movePayment(database.db, q.id, ['INVOICED', 'SETTLING'], 'FAILED', now);
      return { steps: [{ afterMs: 0, event: { kind: 'FAILED', detail: failureDetailFor(answer.reason), reason: 'LIGHTNING_PAYMENT_FAILED' } }] };
    }
    // Not decided (or not known): the first time, start asking again in the background. The move
    // and the poll job commit together: a SETTLING payment without one would never be asked again.
    await transact(database.db, async (trx) => {
      if (await repo.movePayment(trx, q.id, ['INVOICED'], 'SETTLING', now)) await schedulePoll(trx, platform, q.id, 0);
    });
    return null;
  }

  async function poll(job: ClaimedJob): Promise<void> {
    const platform = job.platformId ? await deps.platforms.get(job.platformId) : undefined;
    const quoteId = String(job.payload.quoteId);
    if (!platform) return;
    await deps.resumeDelivery(platform, quoteId);
    const payment = await repo.findPayment(database.db, platform.id, quoteId);
    if (!payment || payment.status === 'SETTLED' || payment.status === 'FAILED') return;
    const attempt = Number(job.payload.attempt ?? 0) + 1;
    if (attempt < MAX_POLLS) await schedulePoll(database.db, platform, quoteId, attempt);
    else deps.log?.error({ quoteId }, 'UMA receiver never settled or failed the invoice; the payment stays PROCESSING for an operator');
  }

  return { pay, registerJobs: () => deps.jobs.register(POLL_JOB, poll) };
}

export type Settlement = ReturnType<typeof createSettlement>;
