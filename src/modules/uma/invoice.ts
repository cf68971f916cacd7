import { createHash, randomBytes } from 'node:crypto';

/**
 * Invoices between Corridor instances. Without a Lightning node there is no real BOLT11 invoice,
 * so the `pr` of a pay-request response is BOLT11-shaped (regtest prefix, amount in pico-BTC, a
 * timestamp and the `p` tagged field carrying the payment hash) but unsigned and not payable on
 * Lightning. What matters is the payment hash: the receiver keeps its preimage and reveals it once
 * the payment settled, which is what a Lightning payment proves (docs/uma.md, "Settlement").
 */
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const PATTERN = new RegExp(`^lnbcrt(\\d+)p1[${CHARSET}]{7}pp5([${CHARSET}]{52})[${CHARSET}]{6}$`);

function toWords(bytes: Buffer): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CHARSET[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CHARSET[(buffer << (5 - bits)) & 31];
  return out;
}

function fromWords(words: string): Buffer {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of words) {
    buffer = ((buffer << 5) | CHARSET.indexOf(char)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((buffer >> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

function timestampWords(seconds: number): string {
  let out = '';
  for (let i = 6; i >= 0; i--) out += CHARSET[Math.floor(seconds / 32 ** i) % 32];
  return out;
}

export interface NewInvoice {
  invoice: string;
  paymentHash: string;
  preimage: string;
  amountMsats: number;
}

/** A fresh preimage and the invoice that commits to its hash, for `amountMsats`. */
export function createInvoice(amountMsats: number, nowMs: number): NewInvoice {
  const preimage = randomBytes(32);
  const hash = createHash('sha256').update(preimage).digest();
  const body = `lnbcrt${BigInt(amountMsats) * 10n}p1${timestampWords(Math.floor(nowMs / 1000))}pp5${toWords(hash)}`;
  const check = toWords(createHash('sha256').update(body).digest()).slice(0, 6);
  return { invoice: `${body}${check}`, paymentHash: hash.toString('hex'), preimage: preimage.toString('hex'), amountMsats };
}

/** The payment hash and amount of an invoice made by createInvoice; undefined for anything else. */
export function parseInvoice(invoice: string): { paymentHash: string; amountMsats: number } | undefined {
  const match = PATTERN.exec(invoice);
  if (!match) return undefined;
  const picoBtc = BigInt(match[1]);
  if (picoBtc % 10n !== 0n) return undefined;
  return { paymentHash: fromWords(match[2]).subarray(0, 32).toString('hex'), amountMsats: Number(picoBtc / 10n) };
}

/** Whether `preimage` (hex) is the one `paymentHash` commits to. */
export function preimageMatches(preimage: string, paymentHash: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(preimage)) return false;
  return createHash('sha256').update(Buffer.from(preimage, 'hex')).digest('hex') === paymentHash;
}
