import { createPrivateKey, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { generateEcKeyPair } from '../../core/ec-keys.js';
import { signPayload } from '@uma-sdk/core';
import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';
import { refuseDevelopmentKeyFor } from '../wallets/crypto/secrets.js';
import * as repo from './repository.js';
import { selfSignedCertificate } from './x509.js';

/** Seals secrets at rest (the AES-256-GCM key derived from WALLET_ENCRYPTION_KEY). */
export interface Sealer {
  isDevelopmentKey: boolean;
  encrypt(plaintext: string, context: string): string;
  decrypt(stored: string, context: string): string;
}

/** The platform a key is for. */
type KeyOwner = { id: string; umaDomain: string; mode: 'SANDBOX' | 'PRODUCTION' };

export interface PlatformKey {
  /** Raw 32-byte secp256k1 scalar, as the UMA SDK takes it. */
  privateKeyBytes: Uint8Array;
  /** Uncompressed SEC1 point (65 bytes), hex. */
  publicKeyHex: string;
  /** Self-signed X.509 certificate of the public key, DER hex. */
  certificateHex: string;
}

/** How long counterparties may cache our public keys (seconds). */
export const PUBKEY_CACHE_SECONDS = 3600;
const CERTIFICATE_YEARS = 10;

const sealContext = (platformId: string) => `uma-signing-key:${platformId}`;

/** A KeyObject for an uncompressed secp256k1 point given as bytes. */
export function publicKeyFromPoint(point: Uint8Array): KeyObject {
  const bytes = Buffer.from(point);
  if (bytes.length !== 65 || bytes[0] !== 4) throw new Error('expected an uncompressed secp256k1 point (65 bytes)');
  return createPublicKey({
    key: { kty: 'EC', crv: 'secp256k1', x: bytes.subarray(1, 33).toString('base64url'), y: bytes.subarray(33).toString('base64url') },
    format: 'jwk',
  });
}

/**
 * Checks a UMA signature: DER-encoded ECDSA over SHA-256 of the payload's UTF-8 bytes, hex
 * encoded, made with the secp256k1 key whose point is given (UMAD-02).
 */
export function verifyUmaSignature(payload: string, signatureHex: string, publicKeyPoint: Uint8Array): boolean {
  if (!/^[0-9a-f]+$/i.test(signatureHex) || signatureHex.length > 300) return false;
  try {
    return verify('sha256', Buffer.from(payload, 'utf8'), { key: publicKeyFromPoint(publicKeyPoint), dsaEncoding: 'der' }, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}

/** Signs a UMA payload with a platform key (hex DER, as UMA messages carry signatures). */
export function signUma(payload: string, key: PlatformKey): Promise<string> {
  return signPayload(payload, key.privateKeyBytes);
}

function generate(commonName: string, now: Date): { stored: Omit<repo.StoredKey, 'sealedPrivateKey'>; pem: string } {
  const { privateKey, publicKey, point } = generateEcKeyPair('secp256k1');
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CERTIFICATE_YEARS);
  const certificate = selfSignedCertificate({
    commonName,
    spkiDer: publicKey.export({ type: 'spki', format: 'der' }),
    privateKey,
    notBefore: now,
    notAfter,
  });
  return {
    stored: { publicKey: point.toString('hex'), certificate: certificate.toString('hex') },
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * Each platform's UMA key pair (secp256k1), created the first time it is needed, stored sealed,
 * and kept in memory afterwards. One key both signs and receives encrypted travel-rule data.
 */
export function createUmaKeys(deps: { database: Database; clock: Clock; sealer: Sealer }) {
  const cache = new Map<string, Promise<PlatformKey>>();

  function open(platformId: string, stored: repo.StoredKey): PlatformKey {
    const privateKey = createPrivateKey(deps.sealer.decrypt(stored.sealedPrivateKey, sealContext(platformId)));
    const d = privateKey.export({ format: 'jwk' }).d!;
    return { privateKeyBytes: new Uint8Array(Buffer.from(d, 'base64url')), publicKeyHex: stored.publicKey, certificateHex: stored.certificate };
  }

  async function load(platform: KeyOwner): Promise<PlatformKey> {
    let stored = await repo.findKey(deps.database.db, platform.id);
    if (!stored) {
      refuseDevelopmentKeyFor(deps.sealer, platform);
      const now = new Date(deps.clock.realNowMs());
      const fresh = generate(platform.umaDomain, now);
      const sealedPrivateKey = deps.sealer.encrypt(fresh.pem, sealContext(platform.id));
      await repo.insertKey(deps.database.db, platform.id, { ...fresh.stored, sealedPrivateKey }, now);
      stored = await repo.findKey(deps.database.db, platform.id);
    }
    if (!stored) throw new Error(`no UMA key for ${platform.id}`);
    return open(platform.id, stored);
  }

  /** The platform's key, created on first use (concurrent first uses agree on one key). */
  function get(platform: KeyOwner): Promise<PlatformKey> {
    let key = cache.get(platform.id);
    if (!key) {
      key = load(platform);
      cache.set(platform.id, key);
      key.catch(() => cache.delete(platform.id));
    }
    return key;
  }

  /** The body of GET /.well-known/lnurlpubkey (UMAD-02), with the raw keys for older clients. */
  async function pubKeyResponse(platform: KeyOwner) {
    const key = await get(platform);
    return {
      signingCertChain: [key.certificateHex],
      encryptionCertChain: [key.certificateHex],
      signingPubKey: key.publicKeyHex,
      encryptionPubKey: key.publicKeyHex,
      expirationTimestamp: Math.floor(deps.clock.realNowMs() / 1000) + PUBKEY_CACHE_SECONDS,
    };
  }

  return { get, pubKeyResponse };
}

export type UmaKeys = ReturnType<typeof createUmaKeys>;
