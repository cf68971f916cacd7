import { createHash } from 'node:crypto';

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Decodes Bitcoin-alphabet base58; undefined when a character is outside the alphabet. */
export function base58Decode(text: string): Uint8Array | undefined {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58_ALPHABET.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn));
    value >>= 8n;
  }
  // Each leading '1' stands for one leading zero byte.
  for (const char of text) {
    if (char !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

function sha256(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** Encodes bytes in Bitcoin-alphabet base58 (one leading '1' per leading zero byte). */
export function base58Encode(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (value > 0n) {
    out = BASE58_ALPHABET[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}

/** Encodes base58check: payload ‖ first 4 bytes of its double SHA-256. */
export function base58CheckEncode(payload: Uint8Array): string {
  return base58Encode(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}

/** Decodes base58check (payload ‖ first 4 bytes of double SHA-256); undefined on a bad checksum. */
export function base58CheckDecode(text: string): Uint8Array | undefined {
  const raw = base58Decode(text);
  if (!raw || raw.length < 5) return undefined;
  const payload = raw.subarray(0, raw.length - 4);
  const checksum = sha256(sha256(payload)).subarray(0, 4);
  return Buffer.compare(checksum, raw.subarray(raw.length - 4)) === 0 ? payload : undefined;
}

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;

function polymod(values: number[]): number {
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const value of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= generators[i];
  }
  return chk >>> 0;
}

function expandHrp(hrp: string): number[] {
  const codes = [...hrp].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >>> 5), 0, ...codes.map((c) => c & 31)];
}

export interface Bech32 {
  hrp: string;
  /** 5-bit words, checksum removed. */
  words: number[];
  variant: 'bech32' | 'bech32m';
}

/**
 * Decodes a bech32 or bech32m string without the 90-character limit (Lightning invoices and
 * Spark addresses are longer). Undefined on mixed case, bad characters or a bad checksum.
 */
export function bech32Decode(text: string): Bech32 | undefined {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) return undefined;
  const lower = text.toLowerCase();
  const separator = lower.lastIndexOf('1');
  if (separator < 1 || lower.length - separator - 1 < 6) return undefined;
  const hrp = lower.slice(0, separator);
  if ([...hrp].some((c) => c.charCodeAt(0) < 33 || c.charCodeAt(0) > 126)) return undefined;
  const data: number[] = [];
  for (const char of lower.slice(separator + 1)) {
    const word = BECH32_CHARSET.indexOf(char);
    if (word < 0) return undefined;
    data.push(word);
  }
  const check = polymod([...expandHrp(hrp), ...data]);
  const variant = check === BECH32_CONST ? 'bech32' : check === BECH32M_CONST ? 'bech32m' : undefined;
  if (!variant) return undefined;
  return { hrp, words: data.slice(0, -6), variant };
}

/** Regroups bytes into the 5-bit words bech32 encodes (the last word zero-padded). */
export function toWords(bytes: Uint8Array): number[] {
  const words: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = ((acc << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((acc >>> bits) & 31);
    }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31);
  return words;
}

/** Encodes 5-bit words with a checksum. */
export function bech32Encode(hrp: string, words: number[], variant: Bech32['variant']): string {
  const constant = variant === 'bech32' ? BECH32_CONST : BECH32M_CONST;
  const mod = polymod([...expandHrp(hrp), ...words, 0, 0, 0, 0, 0, 0]) ^ constant;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => BECH32_CHARSET[w]).join('')}`;
}

/** True when every character belongs to the bech32 data alphabet (BOLT 12 strings carry no checksum). */
export function isBech32Charset(text: string): boolean {
  return [...text.toLowerCase()].every((c) => BECH32_CHARSET.includes(c));
}
