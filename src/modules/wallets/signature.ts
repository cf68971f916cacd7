import { normalizePublicKeyHex } from './crypto/keys.js';

/** The sandbox's accepted value of `Service-Wallet-Signature` (SPEC §5). */
export const SANDBOX_SIGNATURE = 'sandbox-valid-signature';
export const STAMP_SCHEME = 'SIGNATURE_SCHEME_TK_API_P256';

/**
 * A `Service-Wallet-Signature` header, decoded. Two encodings are accepted:
 * (a) base64 of a DER ECDSA P-256/SHA-256 signature over the exact payloadToSign bytes;
 * (b) an API-key stamp: base64url(JSON {publicKey: compressed hex, scheme, signature: DER hex}).
 */
export type ParsedSignature = { kind: 'magic' } | { kind: 'der'; der: Buffer } | { kind: 'stamp'; publicKey: string; der: Buffer };

const MAX_HEADER = 4096;

function isDer(bytes: Buffer): boolean {
  // SEQUENCE of two INTEGERs, 8..72 bytes for P-256.
  return bytes.length >= 8 && bytes.length <= 72 && bytes[0] === 0x30 && bytes[1] === bytes.length - 2;
}

function parseStamp(decoded: string): ParsedSignature | undefined {
  let stamp: unknown;
  try {
    stamp = JSON.parse(decoded);
  } catch {
    return undefined;
  }
  const { publicKey, scheme, signature } = (stamp ?? {}) as Record<string, unknown>;
  if (scheme !== STAMP_SCHEME || typeof publicKey !== 'string' || typeof signature !== 'string') return undefined;
  // Whole bytes only: Buffer.from would drop a trailing odd digit and accept the rest.
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(signature)) return undefined;
  const key = normalizePublicKeyHex(publicKey);
  const der = Buffer.from(signature, 'hex');
  return key && isDer(der) ? { kind: 'stamp', publicKey: key, der } : undefined;
}

export function parseSignatureHeader(value: string): ParsedSignature | undefined {
  const header = value.trim();
  if (header === SANDBOX_SIGNATURE) return { kind: 'magic' };
  if (header.length === 0 || header.length > MAX_HEADER || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(header)) return undefined;
  const bytes = Buffer.from(header.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes[0] === 0x7b) return parseStamp(bytes.toString('utf8')); // '{'
  return isDer(bytes) ? { kind: 'der', der: bytes } : undefined;
}
