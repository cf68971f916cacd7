import { createHash } from 'node:crypto';

/** Deterministic, well-formed sandbox deposit details derived from a seed (an account id). */

export function sha256(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** `count` decimal digits derived from the seed and a label. */
export function seededDigits(seed: string, label: string, count: number): string {
  const n = BigInt(`0x${sha256(`${label}:${seed}`).toString('hex')}`) % 10n ** BigInt(count);
  return n.toString().padStart(count, '0');
}

/** An IBAN with a valid ISO 7064 mod-97 check. */
export function iban(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  const check = 98n - (BigInt(numeric) % 97n);
  return `${country}${check.toString().padStart(2, '0')}${bban}`;
}

/** A Mexican CLABE: 17 digits plus the weighted (3, 7, 1) check digit. */
export function clabe(first17: string): string {
  const weights = [3, 7, 1];
  const sum = [...first17].reduce((acc, digit, i) => acc + ((Number(digit) * weights[i % 3]) % 10), 0);
  return `${first17}${(10 - (sum % 10)) % 10}`;
}

function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

const emv = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;

/** A static PIX "copia e cola" payload (EMV BR Code) for `pixKey`, carrying `txid` for reconciliation. */
export function pixQrCode(pixKey: string, txid: string): string {
  const body =
    emv('00', '01') +
    emv('26', emv('00', 'br.gov.bcb.pix') + emv('01', pixKey)) +
    emv('52', '0000') +
    emv('53', '986') +
    emv('58', 'BR') +
    emv('59', 'CORRIDOR SANDBOX') +
    emv('60', 'SAO PAULO') +
    emv('62', emv('05', txid)) +
    '6304';
  return `${body}${crc16(body)}`;
}

/** A random-key (EVP) PIX key in UUID form. */
export function pixRandomKey(seed: string): string {
  const hex = sha256(`pix:${seed}`).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** An EVM address (Base, Ethereum, Polygon), lower case. */
export function evmAddress(seed: string): string {
  return `0x${sha256(`evm:${seed}`).subarray(0, 20).toString('hex')}`;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}

/** A Tron address: base58check of 0x41 followed by 20 bytes. */
export function tronAddress(seed: string): string {
  const payload = Buffer.concat([Buffer.from([0x41]), sha256(`tron:${seed}`).subarray(0, 20)]);
  return base58(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
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

function toWords(bytes: Buffer): number[] {
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

function bech32m(hrp: string, data: Buffer): string {
  const words = toWords(data);
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const mod = (polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ BECH32M_CONST) >>> 0;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => BECH32[w]).join('')}`;
}

/** A Spark regtest address (bech32m, `sprt1…`) over a compressed-key-shaped payload. */
export function sparkAddress(seed: string): string {
  return bech32m('sprt', Buffer.concat([Buffer.from([0x02]), sha256(`spark:${seed}`)]));
}
