import { createECDH, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

const OPENSSL_CURVES = { 'P-256': 'prime256v1', secp256k1: 'secp256k1' } as const;

export interface EcKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The private scalar, 32 bytes. */
  d: Buffer;
  /** The public point, uncompressed (65 bytes). */
  point: Buffer;
}

/**
 * A new EC key pair. Not `generateKeyPairSync`: on Node 20, exporting a key it made (as JWK, PEM
 * or DER) can deadlock the process for good when a garbage collection during the export frees
 * the generation job, whose destructor takes the lock the export holds (a test worker of CI hung
 * in that futex wait). Keys imported from their numbers have no generation job.
 */
export function generateEcKeyPair(crv: keyof typeof OPENSSL_CURVES): EcKeyPair {
  const ecdh = createECDH(OPENSSL_CURVES[crv]);
  ecdh.generateKeys();
  const scalar = ecdh.getPrivateKey();
  const d = Buffer.alloc(32);
  scalar.copy(d, 32 - scalar.length);
  const point = ecdh.getPublicKey();
  const jwk = { kty: 'EC', crv, x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
  return {
    privateKey: createPrivateKey({ key: { ...jwk, d: d.toString('base64url') }, format: 'jwk' }),
    publicKey: createPublicKey({ key: jwk, format: 'jwk' }),
    d,
    point,
  };
}
