import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { privateTargetsAllowed } from '../../core/outbound.js';
import type { Database } from '../../db/database.js';
import type { PlatformService } from '../platform/service.js';
import { describeOutcome, sendWebhook, SIGNATURE_HEADER } from './delivery.js';
import { createResponseHooks } from './hooks.js';
import { createSigningKeys } from './keys.js';
import * as repo from './repository.js';
import type { SigningKeyView, TestWebhookResult } from './schemas.js';
import { DEFAULT_DELIVERY_SETTINGS, envelopeOf, WebhookWorker, type DeliverySettings } from './worker.js';

export type { ApprovalDecision, ApprovalHandler, ApprovalInfo, DeliveredEvent, ResponseHandler, ResponseInfo } from './hooks.js';
export type { DeliveryOutcome } from './delivery.js';
export type { DeliverySettings } from './worker.js';

export interface WebhookServiceDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  platforms: PlatformService;
  settings?: Partial<DeliverySettings>;
}

/**
 * Webhooks: per-platform signing keys, the outbox delivery worker, the test webhook, and the
 * hooks through which other modules learn how the platform answered (payment approvals).
 */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { database, clock, log, platforms } = deps;
  const keys = createSigningKeys(database);
  const hooks = createResponseHooks(log);
  const settings = { ...DEFAULT_DELIVERY_SETTINGS, ...deps.settings };
  const workerDeps = { database, clock, log, keys, hooks };
  const worker = new WebhookWorker(workerDeps, settings);

  async function signingKey(ctx: ServiceContext): Promise<SigningKeyView> {
    const key = await keys.get(ctx.platform.id);
    return {
      publicKey: key.publicKeyPem,
      algorithm: 'ECDSA_P256_SHA256',
      signatureEncoding: 'BASE64_DER',
      signatureHeader: SIGNATURE_HEADER,
      createdAt: key.createdAt.toISOString(),
    };
  }

  /** Writes a TEST event and sends it at once, outside the queue; a failed try is not retried. */
  async function sendTest(ctx: ServiceContext): Promise<TestWebhookResult> {
    // Read, not cached: a PATCH /config through another process a moment ago applies.
    const platform = await platforms.read(database.db, ctx.platform.id);
    const url = platform?.webhookEndpoint;
    if (!platform || !url) throw new ServiceError('WEBHOOK_ENDPOINT_NOT_SET', 'set webhookEndpoint with PATCH /config first');
    const leaseUntil = new Date(clock.realNowMs() + settings.leaseMs);
    const event = await repo.insertClaimedTestEvent(database, platform, clock, leaseUntil);
    const allowPrivate = privateTargetsAllowed(platform, settings.allowPrivateEndpoints);
    const outcome = await sendWebhook(keys, platform.id, url, envelopeOf(event), { timeoutMs: settings.timeoutMs, allowPrivate });
    const answer = outcome.kind === 'response' ? { url, response_status: outcome.status, response_body: outcome.text } : undefined;
    const delivered = answer !== undefined && answer.response_status >= 200 && answer.response_status < 300;
    const now = new Date(clock.realNowMs());
    await repo.recordAttempt(database.db, event, delivered ? { state: 'DELIVERED', note: null } : { state: 'FAILED', note: describeOutcome(outcome) }, now);
    if (delivered) return answer;
    throw new ServiceError('WEBHOOK_DELIVERY_ERROR', `the test webhook was not accepted: ${describeOutcome(outcome)}`, {
      details: answer ?? { url, error: describeOutcome(outcome) },
    });
  }

  return {
    signingKey,
    sendTest,
    /** Registers a handler for the outcome of every try of events of `type`. */
    onResponse: hooks.onResponse,
    /** Registers the decision handler of an approval event (INCOMING_PAYMENT.PENDING). */
    onApproval: hooks.onApproval,
    /** Delivers every event due now and waits for the tries to finish (tests, and after urgent events). */
    deliverDue: () => worker.deliverDue(),
    /** Nudges the background worker to look for due events now. */
    wake: () => worker.wake(),
    start: () => worker.start(),
    /** Stops claiming; tries in flight get `graceMs` to finish, then are interrupted (see `WebhookWorker.stop`): false if any was. */
    stop: (graceMs?: number) => worker.stop(graceMs),
    /** Tries the background worker has in flight. */
    triesInFlight: () => worker.triesInFlight,
    /** A separate worker on the same keys and hooks, with other settings or clock (tests). */
    createWorker: (overrides: Partial<DeliverySettings> = {}, workerClock: Clock = clock) =>
      new WebhookWorker({ ...workerDeps, clock: workerClock }, { ...settings, ...overrides }),
    /** The platform's signing key, as the worker uses it. */
    keyOf: (platformId: string) => keys.get(platformId),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
