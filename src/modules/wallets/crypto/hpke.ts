import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import bs58check from 'bs58check';
import { compressPoint } from './keys.js';

/**
 * HPKE sealing as embedded-wallet clients expect it: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
 * AES-256-GCM, info "turnkey_hpke", aad = uncompressed enc ‖ recipient public key.
 */
const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode('turnkey_hpke');

export interface Sealed {
  /** Uncompressed ephemeral public key (65 bytes). */
  enc: Uint8Array;
  ciphertext: Uint8Array;
}

/** Seals `plaintext` to a client's P-256 public key (65-byte uncompressed point). */
export async function seal(recipient: Uint8Array, plaintext: Uint8Array): Promise<Sealed> {
  const recipientPublicKey = await suite.kem.deserializePublicKey(recipient);
  const sender = await suite.createSenderContext({ recipientPublicKey, info: INFO });
  const enc = new Uint8Array(sender.enc);
  const aad = Buffer.concat([enc, recipient]);
  const ciphertext = new Uint8Array(await sender.seal(plaintext, aad));
  return { enc, ciphertext };
}

/** `encryptedSessionSigningKey`: base58check(compressed enc (33 B) ‖ ciphertext). */
export async function sealCredentialBundle(recipient: Uint8Array, plaintext: Uint8Array): Promise<string> {
  const { enc, ciphertext } = await seal(recipient, plaintext);
  return bs58check.encode(Buffer.concat([compressPoint(enc), ciphertext]));
}
