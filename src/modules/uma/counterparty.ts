import { PubKeyResponse } from '@uma-sdk/core';
import type { Clock } from '../../core/clock.js';
import { setBounded, singleFlight } from '../../core/collections.js';
import { closingFetchFor, guardRefusalOf, readCapped, ResponseTooLargeError } from '../../core/outbound.js';

/** How counterparty calls are made. */
export interface NetworkPolicy {
  /** Whether they may go to loopback and private addresses (UMA_ALLOW_PRIVATE_COUNTERPARTIES). */
  allowPrivate: boolean;
  /** How long one call may take, answer included (UMA_COUNTERPARTY_TIMEOUT_MS); default COUNTERPARTY_TIMEOUT_MS. */
  timeoutMs?: number;
  /** The process's calls in flight, bounded (UMA_COUNTERPARTY_CONCURRENCY); unset: unbounded (tests of one call). */
  slots?: CallSlots;
}

/**
 * Why a call is made. `unsolicited`: to check a message that anyone may send (the key fetch
 * behind an lnurlp request, a pay request or a settlement arriving at the protocol endpoints).
 * `own`: for something this server's platforms asked for (a lookup, a payment, its settlement),
 * or to check the answer to such a call.
 */
export type CallPurpose = 'unsolicited' | 'own';

/**
 * Counterparty calls in flight in this process, at most `max`, of which unsolicited ones at most
 * half (rounded up): strangers naming many domains get no more than that, and the platforms'
 * own lookups and payments keep the rest. A call that finds no slot is refused at once
 * (`CounterpartyBusyError`) rather than queued: a queue would hold the callers (and the requests
 * behind them) as long as the counterparties in flight stall.
 */
export function createCallSlots(max: number, { onRefused }: { onRefused?: (purpose: CallPurpose) => void } = {}) {
  const unsolicitedMax = Math.ceil(max / 2);
  let inFlight = 0;
  let unsolicited = 0;
  let refused = 0;
  return {
    /** Takes a slot for one call: its release (idempotent), or undefined when there is none. */
    take(purpose: CallPurpose): (() => void) | undefined {
      if (inFlight >= max || (purpose === 'unsolicited' && unsolicited >= unsolicitedMax)) {
        refused++;
        onRefused?.(purpose);
        return undefined;
      }
      inFlight++;
      if (purpose === 'unsolicited') unsolicited++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
        if (purpose === 'unsolicited') unsolicited--;
      };
    },
    /** Calls in flight now, and calls refused for want of a slot since the process started. */
    stats: () => ({ inFlight, unsolicited, refused }),
  };
}

export type CallSlots = ReturnType<typeof createCallSlots>;

/** How long one call to another VASP may take by default. */
export const COUNTERPARTY_TIMEOUT_MS = 10_000;
/** Only this much of a counterparty's answer is read. */
const MAX_RESPONSE_BYTES = 256 * 1024;
/** Counterparty keys are reused this long at most (less when they say so). */
const MAX_KEY_CACHE_MS = 10 * 60_000;

/** Host names for which plain http is used (local development); everything else is https. */
export function isLoopbackDomain(domain: string): boolean {
  const host = domain.startsWith('[') ? domain.slice(0, domain.indexOf(']') + 1) : domain.split(':')[0];
  return ['localhost', '127.0.0.1', '[::1]'].includes(host.toLowerCase()) || host.toLowerCase().endsWith('.localhost');
}

export function baseUrlOf(domain: string): string {
  return `${isLoopbackDomain(domain) ? 'http' : 'https'}://${domain}`;
}

/** The counterparty could not be reached or answered nothing usable. */
export class CounterpartyError extends Error {
  constructor(
    message: string,
    /** HTTP status of the answer; undefined when there was none (network error, timeout). */
    readonly status?: number,
    /** The answer, when it was JSON. */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'CounterpartyError';
  }
}

export interface HttpAnswer {
  status: number;
  text: string;
  json: unknown;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A call not made: the process has UMA_COUNTERPARTY_CONCURRENCY calls in flight (or half of them
 * unsolicited). It fails like an unreachable counterparty, but says nothing about the domain, so
 * it is not remembered as that domain's failure.
 */
export class CounterpartyBusyError extends CounterpartyError {
  constructor() {
    super('too many calls to other UMA providers in flight (UMA_COUNTERPARTY_CONCURRENCY): try again shortly');
    this.name = 'CounterpartyBusyError';
  }
}

/** A failed call as a CounterpartyError; with `response` when the failure came while reading the answer. */
function failureOf(error: unknown, url: string, timedOut: boolean, response: Response | undefined): CounterpartyError {
  if (error instanceof CounterpartyError) return error;
  if (error instanceof ResponseTooLargeError) return new CounterpartyError(error.message, response?.status);
  const answered = response !== undefined;
  const refusal = guardRefusalOf(error);
  if (refusal) return new CounterpartyError(`${refusal}, which this server does not call (set UMA_ALLOW_PRIVATE_COUNTERPARTIES=true for local development)`);
  const reason = timedOut ? 'timed out' : answered ? 'broke off its answer' : 'could not be reached';
  return new CounterpartyError(`${URL.canParse(url) ? new URL(url).host : url} ${reason}`);
}

/**
 * One call to another VASP: bounded in time (answer included: a counterparty may send headers and
 * then stall) and size, redirects not followed, and unless the policy allows it (development,
 * tests) never to a loopback or private address: an lnurlp or pay request names the sender's
 * domain, and Corridor fetches that domain's keys. Every failure is a CounterpartyError; with no
 * slot free in `policy.slots`, a CounterpartyBusyError before any connection is made. The
 * connection closes with the answer, so the slots bound the sockets too.
 */
export async function callCounterparty(
  url: string,
  init: { method: 'GET' | 'POST'; body?: string },
  policy: NetworkPolicy,
  purpose: CallPurpose = 'own',
): Promise<HttpAnswer> {
  const release = policy.slots ? policy.slots.take(purpose) : () => {};
  if (!release) throw new CounterpartyBusyError();
  const signal = AbortSignal.timeout(policy.timeoutMs ?? COUNTERPARTY_TIMEOUT_MS);
  let response: Response | undefined;
  try {
    // A connection kept alive after the call would hold a socket its slot no longer counts.
    response = await closingFetchFor(policy.allowPrivate)(url, {
      method: init.method,
      body: init.body,
      headers: { accept: 'application/json', ...(init.body !== undefined && { 'content-type': 'application/json' }) },
      redirect: 'manual',
      signal,
    });
    const text = await readCapped(response, MAX_RESPONSE_BYTES);
    return { status: response.status, text, json: parseJson(text) };
  } catch (error) {
    throw failureOf(error, url, signal.aborted, response);
  } finally {
    release();
  }
}

export interface CounterpartyKeys {
  signing: Uint8Array;
  encryption: Uint8Array;
}

/** Domains whose keys are kept at once; past it the least recently used go first. */
const MAX_CACHED_DOMAINS = 1_000;
/** A domain whose keys could not be fetched is not asked again for this long (docs/decisions.md). */
export const FAILED_DOMAIN_MEMORY_MS = 10_000;

/**
 * Other VASPs' public keys, fetched from `/.well-known/lnurlpubkey` and cached for the time they
 * allow (at most ten minutes, so a rotated key is picked up soon). Anyone may name a domain (the
 * sender of an lnurlp request), so a domain is fetched once at a time, whoever asks, and a failure
 * is answered from memory for `failureMemoryMs`: a flood naming a stalling domain costs one call.
 */
export function createKeyDirectory(
  clock: Clock,
  policy: NetworkPolicy,
  { maxDomains = MAX_CACHED_DOMAINS, failureMemoryMs = FAILED_DOMAIN_MEMORY_MS } = {},
) {
  const cache = new Map<string, { keys: CounterpartyKeys; expiresAtMs: number }>();
  const failures = new Map<string, { error: CounterpartyError; untilMs: number }>();
  const fetching = singleFlight<string, CounterpartyKeys>();

  function remember(domain: string, keys: CounterpartyKeys, expiresAtMs: number): void {
    if (expiresAtMs > clock.realNowMs()) setBounded(cache, domain, { keys, expiresAtMs }, maxDomains);
    else cache.delete(domain);
  }

  async function fetchKeys(domain: string, purpose: CallPurpose): Promise<CounterpartyKeys> {
    const answer = await callCounterparty(`${baseUrlOf(domain)}/.well-known/lnurlpubkey`, { method: 'GET' }, policy, purpose);
    if (answer.status !== 200) throw new CounterpartyError(`${domain} answered ${answer.status} for its public keys`, answer.status, answer.json);
    let parsed: PubKeyResponse;
    try {
      parsed = PubKeyResponse.fromJson(answer.text);
      const keys = { signing: parsed.getSigningPubKey(), encryption: parsed.getEncryptionPubKey() };
      const nowMs = clock.realNowMs();
      const theirs = parsed.expirationTimestamp ? parsed.expirationTimestamp * 1000 : nowMs;
      remember(domain, keys, Math.min(nowMs + MAX_KEY_CACHE_MS, theirs));
      return keys;
    } catch (error) {
      if (error instanceof CounterpartyError) throw error;
      throw new CounterpartyError(`${domain} published unusable public keys`, answer.status);
    }
  }

  function recentFailure(domain: string): CounterpartyError | undefined {
    const failure = failures.get(domain);
    if (!failure) return undefined;
    if (failure.untilMs > clock.realNowMs()) return failure.error;
    failures.delete(domain);
    return undefined;
  }

  async function fetchRemembering(domain: string, purpose: CallPurpose): Promise<CounterpartyKeys> {
    try {
      const keys = await fetchKeys(domain, purpose);
      failures.delete(domain);
      return keys;
    } catch (error) {
      // A call refused for want of a slot says nothing about the domain: asked again, it may work at once.
      if (error instanceof CounterpartyError && !(error instanceof CounterpartyBusyError)) {
        setBounded(failures, domain, { error, untilMs: clock.realNowMs() + failureMemoryMs }, maxDomains);
      }
      throw error;
    }
  }

  return {
    /**
     * The domain's keys; `fresh` skips the cache (after a signature did not verify with a cached
     * key), though not a fetch in flight nor a recent failure. `purpose`: why the keys are wanted
     * (`unsolicited` to check a message anyone may send), which decides the slot a fetch takes.
     */
    async keysOf(given: string, options: { fresh?: boolean; purpose?: CallPurpose } = {}): Promise<{ keys: CounterpartyKeys; cached: boolean }> {
      const domain = given.toLowerCase(); // one entry, one fetch and one failure per domain, however it is spelled
      const hit = cache.get(domain);
      if (!options.fresh && hit && hit.expiresAtMs > clock.realNowMs()) {
        setBounded(cache, domain, hit, maxDomains); // used again: the last to go
        return { keys: hit.keys, cached: true };
      }
      const failure = recentFailure(domain);
      if (failure) throw failure;
      return { keys: await fetching(domain, () => fetchRemembering(domain, options.purpose ?? 'own')), cached: false };
    },
  };
}

export type KeyDirectory = ReturnType<typeof createKeyDirectory>;
