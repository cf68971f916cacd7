import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';
import { isUmaDomain } from './address.js';
import { CounterpartyError, type CallPurpose, type CounterpartyKeys, type KeyDirectory } from './counterparty.js';
import { verifyUmaSignature } from './keys.js';
import * as repo from './repository.js';

/** A signed UMA message may be this old (its signature timestamp, wall-clock time). */
export const MAX_MESSAGE_AGE_MS = 5 * 60_000;
/** ...and this far in the future (clock skew between VASPs). */
export const MAX_CLOCK_SKEW_MS = 60_000;
const PRUNE_EVERY = 200;

export type AuthFailureCode = 'INVALID_TIMESTAMP' | 'INVALID_SIGNATURE' | 'INVALID_NONCE' | 'COUNTERPARTY_PUBKEY_FETCH_ERROR';

/** Why a signed message from another VASP was refused. */
export class UmaAuthError extends Error {
  constructor(
    readonly code: AuthFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'UmaAuthError';
  }
}

export interface SignedMessage {
  /** Domain whose published key must have signed it. */
  domain: string;
  /** The exact string that was signed. */
  payload: string;
  signature: string;
  nonce: string;
  /** Seconds since the epoch, as signed. */
  timestampSec: number;
}

/**
 * Checks signed messages from other VASPs, in this order: the timestamp is within the window, the
 * signature verifies with the domain's published key (fetched again once if a cached key fails,
 * in case it rotated), and only then the nonce is recorded, so a forged message cannot burn the
 * nonce of a genuine one. A nonce is accepted once per signing domain.
 */
export function createAuthenticator(deps: { database: Database; clock: Clock; keys: KeyDirectory }) {
  let inserts = 0;

  function checkTimestamp(timestampSec: number): void {
    const nowMs = deps.clock.realNowMs();
    const atMs = timestampSec * 1000;
    if (!Number.isFinite(atMs) || atMs < nowMs - MAX_MESSAGE_AGE_MS) {
      throw new UmaAuthError('INVALID_TIMESTAMP', `the message was signed more than ${MAX_MESSAGE_AGE_MS / 60_000} minutes ago`);
    }
    if (atMs > nowMs + MAX_CLOCK_SKEW_MS) throw new UmaAuthError('INVALID_TIMESTAMP', 'the message is signed with a timestamp in the future');
  }

  async function keysOf(domain: string, fresh: boolean, purpose: CallPurpose): Promise<{ keys: CounterpartyKeys; cached: boolean }> {
    // Checked before anything is fetched or kept: `evil.example/<anything>` would otherwise make
    // a new entry of the key cache per request, from one server and without a valid signature.
    if (!isUmaDomain(domain)) throw new UmaAuthError('COUNTERPARTY_PUBKEY_FETCH_ERROR', 'the signing VASP domain is not a host name');
    try {
      return await deps.keys.keysOf(domain, { fresh, purpose });
    } catch (error) {
      if (error instanceof CounterpartyError) throw new UmaAuthError('COUNTERPARTY_PUBKEY_FETCH_ERROR', `public keys of ${domain}: ${error.message}`);
      throw error;
    }
  }

  async function checkSignature(message: SignedMessage, purpose: CallPurpose): Promise<CounterpartyKeys> {
    let found = await keysOf(message.domain, false, purpose);
    if (verifyUmaSignature(message.payload, message.signature, found.keys.signing)) return found.keys;
    if (found.cached) {
      found = await keysOf(message.domain, true, purpose);
      if (verifyUmaSignature(message.payload, message.signature, found.keys.signing)) return found.keys;
    }
    throw new UmaAuthError('INVALID_SIGNATURE', `the signature does not verify with the public key of ${message.domain}`);
  }

  async function recordNonce(message: SignedMessage): Promise<void> {
    const fresh = await repo.insertNonce(deps.database.db, message.domain.toLowerCase(), message.nonce, new Date(message.timestampSec * 1000));
    if (!fresh) throw new UmaAuthError('INVALID_NONCE', 'this nonce was already used');
    if (++inserts % PRUNE_EVERY === 0) {
      // Nonces older than the window can never be accepted again: their messages are too old.
      await repo.pruneNonces(deps.database.db, new Date(deps.clock.realNowMs() - 2 * MAX_MESSAGE_AGE_MS));
    }
  }

  /**
   * Verifies the message; returns the signer's keys. Throws UmaAuthError. `purpose`
   * `unsolicited` for a message that arrived at a protocol endpoint (anyone may send one), `own`
   * (the default) for the answer to a call this server made.
   */
  async function verifyMessage(message: SignedMessage, purpose: CallPurpose = 'own'): Promise<CounterpartyKeys> {
    if (!message.nonce || message.nonce.length > 100) throw new UmaAuthError('INVALID_NONCE', 'the nonce is missing or too long');
    checkTimestamp(message.timestampSec);
    const keys = await checkSignature(message, purpose);
    await recordNonce(message);
    return keys;
  }

  return { verifyMessage };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
