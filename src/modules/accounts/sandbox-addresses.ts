import { createHash } from 'node:crypto';
import { base58CheckEncode, base58Encode, bech32Encode, toWords } from '../../core/encoding.js';
import { ibanCheckDigits } from '../external-accounts/validators/europe.js';

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
  return `${country}${ibanCheckDigits(country, bban)}${bban}`;
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

/** A Solana address: base58 of a 32-byte public key. */
export function solanaAddress(seed: string): string {
  return base58Encode(sha256(`solana:${seed}`));
}

/** A Tron address: base58check of 0x41 followed by 20 bytes. */
export function tronAddress(seed: string): string {
  const payload = Buffer.concat([Buffer.from([0x41]), sha256(`tron:${seed}`).subarray(0, 20)]);
  return base58CheckEncode(payload);
}

/**
 * A Spark regtest address (bech32m, `sprt1…`): a protobuf whose field 1 (tag 0x0a, 33 bytes)
 * holds a compressed-key-shaped identity key, as Spark wallets encode it.
 */
export function sparkAddress(seed: string): string {
  const identityKey = Buffer.concat([Buffer.from([0x02]), sha256(`spark:${seed}`)]);
  return bech32Encode('sprt', toWords(Buffer.concat([Buffer.from([0x0a, identityKey.length]), identityKey])), 'bech32m');
}
