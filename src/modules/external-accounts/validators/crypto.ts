import { base58CheckDecode, base58Decode, bech32Decode, isBech32Charset } from '../../../core/encoding.js';
import { keccak256 } from './keccak.js';
import { problem, type Problem } from './problem.js';

/** Bech32m prefixes of Spark networks: current short forms and the older long ones. */
const SPARK_PREFIXES = ['sp', 'spt', 'sprt', 'sps', 'spl', 'spark', 'sparkt', 'sparkrt', 'sparks', 'sparkl'];

function wordsToBytes(words: number[]): number[] {
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const word of words) {
    acc = ((acc << 5) | word) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((acc >> bits) & 0xff);
    }
  }
  return bytes;
}

/** Spark address: bech32m wrapping a protobuf field 1 holding a 33-byte compressed secp256k1 key. */
export function checkSparkAddress(value: string): Problem | undefined {
  const decoded = bech32Decode(value);
  if (!decoded) return problem('checksum', 'Spark address is not valid bech32m (check for typos)');
  if (!SPARK_PREFIXES.includes(decoded.hrp)) return problem('format', 'Spark address must start with sp1, spt1, sprt1 or spark1');
  if (decoded.variant !== 'bech32m') return problem('checksum', 'Spark address must use the bech32m checksum');
  const bytes = wordsToBytes(decoded.words);
  const keyPrefix = bytes[2];
  if (bytes[0] !== 0x0a || bytes[1] !== 0x21 || bytes.length < 35 || (keyPrefix !== 2 && keyPrefix !== 3)) {
    return problem('format', 'Spark address does not carry an identity public key');
  }
  return undefined;
}

/** BOLT 11 invoice: bech32 with an `ln` + network prefix and optional amount. */
export function checkLightningInvoice(value: string): Problem | undefined {
  const decoded = bech32Decode(value);
  if (!decoded || decoded.variant !== 'bech32') return problem('checksum', 'Lightning invoice is not valid bech32 (check for typos)');
  if (!/^ln(bc|bcrt|tb|tbs|sb)([0-9]+[munp]?)?$/.test(decoded.hrp)) {
    return problem('format', 'Lightning invoice must start with lnbc, lntb, lntbs or lnbcrt');
  }
  return undefined;
}

/** BOLT 12 offer: `lno1` then bech32 characters (offers carry no checksum). */
export function checkBolt12Offer(value: string): Problem | undefined {
  const lower = value.toLowerCase();
  if (value !== lower && value !== value.toUpperCase()) return problem('format', 'BOLT 12 offer must not mix upper and lower case');
  if (!lower.startsWith('lno1') || lower.length < 20 || !isBech32Charset(lower.slice(4))) {
    return problem('format', 'BOLT 12 offer must start with lno1 followed by bech32 characters');
  }
  return undefined;
}

/** Lightning address (LUD-16): `user@domain`, user limited to a-z 0-9 - _ . + */
export function checkLightningAddress(value: string): Problem | undefined {
  if (value.length > 320) return problem('length', 'Lightning address is at most 320 characters');
  const ok = /^[a-z0-9._+-]+@([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(value);
  return ok ? undefined : problem('format', 'Lightning address must look like name@domain.com');
}

/** Solana address: base58 encoding of a 32-byte public key. */
export function checkSolanaAddress(value: string): Problem | undefined {
  if (value.length < 32 || value.length > 44) return problem('length', 'Solana address is 32-44 base58 characters');
  const bytes = base58Decode(value);
  if (!bytes) return problem('format', 'Solana address must use base58 characters only');
  return bytes.length === 32 ? undefined : problem('format', 'Solana address must encode a 32-byte public key');
}

/** Tron address: base58check of 0x41 + 20-byte account id, shown as `T` + 33 characters. */
export function checkTronAddress(value: string): Problem | undefined {
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value)) return problem('format', 'Tron address must be T followed by 33 base58 characters');
  const payload = base58CheckDecode(value);
  if (!payload) return problem('checksum', 'Tron address fails its base58check checksum');
  return payload.length === 21 && payload[0] === 0x41 ? undefined : problem('format', 'Tron address has the wrong version byte');
}

/** EIP-55 mixed-case checksum of a 40-hex-digit address (without 0x). */
export function eip55Checksum(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = keccak256(Buffer.from(lower, 'ascii'));
  return [...lower]
    .map((char, i) => {
      const nibble = (hash[i >> 1] >> (i % 2 === 0 ? 4 : 0)) & 0xf;
      return nibble >= 8 ? char.toUpperCase() : char;
    })
    .join('');
}

/**
 * EVM address (Ethereum, Base, Polygon): `0x` + 40 hex digits. All-lowercase or all-uppercase
 * carry no checksum; mixed case must match EIP-55, which catches most typos.
 */
export function checkEvmAddress(value: string): Problem | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) return problem('format', 'address must be 0x followed by 40 hexadecimal digits');
  const hex = value.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return undefined;
  return eip55Checksum(hex) === hex ? undefined : problem('checksum', 'address fails its EIP-55 mixed-case checksum');
}
