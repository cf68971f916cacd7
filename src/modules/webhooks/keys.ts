import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { generateEcKeyPair } from '../../core/ec-keys.js';
import type { Database } from '../../db/database.js';
import * as repo from './repository.js';

export interface SigningKey {
  privateKey: KeyObject;
  /** SPKI PEM: what the platform verifies signatures with. */
  publicKeyPem: string;
  createdAt: Date;
}

function generatePair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateEcKeyPair('P-256');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Each platform's webhook signing key (ECDSA P-256), created the first time it is needed and kept
 * in memory as a KeyObject afterwards: importing a PEM costs more than signing with it.
 */
export function createSigningKeys(database: Database) {
  const cache = new Map<string, Promise<SigningKey>>();

  async function load(platformId: string): Promise<SigningKey> {
    let stored = await repo.findSigningKey(database.db, platformId);
    if (!stored) {
      await repo.insertSigningKey(database.db, platformId, generatePair());
      stored = await repo.findSigningKey(database.db, platformId);
    }
    if (!stored) throw new Error(`no webhook signing key for ${platformId}`);
    return { privateKey: createPrivateKey(stored.privateKeyPem), publicKeyPem: stored.publicKeyPem, createdAt: stored.createdAt };
  }

  function get(platformId: string): Promise<SigningKey> {
    let key = cache.get(platformId);
    if (!key) {
      key = load(platformId);
      cache.set(platformId, key);
      key.catch(() => cache.delete(platformId));
    }
    return key;
  }

  /** base64 of the DER-encoded ECDSA P-256 / SHA-256 signature over `bytes`. */
  async function signBytes(platformId: string, bytes: Uint8Array): Promise<string> {
    const { privateKey } = await get(platformId);
    return sign('sha256', bytes, privateKey).toString('base64');
  }

  return { get, sign: signBytes };
}

export type SigningKeys = ReturnType<typeof createSigningKeys>;
