import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { generateEcKeyPair } from '../../../core/ec-keys.js';
import { p256 } from '@noble/curves/nist.js';

/**
 * P-256 key handling for sessions and signed retries. Signatures are verified with node:crypto
 * (OpenSSL); @noble/curves only converts points between their compressed and uncompressed forms.
 */

/** SPKI DER header of a P-256 public key given as a 33-byte compressed point. */
const SPKI_COMPRESSED_PREFIX = Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex');
const KEY_CACHE_LIMIT = 10_000;
const keyCache = new Map<string, KeyObject>();

/** The 65-byte point of an uncompressed SEC1 hex key (`04…`, 130 characters), or undefined when it is not on P-256. */
export function parseUncompressedPublicKey(hex: string): Uint8Array | undefined {
  if (!/^04[0-9a-fA-F]{128}$/.test(hex)) return undefined;
  try {
    return p256.Point.fromHex(hex.toLowerCase()).toBytes(false);
  } catch {
    return undefined;
  }
}

/** Compressed (33-byte) hex of a P-256 public key given compressed or uncompressed; undefined when invalid. */
export function normalizePublicKeyHex(hex: string): string | undefined {
  if (!/^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/.test(hex)) return undefined;
  try {
    return Buffer.from(p256.Point.fromHex(hex.toLowerCase()).toBytes(true)).toString('hex');
  } catch {
    return undefined;
  }
}

export function compressPoint(uncompressed: Uint8Array): Uint8Array {
  return p256.Point.fromBytes(uncompressed).toBytes(true);
}

/** A node:crypto key for a compressed public key, imported once and cached (importing costs more than verifying). */
export function publicKeyObject(compressedHex: string): KeyObject {
  let key = keyCache.get(compressedHex);
  if (key) return key;
  key = createPublicKey({ key: Buffer.concat([SPKI_COMPRESSED_PREFIX, Buffer.from(compressedHex, 'hex')]), format: 'der', type: 'spki' });
  if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value as string);
  keyCache.set(compressedHex, key);
  return key;
}

/** ECDSA P-256/SHA-256 check of a DER signature over `message`; malformed input is simply false. */
export function verifyDerSignature(compressedHex: string, message: Buffer, der: Buffer): boolean {
  try {
    return verify('sha256', message, { key: publicKeyObject(compressedHex), dsaEncoding: 'der' }, der);
  } catch {
    return false;
  }
}

export interface SessionKeyPair {
  /** 32-byte private scalar: sealed to the client, never stored. */
  privateKey: Uint8Array;
  /** Compressed public key, hex: what Corridor keeps. */
  publicKeyHex: string;
}

export function newSessionKeyPair(): SessionKeyPair {
  const { d, point } = generateEcKeyPair('P-256');
  return { privateKey: new Uint8Array(d), publicKeyHex: Buffer.from(compressPoint(point)).toString('hex') };
}
