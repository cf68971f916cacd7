import { randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A minimal DER writer for one thing: the self-signed X.509 v3 certificate that wraps a platform's
 * UMA public key (UMAD-02 exchanges keys as certificate chains; self-signed certificates are the
 * documented choice between parties that trust each other's domain). node:crypto parses
 * certificates but cannot create them.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

const sequence = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const bitString = (bytes: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));

function integer(bytes: Buffer): Buffer {
  // A leading 1 bit would make the number negative: prefix a zero byte.
  return tlv(0x02, bytes[0] & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [first * 40 + second];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return at.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const COMMON_NAME = '2.5.4.3';

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid(COMMON_NAME), utf8(commonName))));
}

export interface CertificateInput {
  /** Subject and issuer common name (the platform's UMA domain). */
  commonName: string;
  /** The key pair's public half as SubjectPublicKeyInfo DER. */
  spkiDer: Buffer;
  privateKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
}

/** A self-signed certificate, DER encoded, signed ECDSA/SHA-256 with the key it certifies. */
export function selfSignedCertificate(input: CertificateInput): Buffer {
  const serial = randomBytes(16);
  // Positive (top bit clear) and minimal (first byte not zero): strict DER parsers refuse padding.
  serial[0] = 0x40 | (serial[0] & 0x3f);
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_WITH_SHA256,
    name(input.commonName),
    sequence(time(input.notBefore), time(input.notAfter)),
    name(input.commonName),
    input.spkiDer,
  );
  const signature = sign('sha256', tbs, { key: input.privateKey, dsaEncoding: 'der' });
  return sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
}
