/**
 * Embedded-wallet client helpers: what a browser, a mobile app or a test needs to hold a session.
 * No server code and no Node-only APIs (WebCrypto, @noble/curves, @hpke/core, bs58check), so the
 * same module runs in Node 20 and in browsers.
 *
 *   const client = generateClientKeyPair();             // send client.publicKey as clientPublicKey
 *   const session = await decryptSessionKey(response.encryptedSessionSigningKey, client.privateKey);
 *   headers['Service-Wallet-Signature'] = signPayload(challenge.payloadToSign, session);  // or buildStamp(…)
 *   headers['Request-Id'] = challenge.requestId;
 */
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { p256 } from '@noble/curves/nist.js';
import bs58check from 'bs58check';

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode('turnkey_hpke');

/** A P-256 key pair as hex: `publicKey` is uncompressed SEC1 (130 characters, `04…`). */
export interface ClientKeyPair {
  privateKey: string;
  publicKey: string;
}

/** A decrypted session key: `publicKey` is compressed (66 characters), as stamps carry it. */
export interface SessionKey {
  privateKey: string;
  publicKey: string;
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function fromHex(hex: string): Uint8Array {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error('not a hex string');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function toBase64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A fresh key pair for `clientPublicKey` (verify, passkey challenge, export). Use it once. */
export function generateClientKeyPair(): ClientKeyPair {
  const { secretKey, publicKey } = p256.keygen();
  return { privateKey: toHex(secretKey), publicKey: toHex(p256.Point.fromBytes(publicKey).toBytes(false)) };
}

/** The session key pair from its private half (hex). */
export function sessionKeyFromPrivateKey(privateKey: string): SessionKey {
  return { privateKey, publicKey: toHex(p256.getPublicKey(fromHex(privateKey), true)) };
}

/** Opens an HPKE message sealed to the client key: enc is the uncompressed ephemeral key. */
async function open(clientPrivateKey: string, enc: Uint8Array, ciphertext: Uint8Array): Promise<Uint8Array> {
  const secret = fromHex(clientPrivateKey);
  const recipientKey = await suite.kem.deserializePrivateKey(secret);
  const recipientPublic = p256.getPublicKey(secret, false);
  const recipient = await suite.createRecipientContext({ recipientKey, enc, info: INFO });
  return new Uint8Array(await recipient.open(ciphertext, concat(enc, recipientPublic)));
}

/** Decrypts `encryptedSessionSigningKey` with the private key of the `clientPublicKey` sent on verify. */
export async function decryptSessionKey(encryptedSessionSigningKey: string, clientPrivateKey: string): Promise<SessionKey> {
  const bundle = bs58check.decode(encryptedSessionSigningKey);
  if (bundle.length <= 33) throw new Error('the bundle is too short');
  const enc = p256.Point.fromBytes(bundle.subarray(0, 33)).toBytes(false);
  const plaintext = await open(clientPrivateKey, enc, bundle.subarray(33));
  return sessionKeyFromPrivateKey(toHex(plaintext));
}

/** Format (a) of `Service-Wallet-Signature`: base64 DER ECDSA P-256/SHA-256 over the exact payload bytes. */
export function signPayload(payloadToSign: string, session: SessionKey): string {
  const signature = p256.sign(new TextEncoder().encode(payloadToSign), fromHex(session.privateKey), { format: 'der' });
  return toBase64(signature);
}

/** Format (b): an API-key stamp, base64url(JSON {publicKey, scheme, signature}) with a DER hex signature. */
export function buildStamp(payloadToSign: string, session: SessionKey): string {
  const signature = p256.sign(new TextEncoder().encode(payloadToSign), fromHex(session.privateKey), { format: 'der' });
  const stamp = { publicKey: session.publicKey, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature: toHex(signature) };
  return toBase64url(new TextEncoder().encode(JSON.stringify(stamp)));
}

/** Headers of a signed retry. */
export function signedRetryHeaders(challenge: { payloadToSign: string; requestId: string }, session: SessionKey, format: 'signature' | 'stamp' = 'stamp') {
  const signature = format === 'stamp' ? buildStamp(challenge.payloadToSign, session) : signPayload(challenge.payloadToSign, session);
  return { 'Service-Wallet-Signature': signature, 'Request-Id': challenge.requestId };
}

/**
 * Decrypts `encryptedWalletCredentials` from an export and returns the wallet mnemonic. Pass the
 * export signer key you trust (`embeddedWallets.exportSignerPublicKey` in GET /config) to have the
 * bundle's signature checked before decrypting.
 */
export async function decryptWalletExport(
  encryptedWalletCredentials: string,
  clientPrivateKey: string,
  expected: { signerPublicKey?: string; organizationId?: string } = {},
): Promise<string> {
  const bundle = JSON.parse(encryptedWalletCredentials) as { data: string; dataSignature: string; enclaveQuorumPublic: string };
  const data = fromHex(bundle.data);
  if (expected.signerPublicKey !== undefined) {
    if (bundle.enclaveQuorumPublic.toLowerCase() !== expected.signerPublicKey.toLowerCase()) throw new Error('the bundle is signed by an unexpected key');
    const valid = p256.verify(fromHex(bundle.dataSignature), data, fromHex(bundle.enclaveQuorumPublic), { format: 'der' });
    if (!valid) throw new Error('the bundle signature does not verify');
  }
  const signed = JSON.parse(new TextDecoder().decode(data)) as { encappedPublic: string; ciphertext: string; organizationId: string };
  if (expected.organizationId !== undefined && signed.organizationId !== expected.organizationId) throw new Error('the bundle is for another wallet');
  return new TextDecoder().decode(await open(clientPrivateKey, fromHex(signed.encappedPublic), fromHex(signed.ciphertext)));
}
