import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What an API token's client id may be: ours are hex; an operator's pinned sandbox id is checked against it too. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._~-]{8,128}$/;

/** A random secret of `bytes` bytes of entropy, hex encoded. */
export function randomSecret(bytes = 24): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * Salted SHA-256. Secrets Corridor generates carry ≥192 bits of entropy, so a slow KDF adds
 * nothing against guessing; the salt keeps equal secrets from having equal hashes.
 */
export function hashSecret(secret: string, salt: string): string {
  return hash('sha256', `${salt}\0${secret}`, 'hex');
}

/** Constant-time comparison of two hex digests (or any equal-length strings). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex');
}
