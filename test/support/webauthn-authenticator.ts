import { createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import { generateEcKeyPair } from '../../src/core/ec-keys.js';

/**
 * A software WebAuthn authenticator for tests: one P-256 (ES256) credential, "none" attestation,
 * a signature counter that moves on every assertion. Outputs use the API's field names
 * (clientDataJson, …), every binary value base64url.
 */

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor> | { [key: string]: Cbor };

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  if (length < 65536) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(length, 1);
  return out;
}

/** The CBOR subset authenticators emit: integers, text, bytes, arrays and maps. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

export interface Registration {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: string[];
}

export interface Assertion {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(32);
  readonly userHandle = randomBytes(16);
  counter = 0;
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };

  constructor(readonly options: { rpId: string; origin: string; userVerified?: boolean }) {
    const { privateKey, point } = generateEcKeyPair('P-256');
    this.privateKey = privateKey;
    this.publicJwk = { x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
  }

  private flags(extra: number): number {
    return 0x01 | (this.options.userVerified === false ? 0 : 0x04) | extra; // UP, UV
  }

  private authData(flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(this.options.rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: string, challenge: string, origin = this.options.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** `navigator.credentials.create()` for `challenge` (base64url). */
  register(challenge: string, overrides: { origin?: string } = {}): Registration {
    const coseKey = new Map<number, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(this.publicJwk.x, 'base64url')],
      [-3, Buffer.from(this.publicJwk.y, 'base64url')],
    ]);
    const idLength = Buffer.from([this.credentialId.length >> 8, this.credentialId.length & 0xff]);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, cbor(coseKey)]);
    const authData = this.authData(this.flags(0x40), this.counter, attested);
    return {
      credentialId: b64url(this.credentialId),
      clientDataJson: b64url(this.clientData('webauthn.create', challenge, overrides.origin)),
      attestationObject: b64url(cbor({ fmt: 'none', attStmt: {}, authData })),
      transports: ['internal', 'hybrid'],
    };
  }

  /** `navigator.credentials.get()` for `challenge`; the counter moves forward unless told otherwise. */
  assert(challenge: string, overrides: { origin?: string; counter?: number } = {}): Assertion {
    if (overrides.counter === undefined) this.counter++;
    const authData = this.authData(this.flags(0), overrides.counter ?? this.counter);
    const clientData = this.clientData('webauthn.get', challenge, overrides.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return {
      credentialId: b64url(this.credentialId),
      clientDataJson: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      userHandle: b64url(this.userHandle),
    };
  }
}

/** A registration challenge as a platform backend would issue it. */
export function newRegistrationChallenge(): string {
  return b64url(randomBytes(32));
}
